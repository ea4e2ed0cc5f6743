"""The dashboard's reads: lists, tables, breakdowns, each one query set on a session the use case opens."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from .. import errors as E
from ..rules.shortcuts import DEFAULT_MIN_WEIGHT
from ..rules.weights import breakdown
from ..rules.wording import map_paragraph
from .models import (
    Dispute,
    Entity,
    Fact,
    Membership,
    NestedWork,
    Organization,
    Person,
    Run,
    Support,
    Turn,
    Workflow,
)
from .snapshot import fact_items

Obj = dict[str, Any]


def organizations(s: Session) -> list[Obj]:
    """Every organization: id, name, owner."""
    owners = dict(s.exec(select(Membership.org_id, Membership.person_id).where(Membership.role == "owner")).all())
    return [
        {"id": o.id, "name": o.name, "owner": owners.get(o.id)}
        for o in s.exec(select(Organization).order_by(col(Organization.seq)))
    ]


def members(s: Session, org_id: str) -> list[Obj]:
    """The organization's people with their role (owner first)."""
    rows = s.exec(
        select(Person, Membership.role)
        .join(Membership, col(Membership.person_id) == Person.id)
        .where(Membership.org_id == org_id)
        .order_by(col(Person.seq))
    )
    people = [{"id": p.id, "name": p.name, "role": role} for p, role in rows]
    return sorted(people, key=lambda p: p["role"] != "owner")


def runs(s: Session, org_id: str) -> list[Obj]:
    """The organization's stored runs with their turns' statuses, in the order they started."""
    runs = s.exec(select(Run).where(Run.org_id == org_id).order_by(col(Run.seq))).all()
    turns = s.exec(select(Turn).where(col(Turn.run_id).in_([r.id for r in runs])).order_by(col(Turn.seq))).all()
    by_run: dict[str, list[Obj]] = {r.id: [] for r in runs}
    for t in turns:
        by_run[t.run_id].append({"id": t.id, "status": t.status})
    return [
        {
            "id": r.id,
            "person": r.person_id,
            "workflow": r.workflow_id,
            "surface": r.surface,
            "ephemeral": r.ephemeral,
            "requested_ephemeral": r.requested_ephemeral,
            "ended": r.ended,
            "turns": by_run[r.id],
            "statuses": dict(Counter(t["status"] for t in by_run[r.id])),
        }
        for r in runs
    ]


def facts_table(s: Session, org_id: str, *, person: str | None = None, limit: int | None = None) -> list[Obj]:
    """Rows for the Fact weights table: the World graph, the person's User graph, the runs' Flow graphs."""
    run_ids = list(s.exec(select(Run.id).where(Run.org_id == org_id)))
    where = (col(Fact.graph) == "world") & (col(Fact.owner) == org_id)
    if person:
        where = where | ((col(Fact.graph) == "user") & (col(Fact.owner) == person))
    if run_ids:
        where = where | ((col(Fact.graph) == "flow") & col(Fact.owner).in_(run_ids))
    query = select(Fact).where(where).order_by(col(Fact.weight).desc())
    facts = list(s.exec(query.limit(limit) if limit else query))
    return _rows(s, facts)


def fact_breakdown(s: Session, fact_id: int, *, min_weight: float = DEFAULT_MIN_WEIGHT) -> Obj:
    """A weight explained: each source with key, origin, reliability, contribution, repeats folded
    in, erased pointers, the weight without it, and the margin to the shortcut threshold (R22, R26)."""
    fact = s.get(Fact, fact_id)
    if fact is None:
        raise E.UnknownFact(fact_id)
    sups = s.exec(select(Support).where(Support.fact_id == fact_id).order_by(col(Support.id))).all()
    disputes = s.exec(select(Dispute).where(Dispute.fact_id == fact_id).order_by(col(Dispute.id))).all()
    rows = breakdown(
        [(p.origin, p.key, p.contribution, p.record_id is None) for p in sups],
        [d.contribution for d in disputes],
    )
    return {
        "fact": _rows(s, [fact])[0],
        "sources": [r.__dict__ for r in rows],
        "supports": [
            {
                "key": p.key,
                "origin": p.origin,
                "contribution": p.contribution,
                "run": p.run_id,
                "turn": p.turn_id,
                "record": p.record_id,
            }
            for p in sups
        ],
        "disputes": [{"by": d.by, "contribution": d.contribution} for d in disputes],
        "min_weight": min_weight,
        "margin": fact.weight - min_weight,
    }


def turn_view(s: Session, turn: Turn, run: Run) -> Obj:
    """What a turn's instructions carry (R18) and its reads so far against its budget (R21)."""
    org = s.get(Organization, run.org_id)
    wf = s.get(Workflow, run.workflow_id) if run.workflow_id else None
    work = s.exec(select(NestedWork).where(NestedWork.turn_id == turn.id).order_by(col(NestedWork.id))).all()
    assert org is not None
    return {
        "turn": turn.id,
        "run": run.id,
        "org": run.org_id,
        "person": run.person_id,
        "status": turn.status,
        "map": turn.map,
        "paragraph": map_paragraph(org.name, turn.map.get("kinds", {}), turn.map.get("facts", 0)),
        "probes_used": turn.probes_used,
        "cap": wf.memory_probes if wf else None,
        "steps": wf.steps if wf else [],
        "work": [{"work": w.work, "status": w.status} for w in work],
    }


def counts(s: Session) -> Obj:
    """How much the database holds: for the sidebar and progress."""
    return {
        t.__name__.lower(): int(s.exec(select(func.count()).select_from(t)).one())
        for t in (Organization, Person, Run, Entity, Fact, Support)
    }


def _rows(s: Session, facts: list[Fact]) -> list[Obj]:
    """Table rows: one a fact, with its counts and how many of its supports lost their pointer (R29)."""
    if not facts:
        return []
    erased = dict(
        s.exec(
            select(Support.fact_id, func.count())
            .where(col(Support.fact_id).in_([f.id for f in facts]), col(Support.record_id).is_(None))
            .group_by(col(Support.fact_id))
        ).all()
    )
    out = []
    for f, item in fact_items(s, facts):
        o = item["object"]
        out.append(
            {
                "id": f.id,
                "graph": f.graph,
                "owner": f.owner,
                "subject": item["subject"]["name"],
                "subject_kind": item["subject"]["kind"],
                "relation": f.relation,
                "object": o.get("name", o.get("value")),
                "object_kind": o.get("kind", "value"),
                "status": f.status,
                "weight": f.weight,
                "log_odds": f.log_odds,
                "sources": f.sources,
                "supports": len(item["supports"]),
                "disputes": len(item["disputes"]),
                "erased": int(erased.get(f.id or 0, 0)),
            }
        )
    return out
