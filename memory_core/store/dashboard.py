"""The dashboard's reads (lists, tables, breakdowns) and what memory recorded for the scenario export (R32, R33)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import func, or_
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from .. import errors as E
from ..plain import Obj
from ..rules.shortcuts import DEFAULT_MIN_WEIGHT, shortcut_margin
from ..rules.visibility import evidence_elsewhere
from ..rules.weights import SourceBreakdown, breakdown, without_each_dispute, written_out
from ..rules.wording import claim_label, map_paragraph
from .drawing import fact_rows
from .driver import Driver, driver_of
from .facts import FactIdentity
from .graph import triple
from .lookups import RunRef, TurnRef, picked
from .models import (
    Dispute,
    Entity,
    Fact,
    Membership,
    NestedWork,
    Organization,
    Person,
    Record,
    Run,
    SettingsAudit,
    Support,
    Turn,
    TurnRead,
    Workflow,
)
from .past import entities_at, moments, settings_at
from .reads import of_turns
from .snapshot import settings_of


def record_json(r: Record, *, nested: str | int | None, **more: int | None) -> Obj:
    """A record as a run's page and the past list it: `nested` names its nested work, `more` follows."""
    fields = picked(r, "id number origin source excerpt reliability")
    return {**fields, "nested": nested, **more, "claims": list(r.claims)}


def organizations(s: Session) -> list[Obj]:
    """Every organization: id, name, owner."""
    owners = dict(s.exec(select(Membership.org_id, Membership.person_id).where(Membership.role == "owner")).all())
    return [
        {"id": o.id, "name": o.name, "owner": owners.get(o.id)}
        for o in s.exec(select(Organization).order_by(col(Organization.seq)))
    ]


def members(s: Session, org_id: str) -> list[Obj]:
    """The organization's people with their role (owner first)."""
    q = select(Person, Membership.role).join(Membership, col(Membership.person_id) == Person.id)
    rows = s.exec(q.where(Membership.org_id == org_id).order_by(col(Person.seq)))
    return sorted(({"id": p.id, "name": p.name, "role": role} for p, role in rows), key=lambda p: p["role"] != "owner")


def workflows(s: Session, org_id: str) -> list[Obj]:
    """The organization's workflows as the scenario format writes them (budget, steps)."""
    q = select(Workflow).where(Workflow.org_id == org_id).order_by(col(Workflow.id))
    budget = lambda w: {} if w.memory_probes is None else {"budget": {"MemoryProbes": w.memory_probes}}
    return [{"id": w.id, "org": w.org_id, "steps": list(w.steps), **budget(w)} for w in s.exec(q)]


def people(s: Session) -> list[Obj]:
    """Every person, with the organizations they belong to (and their role in each)."""
    roles: dict[str, dict[str, str]] = {}
    for person_id, org_id, role in s.exec(select(Membership.person_id, Membership.org_id, Membership.role)):
        roles.setdefault(person_id, {})[org_id] = role
    return [
        {"id": p.id, "name": p.name, "roles": roles.get(p.id, {})}
        for p in s.exec(select(Person).order_by(col(Person.seq)))
    ]


def run_ids(s: Session, org_id: str) -> list[str]:
    """The ids of the organization's stored runs, in the order they started (no turn read)."""
    return list(s.exec(select(Run.id).where(Run.org_id == org_id).order_by(col(Run.seq))))


#: A run's row in the Runs list: the columns shown, by the names shown.
RUN_ROW = picked(Run, "id person=person_id workflow=workflow_id surface ephemeral requested_ephemeral ended")


def runs(s: Session, org_id: str) -> list[Obj]:
    """The organization's runs with their turns' statuses, in the order they started (only the columns shown)."""
    shown = core_select(*(col(c) for c in RUN_ROW.values())).where(col(Run.org_id) == org_id).order_by(col(Run.seq))
    runs = s.connection().execute(shown).all()
    by_run: dict[str, list[Obj]] = {r.id: [] for r in runs}
    turns = select(Turn.run_id, Turn.id, Turn.status).join(Run, col(Run.id) == Turn.run_id)
    for run_id, turn_id, status in s.exec(turns.where(Run.org_id == org_id).order_by(col(Turn.seq))):
        by_run[run_id].append({"id": turn_id, "status": status})
    statuses = {run_id: dict(Counter(t["status"] for t in its)) for run_id, its in by_run.items()}
    return [{**dict(zip(RUN_ROW, r, strict=True)), "turns": by_run[r.id], "statuses": statuses[r.id]} for r in runs]


