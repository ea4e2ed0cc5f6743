"""Runs, turns, their records and what they teach, as typed functions of the transaction (R1 to R10, R17, R22)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import func
from sqlmodel import Session, select

from .. import errors as E
from ..plain import Obj
from ..rules.learning import RunFacts, record_teaches, skip_rule
from ..rules.settings import SETTING_BY_NAME
from ..rules.weights import contribution, independence_key, reliability_of
from ..rules.wording import claim_label
from . import moments
from .dialect import for_update
from .driver import Driver, defaults_of, driver_of, insert, json_value
from .erasure import erase_run
from .facts import GraphWriter, StoredFact, refresh_facts, withdraw
from .graph import FactChanges
from .lookups import RunRef
from .models import Membership, NestedWork, Organization, Person, Record, Run, Turn, Workflow

T = TypeVar("T")

#: The turn a record is made in or that ends, its row locked until commit (R5, R1).
TURN_TO_CHANGE = for_update(
    """SELECT t.status, t.next_record, r.id, r.ended, r.org_id, r.person_id, r.surface, r.ephemeral,
 o.learn_from_ephemeral_runs, o.learn_from_users FROM turn t JOIN run r ON r.id = t.run_id
 JOIN organization o ON o.id = r.org_id WHERE t.id = :t""",
    of="t",
)


class TurnToChangeRow(NamedTuple):
    """A row of TURN_TO_CHANGE: the turn, its run, and the settings teaching reads (R8, R9, R16)."""

    status: str
    next_record: int
    run_id: str
    ended: bool
    org_id: str
    person_id: str | None
    surface: str
    ephemeral: bool
    learn_from_ephemeral_runs: bool
    learn_from_users: bool


class TurnToReplaceRow(NamedTuple):
    status: str
    run_id: str


#: A new turn: open_turn gives :id, :seq, :run_id, :map (JSON) and :opened_at (its moment, R32), the
#: model's defaults the rest (open, nothing recorded, counted or taught yet).
ADD_TURN = insert(Turn.__table__, defaults_of(Turn, but=("id", "seq", "run_id", "map", "opened_at")))  # type: ignore[attr-defined]
ADD_RECORD = insert(Record.__table__)  # type: ignore[attr-defined]


def _first(db: Driver, sql: str, params: Obj, row: Callable[..., T]) -> T | None:
    """The first row a statement finds, as `row` makes it, or None."""
    hit = db.rows(sql, params)
    return row(*hit[0]) if hit else None


# --- opening a turn (R3, R18) --------------------------------------------------------------------


def run_to_open(db: Driver, run_id: str) -> RunRef | None:
    """The run a turn is opened in, or None."""
    sql = f"SELECT {', '.join(f.name for f in fields(RunRef))} FROM run WHERE id = :r"
    return _first(db, sql, {"r": run_id}, RunRef)


def turn_to_replace(db: Driver, turn_id: str) -> TurnToReplaceRow | None:
    """The turn a new one replaces, its row locked until commit, or None."""
    sql = for_update("SELECT t.status, t.run_id FROM turn t WHERE t.id = :t", of="t")
    return _first(db, sql, {"t": turn_id}, TurnToReplaceRow)


def replace_turn(db: Driver, turn_id: str, changes: FactChanges, *, moment: int, taught: bool) -> None:
    """The turn is replaced: what it `taught` leaves, every fact touched recomputed (R3); history logs it."""
    if taught:
        supports = db.rows("SELECT id, fact_id FROM support WHERE turn_id = :t", {"t": turn_id})
        withdraw(db, [r[0] for r in supports], [r[1] for r in supports], changes, moment=moment)
    replaced = "UPDATE turn SET status = 'replaced', taught_world = 0, taught_user = 0, taught_flow = 0 WHERE id = :t"
    db.change(replaced, {"t": turn_id})
    moments.log_turn(db, turn_id, moment)


def add_turn(db: Driver, *, turn_id: str, run_id: str, taken: Obj, opened_at: int) -> None:
    """A new open turn of the run, holding the map it took (R18), numbered after the last turn."""
    seq = int(db.rows("SELECT coalesce(max(seq), -1) FROM turn", {})[0][0]) + 1  # an index look-up
    db.change(ADD_TURN, {"id": turn_id, "seq": seq, "run_id": run_id, "map": db.json(taken), "opened_at": opened_at})


# --- records (R5, R6) ----------------------------------------------------------------------------


class NewRecord(NamedTuple):
    """A record as the use case decided it: its number in the turn, who said it, what it claims."""

    turn_id: str
    run_id: str
    number: int
    origin: str
    source: str | None
    excerpt: str | None
    reliability: float | None
    nested_id: int | None
    claims: list[Obj]

    @property
    def id(self) -> str:
        return f"{self.turn_id}#{self.number}"


def add_record(tx: Session | Driver, record: NewRecord) -> str:
    """The one way a record is added: written, and the turn's next number moved past it."""
    with driver_of(tx) as db:
        db.change(ADD_RECORD, {**record._asdict(), "id": record.id, "claims": db.json(record.claims)})
        db.change("UPDATE turn SET next_record = :n WHERE id = :t", {"t": record.turn_id, "n": record.number + 1})
    if isinstance(tx, Session) and (turn := tx.get(Turn, record.turn_id)) is not None:
        tx.expire(turn, ["next_record"])
    return record.id


