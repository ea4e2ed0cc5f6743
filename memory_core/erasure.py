"""Erasure (R17, R29 to R31): runs and accounts go, what they contributed to weights stays."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, update
from sqlmodel import Session, col, select

from .graph import drop_graph
from .models import ApiToken, Dispute, Fact, Membership, NestedWork, Person, Record, Run, SettingsAudit, Support, Turn

Obj = dict[str, Any]


def run_preview(s: Session, run: Run) -> Obj:
    """What deleting a run erases and what stays (the dashboard's preview)."""
    flow_facts = s.exec(select(func.count()).select_from(Fact).where(Fact.graph == "flow", Fact.owner == run.id)).one()
    records = s.exec(select(func.count()).select_from(Record).where(Record.run_id == run.id)).one()
    turns = s.exec(select(func.count()).select_from(Turn).where(Turn.run_id == run.id)).one()
    kept = s.exec(
        select(func.count())
        .select_from(Support)
        .join(Fact, col(Fact.id) == Support.fact_id)
        .where(Support.run_id == run.id, Fact.graph != "flow")
    ).one()
    return {
        "run": run.id,
        "turns": int(turns),
        "records": int(records),
        "flow_facts": int(flow_facts),
        "supports_kept": int(kept),
    }


def erase_run(s: Session, run: Run) -> Obj:
    """R29: erase a run's records and Flow graph; its World and User supports keep key, origin and
    contribution, with the pointer set to null, so no weight changes."""
    summary = run_preview(s, run)
    drop_graph(s, "flow", run.id)
    s.exec(
        update(Support)
        .where(col(Support.run_id) == run.id)  # type: ignore[call-overload]
        .values(run_id=None, turn_id=None, record_id=None)
    )
    turn_ids = select(Turn.id).where(Turn.run_id == run.id)
    s.exec(delete(Record).where(col(Record.run_id) == run.id))  # type: ignore[call-overload]
    s.exec(delete(NestedWork).where(col(NestedWork.turn_id).in_(turn_ids)))  # type: ignore[call-overload]
    s.exec(delete(Turn).where(col(Turn.run_id) == run.id))  # type: ignore[call-overload]
    s.exec(delete(Run).where(col(Run.id) == run.id))  # type: ignore[call-overload]
    return summary


def account_preview(s: Session, person: Person) -> Obj:
    """What deleting an account erases (User graph, memberships) and what stays (its runs)."""
    user_facts = s.exec(
        select(func.count()).select_from(Fact).where(Fact.graph == "user", Fact.owner == person.id)
    ).one()
    runs = s.exec(select(Run.id).where(Run.person_id == person.id).order_by(col(Run.seq))).all()
    memberships = s.exec(select(Membership.org_id).where(Membership.person_id == person.id)).all()
    return {
        "person": person.id,
        "user_facts": int(user_facts),
        "memberships": list(memberships),
        "runs_kept": list(runs),
    }


def erase_account(s: Session, person: Person) -> Obj:
    """R30: the User graph and memberships go; runs stay with the person erased from them.

    Decision: a deleted person's disputes stay as votes without their author, as a deleted
    run's supports stay without their pointer (R29), so no weight changes."""
    summary = account_preview(s, person)
    drop_graph(s, "user", person.id)
    s.exec(delete(ApiToken).where(col(ApiToken.person_id) == person.id))  # type: ignore[call-overload]
    s.exec(delete(Membership).where(col(Membership.person_id) == person.id))  # type: ignore[call-overload]
    s.exec(update(Run).where(col(Run.person_id) == person.id).values(person_id=None))  # type: ignore[call-overload]
    s.exec(update(Dispute).where(col(Dispute.by) == person.id).values(by=None))  # type: ignore[call-overload]
    s.exec(update(SettingsAudit).where(col(SettingsAudit.by) == person.id).values(by=None))  # type: ignore[call-overload]
    s.exec(delete(Person).where(col(Person.id) == person.id))  # type: ignore[call-overload]
    return summary