def facts_table(
    s: Session, org_id: str, *, person: str | None, limit: int | None, graphs: tuple[str, ...], fact: int | None
) -> list[Obj]:
    """Rows for Fact weights of the graphs asked for (R20), or (`fact`) that one fact's row, if it is in one of them."""
    runs = select(Run.id).where(Run.org_id == org_id)
    owners = {"world": col(Fact.owner) == org_id, "user": col(Fact.owner) == person, "flow": col(Fact.owner).in_(runs)}
    parts = [(col(Fact.graph) == g) & owners[g] for g in owners if g in graphs and (person or g != "user")]
    if not parts:
        return []
    where = or_(*parts)
    if fact is not None:
        where = where & (col(Fact.id) == fact)
    return fact_rows(s, where, limit=limit or None)  # the heaviest, their supports counted, not loaded


def fact_breakdown(s: Session, fact_id: int, *, min_weight: float = DEFAULT_MIN_WEIGHT, org: str | None = None) -> Obj:
    """A weight explained: sources, supports, disputes, each weight without it, the arithmetic (R26, R24, R29, R22)."""
    fact = s.get(Fact, fact_id)
    if fact is None:
        raise E.UnknownFact(fact_id)
    q = select(Support, Record.excerpt, Record.source, Run.org_id).where(Support.fact_id == fact_id)
    q = q.join(Record, col(Record.id) == Support.record_id, isouter=True)
    sups = s.exec(q.join(Run, col(Run.id) == Record.run_id, isouter=True).order_by(col(Support.id))).all()
    by = select(Dispute, Person.name).join(Person, col(Person.id) == Dispute.by, isouter=True)
    voted = s.exec(by.where(Dispute.fact_id == fact_id).order_by(col(Dispute.id))).all()
    against = [d.contribution for d, _ in voted]
    rows = breakdown([(p.origin, p.key, p.contribution, p.record_id is None) for p, *_ in sups], against)
    folded = [r.contribution for r in rows]
    margin, margin_why = shortcut_margin(status=fact.status, weight=fact.weight, min_weight=min_weight)
    supports = [_support(p, excerpt, source, run_org, org) for p, excerpt, source, run_org in sups]
    return {
        "fact": fact_rows(s, col(Fact.id) == fact_id)[0],
        "sources": _sources(rows, [p for p, *_ in sups], supports),
        "supports": supports,
        "disputes": [
            {"by": d.by, "name": name, "contribution": d.contribution, "weight_without": w}
            for (d, name), w in zip(voted, without_each_dispute(folded, against), strict=True)
        ],
        "arithmetic": written_out(folded, against, status=fact.status),
        "min_weight": min_weight,
        "margin": margin,
        "margin_why": margin_why,
    }


def _sources(rows: list[SourceBreakdown], sups: list[Support], shown: list[Obj]) -> list[Obj]:
    """Each source of the weight; its key withheld unless a support of it is shown here (R23)."""
    here = {(p.origin, p.key) for p, one in zip(sups, shown, strict=True) if not one["elsewhere"]}
    return [{**r.__dict__, "key": r.key if (r.origin, r.key) in here else None} for r in rows]


def _support(p: Support, excerpt: str | None, source: str | None, run_org: str | None, org: str | None) -> Obj:
    """One support as Fact weights shows it; evidence of another organization's run withheld (R23)."""
    elsewhere = evidence_elsewhere(run_org or p.erased_run_org, reader_org=org)
    hidden = dict.fromkeys(("key", "run", "turn", "record", "source", "excerpt")) if elsewhere else {}
    shown = picked(p, "key origin contribution run=run_id turn=turn_id record=record_id")
    return {**shown, "source": source, "excerpt": excerpt, **hidden, "elsewhere": elsewhere}


def turn_view(s: Session, turn: TurnRef, run: RunRef) -> Obj:
    """What a turn's instructions carry (R18) and its reads so far against its budget (R21)."""
    org = s.get_one(Organization, run.org_id)
    wf = s.get(Workflow, run.workflow_id) if run.workflow_id else None
    work = s.exec(select(NestedWork).where(NestedWork.turn_id == turn.id).order_by(col(NestedWork.id))).all()
    return {
        **picked(turn, "turn=id"),
        **picked(run, "run=id org=org_id person=person_id"),
        **picked(turn, "status map"),
        "paragraph": map_paragraph(org.name, turn.map.get("kinds", {}), turn.map.get("facts", 0)),
        "probes_used": turn.probes_used,
        "cap": wf.memory_probes if wf else None,
        "steps": wf.steps if wf else [],
        "work": [picked(w, "work status") for w in work],
    }