def turn_to_change(db: Driver, turn_id: str) -> TurnToChangeRow:
    """The turn a record is made in or that ends, and its run, its row locked until commit; else unknown_turn."""
    if (turn := _first(db, TURN_TO_CHANGE, {"t": turn_id}, TurnToChangeRow)) is None:
        raise E.UnknownTurn(turn_id)
    return turn


def open_work(tx: Session | Driver, turn_id: str, work: str) -> int | None:
    """The id of the turn's open nested work of that name, or None."""
    with driver_of(tx) as db:
        sql = "SELECT id FROM nestedwork WHERE turn_id = :t AND work = :w AND status = 'open'"
        return _first(db, sql, {"t": turn_id, "w": work}, int)


# --- ending a turn (R1, R2) ----------------------------------------------------------------------


def nested_of(db: Driver, turn_id: str) -> dict[int, str]:
    """The turn's nested work: id -> status."""
    sql = "SELECT id, status FROM nestedwork WHERE turn_id = :t"
    return {int(i): str(st) for i, st in db.rows(sql, {"t": turn_id})}


def end_turn(
    db: Driver, turn_id: str, status: str, *, moment: int, taught: Obj | None = None, skipped: Any = ()
) -> None:
    """The turn ends; a completed one with what it taught and skipped (R10, no labels), another with nothing (R2)."""
    sql = """UPDATE turn SET status = :st, taught_world = :world, taught_user = :user, taught_flow = :flow,
 skipped = :skipped WHERE id = :t"""
    taught = taught or {"world": 0, "user": 0, "flow": 0}
    db.change(sql, {**taught, "t": turn_id, "st": status, "skipped": db.json(list(skipped))})
    moments.log_turn(db, turn_id, moment)


# --- what a completed turn teaches (R1, R5, R7 to R10); replace_turn withdraws it (R3) ------------


@dataclass(frozen=True, slots=True)
class SkippedClaim:
    """One claim a completed turn kept out of a graph (R10): the record, the claim's index, the rule, its words."""

    record: str
    claim: int
    rule: str
    label: str

    def stored(self) -> Obj:
        """As the turn's row keeps it (`skipped`, and the state export): no label."""
        return {"record": self.record, "claim": self.claim, "rule": self.rule}

    def to_json(self) -> Obj:
        return {**self.stored(), "label": self.label}


@dataclass
class Teaching:
    """What one completed turn taught: supports per graph, claims kept out, fact changes."""

    taught: dict[str, int] = field(default_factory=lambda: {"world": 0, "user": 0, "flow": 0})
    skipped: list[SkippedClaim] = field(default_factory=list)  # one per claim kept out (R10)
    changes: FactChanges = field(default_factory=FactChanges)
    excluded_records: list[str] = field(default_factory=list)  # R5: of failed or cancelled nested work


#: A record's claim to write into a graph of an owner.
Write = tuple[NewRecord, Obj, str, str]


def plan(
    records: list[NewRecord], nested: dict[int, str], facts: RunFacts, turn: TurnToChangeRow
) -> tuple[list[Write], Teaching]:
    """Pure: which claim goes into which graph (R7 to R9), which are kept out and why (R10)."""
    result = Teaching()
    writes: list[Write] = []
    for rec in records:
        if not record_teaches(nested.get(rec.nested_id) if rec.nested_id is not None else None):
            result.excluded_records.append(rec.id)
            continue
        for i, claim in enumerate(rec.claims):
            writes.append((rec, claim, "flow", turn.run_id))  # R7: every claim into the run's Flow graph
            graph = claim["graph"]
            if graph == "flow":
                continue
            rule = skip_rule(graph, facts, origin=rec.origin)
            if rule:
                result.skipped.append(SkippedClaim(rec.id, i, rule, claim_label(claim)))  # R10
            else:
                writes.append((rec, claim, graph, turn.org_id if graph == "world" else turn.person_id or ""))
    return writes, result


SUPPORT_INSERT = (
    'INSERT INTO support (fact_id, "key", origin, contribution, run_id, turn_id, record_id, since) '
    "VALUES (:fact_id, :key, :origin, :contribution, :run_id, :turn_id, :record_id, :since)"
)


