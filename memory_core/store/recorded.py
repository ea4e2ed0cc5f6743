"""What memory recorded, as plain rows, for the scenario export (usecases/export.py); erased is gone (R32, R33)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlmodel import Session, col, select

from ..plain import Obj
from .dashboard import organizations, people, record_json
from .dashboard import workflows as workflows_of
from .driver import driver_of
from .lookups import picked
from .models import NestedWork, Organization, Record, Run, SettingsAudit, Turn
from .past import entities_at, moments, settings_at
from .snapshot import settings_of


@dataclass
class Recorded:
    """Plain rows of what memory recorded, within one scope (everything, an organization, a run)."""

    orgs: list[Obj] = field(default_factory=list)  # id, name, owner, settings as made, in the order made
    changes: list[Obj] = field(default_factory=list)  # settings audit: moment, org, by, setting, new
    people: list[Obj] = field(default_factory=list)  # id, name, memberships {org: role}, in the order made
    workflows: list[Obj] = field(default_factory=list)  # as the scenario format writes them
    runs: list[Obj] = field(default_factory=list)  # in the order they started
    turns: list[Obj] = field(default_factory=list)  # in the order they opened: id, run, status, steps
    records: dict[str, list[Obj]] = field(default_factory=dict)  # by turn, in number order
    work: dict[int, Obj] = field(default_factory=dict)  # nested work by id (the order of the calls)
    moments: list[Obj] = field(default_factory=list)  # oldest first
    facts: dict[int, Obj | None] = field(default_factory=dict)  # by correction moment: the fact it named


def recorded(s: Session, *, org: str | None = None, run: str | None = None) -> Recorded:
    """What memory recorded: everything, one organization's (`org`) or one run's (`run`), which exist."""
    out = Recorded()
    _orgs_and_people(s, out, org=org)
    audit = select(SettingsAudit).order_by(col(SettingsAudit.moment), col(SettingsAudit.id))
    if org is not None:
        audit = audit.where(SettingsAudit.org_id == org)
    out.changes = [picked(a, "moment org=org_id by setting new") for a in s.exec(audit)]
    out.runs = _runs(s, org=org, run=run)
    if out.runs:
        _turns(s, out, [r["id"] for r in out.runs])
    out.moments = moments(s, org=org, run=run)
    for moment in out.moments:
        if moment["what"] in ("dispute", "retract") and moment["facts"]:
            out.facts[moment["n"]] = fact_at(s, moment["facts"][0], moment["n"])
    return out


def _orgs_and_people(s: Session, out: Recorded, *, org: str | None) -> None:
    """The organizations in scope (owner, settings as made, workflows); every person with their memberships."""
    for o in organizations(s):
        if org is None or o["id"] == org:
            row = s.get_one(Organization, o["id"])
            made = settings_at(s, row.id, settings_of(row), row.since)  # each later change undone (R32)
            out.orgs.append({**o, "settings": made})
            out.workflows += workflows_of(s, row.id)
    out.people = [{"id": p["id"], "name": p["name"], "memberships": p["roles"]} for p in people(s)]


def setup_of(s: Session) -> Recorded:
    """Every organization (settings as made), person and workflow: what a setup file is compared with."""
    out = Recorded()
    _orgs_and_people(s, out, org=None)
    return out


def _runs(s: Session, *, org: str | None, run: str | None) -> list[Obj]:
    """The runs of the scope, in the order they started, as the scenario export opens them."""
    runs = select(Run).order_by(col(Run.seq))
    if run is not None:
        runs = runs.where(Run.id == run)
    elif org is not None:
        runs = runs.where(Run.org_id == org)
    return [
        picked(r, "id org=org_id person=person_id workflow=workflow_id surface requested_ephemeral")
        for r in s.exec(runs)
    ]


def _turns(s: Session, out: Recorded, run_ids: list[str]) -> None:
    """The runs' turns, their records in number order and their nested work in call order."""
    turns = s.exec(select(Turn).where(col(Turn.run_id).in_(run_ids)).order_by(col(Turn.seq))).all()
    out.turns = [{"id": t.id, "run": t.run_id, "status": t.status, "steps": list(t.steps)} for t in turns]
    out.records = {t.id: [] for t in turns}
    for r in s.exec(
        select(Record).where(col(Record.run_id).in_(run_ids)).order_by(col(Record.turn_id), col(Record.number))
    ):
        out.records[r.turn_id].append(record_json(r, nested=r.nested_id))
    for w in s.exec(
        select(NestedWork)
        .join(Turn, col(Turn.id) == NestedWork.turn_id)
        .where(col(Turn.run_id).in_(run_ids))
        .order_by(col(NestedWork.id))
    ):
        assert w.id is not None
        out.work[w.id] = {"id": w.id, "turn": w.turn_id, "work": w.work, "status": w.status}


def fact_at(s: Session, fact_id: int, n: int) -> Obj | None:
    """The fact with this id as it stood at moment `n` (R3), as a scenario names it; None if it was not there."""
    with driver_of(s) as db:
        rows = db.rows(
            "SELECT subject_id, relation, object_id, value FROM fact WHERE id = :f AND since <= :n "
            "UNION ALL SELECT subject_id, relation, object_id, value FROM factgone "
            "WHERE id = :f AND since <= :n AND until > :n",
            {"f": fact_id, "n": n},
        )
    if not rows:
        return None
    subject_id, relation, object_id, value = rows[0]
    named = entities_at(s, n, [i for i in (subject_id, object_id) if i is not None])
    ends = {i: {"name": e["name"], "kind": e["kind"]} for i, e in named.items()}
    if subject_id not in ends or (object_id is not None and object_id not in ends):
        return None
    return {
        "subject": ends[subject_id],
        "relation": relation,
        "object": ends[object_id] if object_id is not None else {"value": value},
    }