def run_detail(s: Session, org_id: str, run_id: str) -> Obj:
    """One run of the organization as the Runs page shows it, every turn and record (R2, R4, R5, R18, R21, R22, R24)."""
    run = s.get(Run, run_id)
    if run is None or run.org_id != org_id:
        raise E.UnknownRun(run_id)
    wf = s.get(Workflow, run.workflow_id) if run.workflow_id else None
    turns = s.exec(select(Turn).where(Turn.run_id == run_id).order_by(col(Turn.seq))).all()
    work: dict[str, list[NestedWork]] = {t.id: [] for t in turns}  # each turn's nested calls, in order
    for w in s.exec(select(NestedWork).where(col(NestedWork.turn_id).in_(list(work))).order_by(col(NestedWork.id))):
        work[w.turn_id].append(w)
    records = _records(s, run_id, work)
    return {
        **picked(run, "id person=person_id workflow=workflow_id surface requested_ephemeral ephemeral ended"),
        "cap": wf.memory_probes if wf else None,
        "turns": [_turn_detail(t, records[t.id], work[t.id]) for t in turns],
    }


def _records(s: Session, run_id: str, work: dict[str, list[NestedWork]]) -> dict[str, list[Obj]]:
    """A run's records by turn, in number order, each naming its nested call and its place among the calls (R4, R5)."""
    calls = {w.id: (w.work, i) for its in work.values() for i, w in enumerate(its)}
    by_turn: dict[str, list[Obj]] = {t: [] for t in work}
    for r in s.exec(select(Record).where(Record.run_id == run_id).order_by(col(Record.turn_id), col(Record.number))):
        nested, call = calls.get(r.nested_id, (None, None))
        by_turn[r.turn_id].append(record_json(r, nested=nested, call=call))
    return by_turn


def _turn_detail(t: Turn, records: list[Obj], work: list[NestedWork]) -> Obj:
    """One turn as the Runs page shows it (run_detail)."""
    return {
        **picked(t, "id seq status map"),
        "taught": {"world": t.taught_world, "user": t.taught_user, "flow": t.taught_flow},
        "skipped": [_kept_out(k, records) for k in t.skipped],
        "steps": list(t.steps),
        "probes_used": t.probes_used,
        "work": [picked(w, "work status") for w in work],
        "records": records,
    }


def _kept_out(skipped: Obj, records: list[Obj]) -> Obj:
    """A claim a completed turn kept out of a graph (R8 to R10), with what it says."""
    claims: list[Obj] = next((r["claims"] for r in records if r["id"] == skipped.get("record")), [])
    i = skipped.get("claim")
    label = claim_label(claims[i]) if isinstance(i, int) and 0 <= i < len(claims) else ""
    return {**skipped, "label": label}


def counts(s: Session) -> Obj:
    """How much the database holds: for the sidebar and progress."""
    return {
        t.__name__.lower(): int(s.exec(select(func.count()).select_from(t)).one())
        for t in (Organization, Person, Run, Entity, Fact, Support)
    }


# --- runs at a glance (#39.5): an organization's newest runs and their newest turns, each turn's status, records
# and reads in order, in four small queries whatever memory's size (the Overview at 112k facts)

#: What live pages show moves with it (#39): a moment (every use case that changes memory, R32: none is deleted), a
#: record in an open turn, a read kept, an MCP session opened or ended; an MCP server's heartbeat (agentserver) with
#: none. Counts, not largest ids: PostgreSQL's sequences commit out of order.
_SHOWN = """SELECT (SELECT count(*) FROM moment), (SELECT count(*) FROM record), (SELECT count(*) FROM turnread),
(SELECT count(*) FROM agentsession), (SELECT count(ended_at) FROM agentsession)"""


def shown(db: Driver) -> str:
    """A token of what live pages show: moves with a change they show, not with an MCP server's heartbeat (#39)."""
    return ":".join(str(n) for n in db.rows(_SHOWN, {})[0])