def teach(
    db: Driver, turn_id: str, turn: TurnToChangeRow, facts: RunFacts, nested: dict[int, str], *, moment: int
) -> Teaching:
    """R1: write everything a completed turn teaches, in a few batched statements on the driver (R5, R16, R32)."""
    sql = f"SELECT {', '.join(NewRecord._fields)} FROM record WHERE turn_id = :t ORDER BY number"
    records = [NewRecord(*r[:-1], json_value(r[-1])) for r in db.rows(sql, {"t": turn_id})]  # type: ignore[call-arg]
    writes, result = plan(records, nested, facts, turn)
    run_id = turn.run_id
    writer = GraphWriter(db, moment)
    triples = [(graph, owner, claim) for _, claim, graph, owner in writes]
    writer.load(triples)
    found = writer.facts_for(triples)
    seen: set[tuple[int, str]] = set()
    touched: dict[int, StoredFact] = {}
    rows = []
    for (rec, _, graph, _), fact in zip(writes, found, strict=True):
        if (fact.id, rec.id) in seen:
            continue  # one record, one support per fact
        seen.add((fact.id, rec.id))
        key = independence_key(rec.origin, rec.source, run_id=run_id)
        weight = contribution(reliability_of(rec.origin, rec.reliability))
        writer.pending.setdefault(fact.id, []).append((rec.origin, key, weight))
        row = dict(fact_id=fact.id, key=key, origin=rec.origin, contribution=weight, record_id=rec.id)
        rows.append({**row, "run_id": run_id, "turn_id": turn_id, "since": moment})
        result.taught[graph] += 1
        touched[fact.id] = fact
    refresh_facts(db, list(touched.values()), result.changes, moment=moment, writer=writer)
    db.many(SUPPORT_INSERT, rows)  # after the facts they point to
    return result


# --- the ORM's use cases of runs -----------------------------------------------------------------


def add_setup(s: Session, *, organizations: list[Obj], people: list[Obj], workflows: list[Obj], moment: int) -> None:
    """A checked scenario's organizations, people and workflows; an id already there is refused."""
    for model, rows in ((Organization, organizations), (Person, people)):
        base = int(s.exec(select(func.count()).select_from(model)).one())
        for i, row in enumerate(rows):
            if s.get(model, row["id"]) is not None:
                raise E.DuplicateId.exists(model.__name__.lower(), row["id"])
            settings = {SETTING_BY_NAME[name].column: value for name, value in row.get("settings", {}).items()}
            s.add(model(id=row["id"], name=row["name"], seq=base + i, since=moment, **settings))
    s.flush()
    for p in people:
        for org_id, role in p["memberships"].items():
            s.add(Membership(person_id=p["id"], org_id=org_id, role=role))
    for w in workflows:
        s.add(Workflow(id=w["id"], org_id=w["org"], memory_probes=w["memory_probes"], steps=w["steps"]))


def workflow(s: Session, workflow_id: str) -> Workflow | None:
    return s.get(Workflow, workflow_id)


class NewRun(NamedTuple):
    """A run as the use case decided it: `ephemeral` as stored, `requested_ephemeral` as asked (R11)."""

    id: str
    org_id: str
    person_id: str
    workflow_id: str | None
    surface: str
    requested_ephemeral: bool
    ephemeral: bool
    session_id: str | None


def add_run(s: Session, run: NewRun, *, moment: int) -> None:
    """A new run, numbered after the last, started at `moment` (R32)."""
    seq = int(s.exec(select(func.coalesce(func.max(Run.seq), -1))).one()) + 1  # an index look-up
    s.add(Run(seq=seq, started_at=moment, **run._asdict()))


def add_step(s: Session, turn_id: str, done: Obj) -> None:
    """A workflow step the turn ran or skipped (R22), after its earlier steps."""
    turn = s.get_one(Turn, turn_id)
    turn.steps = [*turn.steps, done]


def add_work(s: Session, turn_id: str, work: str) -> None:
    s.add(NestedWork(turn_id=turn_id, work=work))


def end_work(s: Session, nested_id: int, status: str) -> None:
    s.get_one(NestedWork, nested_id).status = status


def cancel_open_turns(s: Session, run_id: str) -> list[str]:
    """R17: the open turns of an ending run are cancelled, with their open nested work; their ids."""
    turns = s.exec(select(Turn).where(Turn.run_id == run_id, Turn.status == "open")).all()
    for turn in turns:
        for work in s.exec(select(NestedWork).where(NestedWork.turn_id == turn.id, NestedWork.status == "open")):
            work.status = "cancelled"
        turn.status = "cancelled"
    return [t.id for t in turns]


def end_run(s: Session, run_id: str, *, moment: int, erase: bool) -> None:
    """The run ends at `moment`; an ephemeral one is then erased (R17, R29)."""
    run = s.get_one(Run, run_id)
    run.ended, run.ended_at = True, moment
    if erase:
        s.flush()
        erase_run(s, RunRef.of(run))
