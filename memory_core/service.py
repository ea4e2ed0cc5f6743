"""The only door to memory: one method = one use case = one transaction.

Each method checks an action in the order rules.md gives (the ids it names exist, then
membership and role, then the state of the turn, run or nested work, then the budget),
raises the Refusal of the first failure with nothing changed, or applies the rules' pure
decisions and commits.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from . import errors as E
from . import probes, reads
from .db import driver_connection, make_engine, statement_driver, writer
from .driver import Driver, driver_of, json_value
from .erasure import after_erasure, erase_account, erase_run, erasure_status, finisher, heal
from .explore import ExploreMixin
from .graph import Changes, FactChange, find_fact, load_facts, map_counts, map_of, refresh_facts, withdraw
from .models import (
    Dispute,
    Membership,
    NestedWork,
    Organization,
    Person,
    Record,
    Run,
    SettingsAudit,
    Turn,
    UsedId,
    Workflow,
)
from .retry import use_case
from .rules import (
    SETTING_BY_NAME,
    RunFacts,
    budget_allows,
    map_paragraph,
    may_transition,
    read_offered,
    settings_problem,
    stored_ephemeral,
)
from .state import export, settings_of
from .teaching import teach
from .tokens import TokenMixin
from .weights import DISPUTE_CONTRIBUTION

Obj = dict[str, Any]


@dataclass
class Outcome:
    """What one use case did: fact changes graph by graph, and what it has to say."""

    changes: list[FactChange] = field(default_factory=list)
    detail: Obj = field(default_factory=dict)


class MemoryService(ExploreMixin, TokenMixin):
    """The facade over one database. Plain data in and out; never live ORM rows."""

    def __init__(self, engine: Engine | None = None) -> None:
        self.engine = engine if engine is not None else make_engine()
        self._write = writer(self.engine)
        self._sandbox: Session | None = None
        self.retries = 0  # conflicts with concurrent use cases that were retried (retry.py)
        self._erased = False  # inside one transaction: something was erased, to scrub after it
        heal(self.engine)  # R31: a deletion whose scrub a killed process never finished

    @contextmanager
    def _tx(self) -> Iterator[Session]:
        """One use case's transaction: committed at the end, rolled back by any error or refusal."""
        if self._sandbox is not None:
            with self._sandbox.begin_nested():  # a refusal rolls back this use case only
                yield self._sandbox
            return
        with Session(self._write, expire_on_commit=False) as s:
            yield s
            s.commit()

    @contextmanager
    def _read(self) -> Iterator[Session]:
        """A read-only use case: never takes a write lock."""
        if self._sandbox is not None:
            yield self._sandbox
            return
        with Session(self.engine, expire_on_commit=False) as s:
            yield s

    @contextmanager
    def sandbox(self) -> Iterator[MemoryService]:
        """A service whose use cases all happen in one transaction that is rolled back at the end:
        for what-ifs (what would this turn teach if it failed?) and previews, changing nothing."""
        with Session(self._write, expire_on_commit=False) as s:
            box = MemoryService(self.engine)
            box._sandbox = s
            try:
                yield box
            finally:
                s.rollback()

    @contextmanager
    def all_or_nothing(self) -> Iterator[MemoryService]:
        """A service whose use cases all happen in one transaction, committed when the block ends
        and rolled back by any error in it: a replay into a database keeps all of its file or
        none of it. SQLite holds the write lock from the first statement to the commit; a
        conflict with another writer aborts the whole (the caller may run it again)."""
        with Session(self._write, expire_on_commit=False) as s:
            box = MemoryService(self.engine)
            box._sandbox = s
            try:
                yield box
            except BaseException:
                s.rollback()
                raise
            s.commit()
        if box._erased:
            after_erasure(self.engine)  # what the box erased leaves the files now (R31)

    def _scrub_after(self, detail: Obj) -> None:
        """R31, right after a deletion committed: its text leaves the files now (SQLite's checkpoint)
        or in the background (PostgreSQL's rewrite, or a SQLite log a reader holds); the outcome
        says which (`bytes_gone`), and `erasure_status` says when it is done."""
        if self._sandbox is None:
            detail["bytes_gone"] = after_erasure(self.engine)
        else:
            self._erased = True  # all_or_nothing scrubs once its one transaction commits

    @use_case
    def erasure_status(self) -> Obj:
        """R31: whether every deletion's text is out of the database files yet."""
        return erasure_status(self.engine)

    @use_case
    def finish_erasure(self, timeout: float | None = None) -> Obj:
        """Wait for the background scrub of deletions (R31), then say where it stands."""
        finisher(self.engine).wait(timeout)
        return erasure_status(self.engine)

    # --- look-ups that refuse ------------------------------------------------------------

    @classmethod
    def _require_open(cls, turn: Turn, run: Run) -> None:
        cls._refuse_unless_open(turn.id, turn.status, run.id, run.ended)

    @staticmethod
    def _refuse_unless_open(turn_id: str, status: str, run_id: str, ended: bool) -> None:
        if ended:
            raise E.RunEnded(f"run {run_id!r} has ended; nothing more happens in it (R17)")
        if status != "open":
            why = {"completed": "a turn ends and teaches once (R1)", "replaced": "a replaced turn teaches nothing (R3)"}
            raise E.TurnNotOpen(
                f"turn {turn_id!r} is {status}, not open: {why.get(status, 'an ended turn takes no more events (R2)')}"
            )

    @staticmethod
    def _role(s: Session, person_id: str, org_id: str) -> str | None:
        m = s.get(Membership, (person_id, org_id))
        return m.role if m else None

    @staticmethod
    def _open_work(s: Session, turn_id: str, work: str) -> NestedWork | None:
        return s.exec(
            select(NestedWork).where(
                NestedWork.turn_id == turn_id, NestedWork.work == work, NestedWork.status == "open"
            )
        ).first()

    @staticmethod
    def _used(s: Session, kind: str, ident: str) -> None:
        if s.get(UsedId, (kind, ident)) is not None:
            raise E.DuplicateId(f"the {kind} id {ident!r} is already used in this memory, perhaps by an erased {kind}")
        s.add(UsedId(kind=kind, id=ident))

    # --- setup ---------------------------------------------------------------------------

    @use_case
    def load_setup(self, *, organizations: list[Obj], people: list[Obj], workflows: list[Obj]) -> None:
        """Create a checked scenario's organizations, people and workflows, in one transaction."""
        with self._tx() as s:
            base = int(s.exec(select(func.count()).select_from(Organization)).one())
            for i, o in enumerate(organizations):
                if s.get(Organization, o["id"]) is not None:
                    raise E.DuplicateId(f"organization {o['id']!r} already exists")
                org = Organization(id=o["id"], name=o["name"], seq=base + i)
                for name, value in o.get("settings", {}).items():
                    setattr(org, SETTING_BY_NAME[name].column, value)
                s.add(org)
            pbase = int(s.exec(select(func.count()).select_from(Person)).one())
            for i, p in enumerate(people):
                if s.get(Person, p["id"]) is not None:
                    raise E.DuplicateId(f"person {p['id']!r} already exists")
                s.add(Person(id=p["id"], name=p["name"], seq=pbase + i))
            s.flush()
            for p in people:
                for org_id, role in p["memberships"].items():
                    s.add(Membership(person_id=p["id"], org_id=org_id, role=role))
            for w in workflows:
                s.add(Workflow(id=w["id"], org_id=w["org"], memory_probes=w["memory_probes"], steps=w["steps"]))

    # --- runs and turns ------------------------------------------------------------------

    @use_case
    def start_run(
        self,
        run_id: str,
        *,
        org: str,
        person: str,
        workflow: str | None = None,
        surface: str = "workflow",
        ephemeral: bool = False,
    ) -> Outcome:
        """Start a run; an ephemeral request is honoured only as R11 allows."""
        with self._tx() as s:
            o = self._org(s, org)
            self._person(s, person)
            if workflow is not None:
                wf = s.get(Workflow, workflow)
                if wf is None or wf.org_id != org:
                    raise E.UnknownWorkflow(f"organization {org!r} has no workflow {workflow!r}")
            self._used(s, "run", run_id)
            if self._role(s, person, org) is None:
                raise E.NotMember(f"{person!r} is not a member of {org!r}, so cannot start a run there")
            stored = stored_ephemeral(requested=ephemeral, surface=surface, allow_ephemeral_runs=o.allow_ephemeral_runs)
            seq = int(s.exec(select(func.coalesce(func.max(Run.seq), -1))).one()) + 1  # an index look-up
            s.add(
                Run(
                    id=run_id,
                    seq=seq,
                    org_id=org,
                    person_id=person,
                    workflow_id=workflow,
                    surface=surface,
                    requested_ephemeral=ephemeral,
                    ephemeral=stored,
                )
            )
            detail: Obj = {"ephemeral": stored}
            if ephemeral and not stored:
                detail["rule"] = "R11"
            return Outcome(detail=detail)

    @use_case
    def open_turn(self, turn_id: str, *, run: str, request: Obj, replaces: str | None = None) -> Outcome:
        """Open a turn: withdraw the turn it replaces (R3), take the map (R18), record the request.
        It runs on the driver (driver.py), as the other use cases of a turn do."""
        with self._driver_tx(serializable=True) as db:
            hit = db.rows(probes.RUN_TO_OPEN, {"r": run})
            if not hit:
                raise E.UnknownRun(f"no run has the id {run!r} (or it was deleted, R29)")
            org_id, person_id, ended = hit[0]
            old = db.turn(probes.TURN_TO_REPLACE, replaces) if replaces is not None else None
            if old == []:
                raise E.UnknownTurn(f"no turn has the id {replaces!r} (or its run was deleted, R29)")
            if person_id is None:
                raise E.UnknownPerson(f"the person of run {run!r} deleted their account; no turn can open (R30)")
            if db.rows(probes.USED_ID, {"k": "turn", "i": turn_id}):
                raise E.DuplicateId(
                    f"the turn id {turn_id!r} is already used in this memory, perhaps by an erased turn"
                )
            db.change(probes.USE_ID, {"k": "turn", "i": turn_id})
            if ended:
                raise E.RunEnded(f"run {run!r} has ended; it opens no more turns (R17)")
            changes = Changes()
            if old:
                old_status, old_run = old[0]
                if old_run != run:
                    raise E.NotAllowed(f"turn {replaces!r} belongs to run {old_run!r}, not {run!r} (R3)")
                if not may_transition(old_status, "replaced"):
                    raise E.NotAllowed(
                        f"turn {replaces!r} is {old_status}; only an open or completed turn can be replaced (R3)"
                    )
                if old_status == "completed":
                    taught = db.rows("SELECT id, fact_id FROM support WHERE turn_id = :t", {"t": replaces})
                    withdraw(db, [r[0] for r in taught], [r[1] for r in taught], changes)
                db.change(probes.TURN_REPLACED, {"t": replaces})
            counters = dict(db.rows("SELECT kind, n FROM mapcount WHERE org_id = :o", {"o": org_id}))
            taken = map_of(counters)
            seq = int(db.rows("SELECT coalesce(max(seq), -1) FROM turn", {})[0][0]) + 1  # an index look-up
            db.change(probes.ADD_TURN, {"t": turn_id, "seq": seq, "r": run, "map": json.dumps(taken)})
            db.change(
                probes.ADD_RECORD,
                {
                    "id": f"{turn_id}#0",
                    "run": run,
                    "turn": turn_id,
                    "n": 0,
                    "origin": "person",
                    "source": person_id,
                    "excerpt": request["text"],
                    "rel": None,
                    "nested": None,
                    "claims": json.dumps(request.get("claims", [])),
                },
            )
            return Outcome(changes=changes.listed(), detail={"map": taken})

    @use_case
    def record(self, turn_id: str, *, record: Obj) -> Outcome:
        """Record evidence in an open turn, possibly within open nested work (R5). Agents record
        all the time, so this runs on the driver (probes.py), with the checks `_add_record` makes."""
        with self._driver_tx() as db:
            hit = db.turn(probes.TURN_TO_RECORD, turn_id)
            if not hit:
                raise E.UnknownTurn(f"no turn has the id {turn_id!r} (or its run was deleted, R29)")
            status, number, run_id, ended, person_id = hit[0]
            src: str | None = record.get("source")
            if record["origin"] == "person":
                src = src or person_id
                if src is None:
                    raise E.UnknownPerson(f"run {run_id!r} has no person any more to default the source to (R30)")
                if not db.rows(probes.PERSON, {"p": src}):
                    raise E.UnknownPerson(f"no person has the id {src!r} (or their account was deleted, R30)")
            self._refuse_unless_open(turn_id, status, run_id, bool(ended))
            nested_id = None
            if record.get("within") is not None:
                work = db.rows(probes.OPEN_WORK, {"t": turn_id, "w": record["within"]})
                if not work:
                    raise E.NestedNotOpen(f"{record['within']!r} is not open in turn {turn_id!r} (R5)")
                nested_id = work[0][0]
            rid = f"{turn_id}#{number}"
            row = {
                "id": rid,
                "run": run_id,
                "turn": turn_id,
                "n": number,
                "origin": record["origin"],
                "source": src,
                "excerpt": record.get("excerpt"),
                "rel": record.get("reliability"),
                "nested": nested_id,
                "claims": json.dumps(record.get("claims", [])),
            }
            db.change(probes.ADD_RECORD, row)
            db.change(probes.NEXT_RECORD, {"t": turn_id})
            return Outcome(detail={"record": rid})

    def _add_record(self, s: Session, turn: Turn, run: Run, record: Obj) -> str:
        src: str | None = record.get("source")
        if record["origin"] == "person":
            src = src or run.person_id
            if src is None:
                raise E.UnknownPerson(f"run {run.id!r} has no person any more to default the source to (R30)")
            self._person(s, src)
        self._require_open(turn, run)
        nested_id = None
        if record.get("within") is not None:
            work = self._open_work(s, turn.id, record["within"])
            if work is None:
                raise E.NestedNotOpen(f"{record['within']!r} is not open in turn {turn.id!r} (R5)")
            nested_id = work.id
        rid = f"{turn.id}#{turn.next_record}"
        s.add(
            Record(
                id=rid,
                run_id=run.id,
                turn_id=turn.id,
                number=turn.next_record,
                origin=record["origin"],
                source=src,
                excerpt=record.get("excerpt"),
                reliability=record.get("reliability"),
                nested_id=nested_id,
                claims=record.get("claims", []),
            )
        )
        turn.next_record += 1
        s.add(turn)
        return rid

    @use_case
    def run_step(self, turn_id: str, *, step: str, record: Obj | None = None) -> Outcome:
        """Run a workflow step, or skip it when memory already answers it well enough (R22)."""
        with self._tx() as s:
            turn, run = self._turn(s, turn_id)
            spec = self._step(s, run, step)
            if record is not None and record["origin"] == "person" and record.get("source"):
                self._person(s, record["source"])
            self._require_open(turn, run)
            org = self._org(s, run.org_id)
            answer = None
            if spec.get("answers"):
                answer = reads.shortcut(
                    s,
                    run,
                    spec["answers"],
                    min_weight=spec.get("min_weight", 0.9),
                    no_memory_shortcuts=org.no_memory_shortcuts,
                )
            detail: Obj = {"shortcut": answer}
            if answer is None and record is not None:
                detail["record"] = self._add_record(s, turn, run, record)
            turn.steps = [*turn.steps, {"step": step, "ran": answer is None, "shortcut": answer}]
            s.add(turn)
            return Outcome(detail=detail)

    @classmethod
    def _step(cls, s: Session, run: Run, step: str) -> Obj:
        wf = s.get(Workflow, run.workflow_id) if run.workflow_id else None
        return cls._step_of(wf.id if wf else None, wf.steps if wf else [], step)

    @staticmethod
    def _step_of(workflow_id: str | None, steps: list[Obj], step: str) -> Obj:
        for spec in steps:
            if spec["id"] == step:
                return spec
        where = f"workflow {workflow_id!r}" if workflow_id else "no workflow (the run was started without one)"
        raise E.UnknownStep(f"step {step!r} is not in the run's {where}")

    @use_case
    def call(self, turn_id: str, *, work: str) -> Outcome:
        """Open nested work inside a turn; it reads and writes no graph (R4)."""
        with self._tx() as s:
            turn, run = self._turn(s, turn_id)
            self._require_open(turn, run)
            if self._open_work(s, turn_id, work) is not None:
                raise E.NestedOpen(f"{work!r} is already open in turn {turn_id!r}; return it first (R5)")
            s.add(NestedWork(turn_id=turn_id, work=work))
            return Outcome()

    @use_case
    def return_work(self, turn_id: str, *, work: str, status: str) -> Outcome:
        """End nested work; failed or cancelled work will contribute nothing (R5)."""
        with self._tx() as s:
            turn, run = self._turn(s, turn_id)
            self._require_open(turn, run)
            nested = self._open_work(s, turn_id, work)
            if nested is None:
                raise E.NestedNotOpen(f"{work!r} is not open in turn {turn_id!r} (R5)")
            nested.status = status
            s.add(nested)
            return Outcome(detail={"rule": "R5"} if status != "completed" else {})

    @use_case
    def end_turn(self, turn_id: str, *, status: str) -> Outcome:
        """End a turn; only a completed one teaches, once, all or nothing (R1, R2). It runs on the
        driver (driver.py), as teaching's batched statements do."""
        with self._driver_tx(serializable=True) as db:
            hit = db.turn(probes.TURN_TO_END, turn_id)
            if not hit:
                raise E.UnknownTurn(f"no turn has the id {turn_id!r} (or its run was deleted, R29)")
            now, run_id, ended, org_id, person_id, surface, ephemeral, from_ephemeral, from_users = hit[0]
            self._refuse_unless_open(turn_id, now, run_id, bool(ended))
            nested: dict[int, str] = dict(db.rows(probes.NESTED_WORK, {"t": turn_id}))
            if "open" in nested.values():
                raise E.NestedOpen(f"turn {turn_id!r} still holds open nested work; return it first (R5)")
            if status != "completed":
                db.change("UPDATE turn SET status = :st WHERE id = :t", {"st": status, "t": turn_id})
                return Outcome(detail={"rule": "R2"})
            settings = RunFacts(  # R16: the settings as they stand now, when the teaching is written
                surface=surface,
                ephemeral=bool(ephemeral),
                person_erased=person_id is None,
                learn_from_ephemeral_runs=bool(from_ephemeral),
                learn_from_users=bool(from_users),
            )
            result = teach(db, turn_id, settings, nested, run_id=run_id, org_id=org_id, person_id=person_id)
            db.change(
                probes.TURN_TAUGHT,
                {
                    "t": turn_id,
                    "st": status,
                    "w": result.taught["world"],
                    "u": result.taught["user"],
                    "f": result.taught["flow"],
                    "skipped": json.dumps(result.skipped),
                },
            )
            return Outcome(
                changes=result.changes.listed(),
                detail={
                    "taught": result.taught,
                    "skipped": result.skipped,
                    "skipped_claims": result.skipped_claims,
                    "excluded_records": result.excluded_records,
                },
            )

    @use_case
    def end_run(self, run_id: str) -> Outcome:
        """End a run: cancel its open turns; an ephemeral run is then erased (R17)."""
        with self._tx() as s:
            run = self._run(s, run_id)
            if run.ended:
                raise E.RunEnded(f"run {run_id!r} has already ended (R17)")
            cancelled = []
            for turn in s.exec(select(Turn).where(Turn.run_id == run_id, Turn.status == "open")):
                for work in s.exec(
                    select(NestedWork).where(NestedWork.turn_id == turn.id, NestedWork.status == "open")
                ):
                    work.status = "cancelled"
                    s.add(work)
                turn.status = "cancelled"
                cancelled.append(turn.id)
                s.add(turn)
            run.ended = True
            s.add(run)
            detail: Obj = {"cancelled": cancelled, "erased": run.ephemeral}
            if run.ephemeral:
                s.flush()
                erase_run(s, run)
        if detail["erased"]:
            self._scrub_after(detail)
        return Outcome(detail=detail)

    @use_case
    def delete_run(self, run_id: str, *, by: str) -> Outcome:
        """R29: the run's person or the owner erases a run; its World and User weights stay."""
        with self._tx() as s:
            run = self._run(s, run_id)
            self._person(s, by)
            owner = self._role(s, by, run.org_id) == "owner"
            if by != run.person_id and not owner:
                raise E.NotAllowed(
                    f"only the run's person or the owner of {run.org_id!r} may delete run {run_id!r} (R29)"
                )
            if run.ended:  # R17 as written: any event on an ended run, deletion included
                raise E.RunEnded(f"run {run_id!r} has ended; R17 refuses any later event on it, deletion included")
            detail = erase_run(s, run)
        self._scrub_after(detail)
        return Outcome(detail=detail)

    @use_case
    def delete_account(self, person_id: str) -> Outcome:
        """R30: delete a person's User graph and memberships; their runs stay without them."""
        with self._tx() as s:
            person = self._person(s, person_id)
            owned = s.exec(
                select(Membership.org_id).where(Membership.person_id == person_id, Membership.role == "owner")
            ).all()
            if owned:
                raise E.NotAllowed(f"{person_id!r} owns {', '.join(owned)}; an owner's account cannot be deleted (R30)")
            detail = erase_account(s, person)
        self._scrub_after(detail)
        return Outcome(detail=detail)

    # --- reads (R18 to R23) --------------------------------------------------------------

    @use_case
    def read(
        self, turn_id: str, *, call: str, args: Obj, within: str | None = None, step: str | None = None
    ) -> Outcome:
        """A graph read by a turn: offered (R4, R19), within budget (R21), of visible graphs (R20).
        It runs on the driver (probes.py): the turn check, one query, the count, one transaction.
        On PostgreSQL a turn-level GraphResolve or GraphExpand is one statement (probes.counted_read)."""
        turn_level = within is None and step is None and call in ("GraphResolve", "GraphExpand")
        if turn_level and self._sandbox is None and self.engine.dialect.name == "postgresql":
            with statement_driver(self.engine) as one:
                done = probes.counted_read(one, turn_id, call, args)
            if done is not None:
                used, cap, result = done
                return Outcome(detail={"result": result, "probes_used": used, "cap": cap})
        with self._driver_tx() as db:
            hit = db.turn(probes.TURN, turn_id)
            if not hit:
                raise E.UnknownTurn(f"no turn has the id {turn_id!r} (or its run was deleted, R29)")
            status, used, run_id, ended, org_id, person_id, wf_id, cap, steps = hit[0]
            spec = self._step_of(wf_id, json_value(steps) if wf_id else [], step) if step is not None else None
            self._refuse_unless_open(turn_id, status, run_id, bool(ended))
            if within is not None and not db.rows(probes.OPEN_WORK, {"t": turn_id, "w": within}):
                raise E.NestedNotOpen(f"{within!r} is not open in turn {turn_id!r} (R5)")
            if not read_offered(within=within, step=spec):
                who = f"nested work {within!r}" if within else f"step {step!r} (not a model step admitting calls)"
                raise E.NotOffered(f"graph reads are not offered to {who} (R4, R19)")
            if not budget_allows(used=used, cap=cap):
                raise self._exhausted(turn_id, cap)
            seen = probes.owners(run_id, org_id, person_id)
            if call == "GraphResolve":
                result = probes.resolve(db, seen, args["name"], args.get("kind"))
            elif call == "GraphExpand":
                result = probes.expand(db, seen, args["entity"], args.get("graph", "world"), args.get("relation"))
            else:
                result = probes.source(db, seen, run_id, org_id, args["fact"], args.get("graph", "world"))
            # The count is one guarded UPDATE, so concurrent probes of one turn never pass the cap.
            if cap is None:
                counted = db.change(probes.COUNT, {"t": turn_id})
            else:
                counted = db.change(probes.COUNT_CAPPED, {"t": turn_id, "cap": cap})
            if not counted:  # a concurrent use case got there first
                raise (
                    self._exhausted(turn_id, cap) if cap is not None else E.TurnNotOpen(f"turn {turn_id!r} ended (R2)")
                )
            return Outcome(detail={"result": result, "probes_used": used + 1, "cap": cap})

    @staticmethod
    def _exhausted(turn_id: str, cap: int | None) -> E.Refusal:
        return E.BudgetExhausted(f"turn {turn_id!r} has used all {cap} of its MemoryProbes (R21)")

    @contextmanager
    def _driver_tx(self, *, serializable: bool = False) -> Iterator[Driver]:
        """A driver use case's transaction on the pooled connection: committed at the end, rolled back by
        any error or refusal. SQLite takes the write lock up front (BEGIN IMMEDIATE); PostgreSQL
        runs it READ COMMITTED, the guarded UPDATE keeping the count right."""
        pg = self.engine.dialect.name == "postgresql"
        if self._sandbox is not None:
            with self._sandbox.begin_nested():
                db = Driver(self._sandbox.connection().connection.dbapi_connection, pg)
                try:
                    yield db
                finally:
                    db.close()
            self._sandbox.expire_all()  # rows changed under the session's objects
            return
        with driver_connection(self.engine) as dbapi:
            db = Driver(dbapi, pg)
            try:
                if not pg:
                    db.cur.execute("BEGIN IMMEDIATE")
                elif serializable:  # as the ORM's writers (db.writer): concurrent teachers lose nothing
                    db.cur.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                yield db
            except BaseException:
                db.close()
                dbapi.rollback()
                raise
            db.close()
            dbapi.commit()

    @use_case
    def org_map(self, org_id: str) -> Obj:
        """R18: the map of an organization's World graph now, with the paragraph a turn carries."""
        with self._read() as s:
            org = self._org(s, org_id)
            counts = map_counts(s, org_id)
            return {**counts, "paragraph": map_paragraph(org.name, counts["kinds"], counts["facts"])}

    # --- settings (R11 to R16) -----------------------------------------------------------

    @use_case
    def get_settings(self, org_id: str, *, by: str) -> dict[str, bool]:
        """R15: the owner reads the four settings."""
        with self._read() as s:
            org = self._org(s, org_id)
            self._person(s, by)
            if self._role(s, by, org_id) != "owner":
                raise E.NotOwner(f"only the owner of {org_id!r} reads its settings (R15)")
            return settings_of(org)

    @use_case
    def set_settings(self, org_id: str, *, by: str, settings: Obj) -> Outcome:
        """R15: the owner changes settings; the change is checked as a whole and audited."""
        with self._tx() as s:
            org = self._org(s, org_id)
            self._person(s, by)
            if self._role(s, by, org_id) != "owner":
                raise E.NotOwner(f"only the owner of {org_id!r} changes its settings (R15)")
            problem = settings_problem(settings)
            if problem:
                raise E.InvalidSetting(problem)
            at = datetime.now(UTC).isoformat(timespec="seconds")
            changed = []
            for name, value in settings.items():
                column = SETTING_BY_NAME[name].column
                old = bool(getattr(org, column))
                if old != value:
                    setattr(org, column, value)
                    s.add(SettingsAudit(org_id=org_id, by=by, at=at, setting=name, old=old, new=value))
                    changed.append({"setting": name, "from": old, "to": value})
            s.add(org)
            return Outcome(detail={"settings": settings_of(org), "changed": changed})

    # --- corrections (R28) ---------------------------------------------------------------

    def _correctable(self, s: Session, org_id: str, by: str, fact: Obj, graph: str, *, doing: str) -> Any:
        """The fact a correction names, after the checks that come before looking it up: the ids,
        then membership (rules.md, Refusals: a non-member learns nothing of what exists there)."""
        self._org(s, org_id)
        self._person(s, by)
        if self._role(s, by, org_id) is None:
            raise E.NotMember(f"{by!r} is not a member of {org_id!r}, so cannot {doing} its facts (R28)")
        if graph == "flow":
            raise E.NotAllowed("Flow facts are not corrected (R28)")
        f = find_fact(s, graph, org_id if graph == "world" else by, fact)
        if f is None:
            where = f"the world graph of {org_id!r}" if graph == "world" else f"{by!r}'s user graph"
            raise E.UnknownFact(f"{where} has no such fact")
        return f

    @use_case
    def dispute(self, *, org: str, by: str, fact: Obj, graph: str = "world") -> Outcome:
        """R28: a member disputes a World fact, a person their own User fact; one each."""
        with self._tx() as s:
            f = self._correctable(s, org, by, fact, graph, doing="dispute")
            if s.exec(select(Dispute).where(Dispute.fact_id == f.id, Dispute.by == by)).first():
                raise E.NotAllowed(f"{by!r} has already disputed this fact; one dispute per person (R28)")
            s.add(Dispute(fact_id=f.id, by=by, contribution=DISPUTE_CONTRIBUTION))
            s.flush()
            changes = Changes()
            with driver_of(s) as db:
                refresh_facts(db, load_facts(db, [f.id]), changes)
            return Outcome(changes=changes.listed())

    @use_case
    def retract(self, *, org: str, by: str, fact: Obj, graph: str = "world") -> Outcome:
        """R28: the owner retracts a World fact, a person their own User fact: never served again."""
        with self._tx() as s:
            f = self._correctable(s, org, by, fact, graph, doing="retract")
            if graph == "world" and self._role(s, by, org) != "owner":
                raise E.NotOwner(f"only the owner of {org!r} retracts its world facts (R28)")
            f.retracted = True
            s.add(f)
            s.flush()
            changes = Changes()
            with driver_of(s) as db:
                refresh_facts(db, load_facts(db, [f.id]), changes)
            return Outcome(changes=changes.listed())

    # --- plain data for the dashboard and the command line -------------------------------

    @use_case
    def export_state(self) -> Obj:
        """The whole memory as `memory-state/1` (without a replay's reads and refusals)."""
        with self._read() as s:
            return export(s)

    @use_case
    def audit(self, org_id: str) -> list[Obj]:
        """Every settings change of an organization: who, when, from, to (R15)."""
        with self._read() as s:
            rows = s.exec(select(SettingsAudit).where(SettingsAudit.org_id == org_id).order_by(col(SettingsAudit.id)))
            return [{"by": a.by, "at": a.at, "setting": a.setting, "from": a.old, "to": a.new} for a in rows]