def timeline(s: Session, org_id: str, *, runs: int, turns: int) -> Obj:
    """The `runs` newest runs (newest first), their `turns` newest turns, and how many of each there are."""
    total = s.exec(select(func.count()).select_from(Run).where(Run.org_id == org_id)).one()
    newest = s.exec(
        select(Run.id, Run.person_id, Run.ended).where(Run.org_id == org_id).order_by(col(Run.seq).desc()).limit(runs)
    ).all()
    ids = [r[0] for r in newest]
    in_runs = col(Turn.run_id).in_(ids)
    of_runs = s.exec(select(func.count()).select_from(Turn).where(in_runs)).one()
    newest_turns = core_select(*(col(c) for c in (Turn.id, Turn.run_id, Turn.seq, Turn.status, Turn.next_record)))
    rows = s.connection().execute(newest_turns.where(in_runs).order_by(col(Turn.seq).desc()).limit(turns)).all()
    shown = [t.id for t in rows]
    asked = select(Record.turn_id, Record.excerpt).where(col(Record.turn_id).in_(shown), Record.number == 0)
    request = dict(s.exec(asked).all())
    reads: dict[str, list[Obj]] = {t: [] for t in shown}
    made = select(TurnRead.turn_id, TurnRead.records, TurnRead.call, TurnRead.outcome).order_by(col(TurnRead.id))
    for turn_id, records, call, outcome in s.exec(made.where(col(TurnRead.id).in_(of_turns(shown)))):
        reads[turn_id].append({"records": records, "call": call, "outcome": outcome})
    by_run: dict[str, list[Obj]] = {i: [] for i in ids}
    for t in reversed(rows):  # oldest first within a run
        turn = picked(t, "id seq status records=next_record") | {"request": request.get(t.id)}
        by_run[t.run_id].append(turn | {"reads": reads[t.id]})
    out = [{"id": i, "person": p, "ended": e, "turns": by_run[i]} for i, p, e in newest]
    return {"runs": out, "runs_total": int(total), "turns_total": int(of_runs)}


# --- what memory recorded, for the scenario export (usecases/export.py): erased is gone -----------


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
    out = setup_of(s, org=org)
    audit = select(SettingsAudit).order_by(col(SettingsAudit.moment), col(SettingsAudit.id))
    if org is not None:
        audit = audit.where(SettingsAudit.org_id == org)
    out.changes = [picked(a, "moment org=org_id by setting new") for a in s.exec(audit)]
    runs = select(Run).order_by(col(Run.seq))
    if run is not None:
        runs = runs.where(Run.id == run)
    elif org is not None:
        runs = runs.where(Run.org_id == org)
    out.runs = [
        picked(r, "id org=org_id person=person_id workflow=workflow_id surface requested_ephemeral")
        for r in s.exec(runs)
    ]
    _turns(s, out)
    out.moments = moments(s, org=org, run=run)
    for moment in out.moments:
        if moment["what"] in ("dispute", "retract") and moment["facts"]:
            out.facts[moment["n"]] = fact_at(s, moment["facts"][0], moment["n"])
    return out


def setup_of(s: Session, *, org: str | None = None) -> Recorded:
    """The organizations in scope (owner, settings as made, workflows), every person's memberships: a setup file's."""
    out = Recorded()
    for o in organizations(s):
        if org is None or o["id"] == org:
            row = s.get_one(Organization, o["id"])
            made = settings_at(s, row.id, settings_of(row), row.since)  # each later change undone (R32)
            out.orgs.append({**o, "settings": made})
            out.workflows += workflows(s, row.id)
    out.people = [{"id": p["id"], "name": p["name"], "memberships": p["roles"]} for p in people(s)]
    return out


def _turns(s: Session, out: Recorded) -> None:
    """The runs' turns, their records in number order and their nested work in call order."""
    run_ids = [r["id"] for r in out.runs]
    if not run_ids:
        return
    turns = s.exec(select(Turn).where(col(Turn.run_id).in_(run_ids)).order_by(col(Turn.seq))).all()
    out.turns = [{"id": t.id, "run": t.run_id, "status": t.status, "steps": list(t.steps)} for t in turns]
    out.records = {t.id: [] for t in turns}
    records = select(Record).where(col(Record.run_id).in_(run_ids))
    for r in s.exec(records.order_by(col(Record.turn_id), col(Record.number))):
        out.records[r.turn_id].append(record_json(r, nested=r.nested_id))
    work = select(NestedWork).join(Turn, col(Turn.id) == NestedWork.turn_id).where(col(Turn.run_id).in_(run_ids))
    for w in s.exec(work.order_by(col(NestedWork.id))):
        assert w.id is not None
        out.work[w.id] = {"id": w.id, "turn": w.turn_id, "work": w.work, "status": w.status}


def fact_at(s: Session, fact_id: int, n: int) -> Obj | None:
    """The fact with this id as it stood at moment `n` (R3), as a scenario names it; None if it was not there."""
    cols, at = "id, graph, owner, subject_id, relation, object_id, value", "id = :f AND since <= :n"
    with driver_of(s) as db:
        sql = f"SELECT {cols} FROM fact WHERE {at} UNION ALL SELECT {cols} FROM factgone WHERE {at} AND until > :n"
        rows = db.rows(sql, {"f": fact_id, "n": n})
    fact = FactIdentity(*rows[0]) if rows else None
    ends = entities_at(s, n, fact.entity_ids) if fact else {}
    if fact is None or any(i not in ends for i in fact.entity_ids):
        return None
    return triple(fact, lambda i: {"name": ends[i]["name"], "kind": ends[i]["kind"]})
