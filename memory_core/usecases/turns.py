"""Use cases of runs and turns: setup, start and end a run, open, record in, step and end a turn (R1 to R10, R17, R22)."""

from __future__ import annotations

from .. import errors as E
from ..rules.learning import RunFacts
from ..rules.permissions import is_member
from ..rules.settings import SETTING_BY_NAME, stored_ephemeral
from ..rules.shortcuts import DEFAULT_MIN_WEIGHT
from ..rules.turns import may_transition
from ..store import history, probes, queries
from ..store import shortcuts as reads
from ..store.erasure import erase_run
from ..store.facts import withdraw
from ..store.graph import Changes, map_of
from ..store.models import (
    Membership,
    NestedWork,
    Organization,
    Person,
    Record,
    Run,
    Turn,
    Workflow,
)
from ..store.teaching import teach
from ..store.transactions import Tx
from .base import Obj, UseCases
from .results import (
    RecordKept,
    RunEnded,
    RunStarted,
    StepRun,
    Taught,
    TurnEnded,
    TurnOpened,
    WorkCalled,
    WorkReturned,
)


class Turns(UseCases):
    """Use cases of runs and turns."""

    def load_setup(self, *, organizations: list[Obj], people: list[Obj], workflows: list[Obj]) -> None:
        """Create a checked scenario's organizations, people and workflows, in one transaction."""
        with self._tx() as s:
            n = self._take_moment(s)
            base = queries.count(s, Organization)
            for i, o in enumerate(organizations):
                if s.get(Organization, o["id"]) is not None:
                    raise E.DuplicateId.exists("organization", o["id"])
                org = Organization(id=o["id"], name=o["name"], seq=base + i, since=n)
                for name, value in o.get("settings", {}).items():
                    setattr(org, SETTING_BY_NAME[name].column, value)
                s.add(org)
            pbase = queries.count(s, Person)
            for i, p in enumerate(people):
                if s.get(Person, p["id"]) is not None:
                    raise E.DuplicateId.exists("person", p["id"])
                s.add(Person(id=p["id"], name=p["name"], seq=pbase + i, since=n))
            s.flush()
            for p in people:
                for org_id, role in p["memberships"].items():
                    s.add(Membership(person_id=p["id"], org_id=org_id, role=role))
            for w in workflows:
                s.add(Workflow(id=w["id"], org_id=w["org"], memory_probes=w["memory_probes"], steps=w["steps"]))
            self._mark(s, n, "setup")

    def start_run(
        self,
        run_id: str,
        *,
        org: str,
        person: str,
        workflow: str | None = None,
        surface: str = "workflow",
        ephemeral: bool = False,
        session: str | None = None,
    ) -> RunStarted:
        """Start a run; an ephemeral request is honoured only as R11 allows. `session` names the MCP
        session that starts it (agents/), which ends it when the session ends."""
        with self._tx() as s:
            o = self._org(s, org)
            self._person(s, person)
            cap = None
            if workflow is not None:
                wf = s.get(Workflow, workflow)
                if wf is None or wf.org_id != org:
                    raise E.UnknownWorkflow(org, workflow)
                cap = wf.memory_probes
            self._used(s, "run", run_id)
            if not is_member(queries.role(s, person, org)):
                raise E.NotMember(person, org, so=", so cannot start a run there")
            stored = stored_ephemeral(requested=ephemeral, surface=surface, allow_ephemeral_runs=o.allow_ephemeral_runs)
            seq = queries.next_run_seq(s)
            n = self._take_moment(s)
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
                    started_at=n,
                    session_id=session,
                )
            )
            self._mark(s, n, "run_started", org=org, run=run_id, person=person)
            return RunStarted(stored, rule="R11" if ephemeral and not stored else None, cap=cap)

    def open_turn(self, turn_id: str, *, run: str, request: Obj, replaces: str | None = None) -> TurnOpened:
        """Open a turn: withdraw the turn it replaces (R3), take the map (R18), record the request.
        It runs on the driver (driver.py), as the other use cases of a turn do."""
        with self._driver_tx(serializable=True) as db:
            hit = db.rows(probes.RUN_TO_OPEN, {"r": run})
            if not hit:
                raise E.UnknownRun(run)
            run_row = probes.RunToOpenRow._make(hit[0])
            person_id = run_row.person_id
            old = db.rows(probes.TURN_TO_REPLACE, {"t": replaces}) if replaces is not None else None
            if old == []:
                raise E.UnknownTurn(str(replaces))
            if person_id is None:
                raise E.UnknownPerson.gone_from_run(run)
            if db.rows(probes.USED_ID, {"k": "turn", "i": turn_id}):
                raise E.DuplicateId("turn", turn_id)
            db.change(probes.USE_ID, {"k": "turn", "i": turn_id})
            if run_row.ended:
                raise E.RunEnded(run, then="it opens no more turns (R17)")
            changes = Changes()
            n = history.take_moment(db)
            if old:
                replaced = probes.TurnToReplaceRow._make(old[0])
                if replaced.run_id != run:
                    raise E.NotAllowed.replacing_across_runs(str(replaces), its_run=replaced.run_id, run=run)
                if not may_transition(replaced.status, "replaced"):
                    raise E.NotAllowed.replacing(str(replaces), replaced.status)
                if replaced.status == "completed":
                    taught = [
                        probes.SupportOfTurnRow._make(r) for r in db.rows(probes.SUPPORTS_OF_TURN, {"t": replaces})
                    ]
                    withdraw(db, [r.id for r in taught], [r.fact_id for r in taught], changes, moment=n)
                db.change(probes.TURN_REPLACED, {"t": replaces})
                history.log_turn(db, str(replaces), n)
            counters = dict(db.rows(probes.MAP_COUNTERS, {"o": run_row.org_id}))
            taken = map_of(counters)
            seq = int(db.rows(probes.LAST_TURN_SEQ, {})[0][0]) + 1  # an index look-up
            db.change(
                probes.ADD_TURN, {"id": turn_id, "seq": seq, "run_id": run, "map": db.json(taken), "opened_at": n}
            )
            db.change(
                probes.ADD_RECORD,
                {
                    "id": f"{turn_id}#0",
                    "run_id": run,
                    "turn_id": turn_id,
                    "number": 0,
                    "origin": "person",
                    "source": person_id,
                    "excerpt": request["text"],
                    "reliability": None,
                    "nested_id": None,
                    "claims": db.json(request.get("claims", [])),
                },
            )
            history.mark(
                db, n, "turn_opened", org=run_row.org_id, run=run, turn=turn_id, detail=replaces, facts=changes.facts
            )
            return TurnOpened(taken, changes=changes.listed())

    def record(self, turn_id: str, *, record: Obj) -> RecordKept:
        """Record evidence in an open turn, possibly within open nested work (R5). Agents record
        all the time, so this runs on the driver (probes.py), with the checks `_add_record` makes."""
        with self._driver_tx() as db:
            hit = db.rows(probes.TURN_TO_RECORD, {"t": turn_id})
            if not hit:
                raise E.UnknownTurn(turn_id)
            turn = probes.TurnToRecordRow._make(hit[0])
            run_id, number = turn.run_id, turn.next_record
            src: str | None = record.get("source")
            if record["origin"] == "person":
                src = src or turn.person_id
                if src is None:
                    raise E.UnknownPerson.no_source(run_id)
                if not db.rows(probes.PERSON, {"p": src}):
                    raise E.UnknownPerson(src)
            self._refuse_unless_open(turn_id, turn.status, run_id, bool(turn.ended))
            nested_id = None
            if record.get("within") is not None:
                work = db.rows(probes.OPEN_WORK, {"t": turn_id, "w": record["within"]})
                if not work:
                    raise E.NestedNotOpen(record["within"], turn_id)
                nested_id = work[0][0]
            rid = f"{turn_id}#{number}"
            row = {
                "id": rid,
                "run_id": run_id,
                "turn_id": turn_id,
                "number": number,
                "origin": record["origin"],
                "source": src,
                "excerpt": record.get("excerpt"),
                "reliability": record.get("reliability"),
                "nested_id": nested_id,
                "claims": db.json(record.get("claims", [])),
            }
            db.change(probes.ADD_RECORD, row)
            db.change(probes.NEXT_RECORD, {"t": turn_id})
            return RecordKept(rid)

    def _add_record(self, s: Tx, turn: Turn, run: Run, record: Obj) -> str:
        src: str | None = record.get("source")
        if record["origin"] == "person":
            src = src or run.person_id
            if src is None:
                raise E.UnknownPerson.no_source(run.id)
            self._person(s, src)
        self._require_open(turn, run)
        nested_id = None
        if record.get("within") is not None:
            work = queries.open_work(s, turn.id, record["within"])
            if work is None:
                raise E.NestedNotOpen(record["within"], turn.id)
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

    def run_step(self, turn_id: str, *, step: str, record: Obj | None = None) -> StepRun:
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
                    min_weight=spec.get("min_weight", DEFAULT_MIN_WEIGHT),
                    no_memory_shortcuts=org.no_memory_shortcuts,
                )
            kept = self._add_record(s, turn, run, record) if answer is None and record is not None else None
            done: Obj = {"step": step, "ran": answer is None, "shortcut": answer}
            if kept is not None:  # which record the step kept: a record event keeps none (views of the state drop it)
                done["record"] = kept
            turn.steps = [*turn.steps, done]
            s.add(turn)
            n = self._take_moment(s)
            self._mark(s, n, "step", org=run.org_id, run=run.id, turn=turn_id, detail=step, turns=[turn_id])
            return StepRun(answer, kept)

    def call(self, turn_id: str, *, work: str) -> WorkCalled:
        """Open nested work inside a turn; it reads and writes no graph (R4)."""
        with self._tx() as s:
            turn, run = self._turn(s, turn_id)
            self._require_open(turn, run)
            if queries.open_work(s, turn_id, work) is not None:
                raise E.NestedOpen(work, turn_id)
            s.add(NestedWork(turn_id=turn_id, work=work))
            return WorkCalled()

    def return_work(self, turn_id: str, *, work: str, status: str) -> WorkReturned:
        """End nested work; failed or cancelled work will contribute nothing (R5)."""
        with self._tx() as s:
            turn, run = self._turn(s, turn_id)
            self._require_open(turn, run)
            nested = queries.open_work(s, turn_id, work)
            if nested is None:
                raise E.NestedNotOpen(work, turn_id)
            nested.status = status
            s.add(nested)
            return WorkReturned(rule="R5" if status != "completed" else None)

    def end_turn(self, turn_id: str, *, status: str) -> TurnEnded:
        """End a turn; only a completed one teaches, once, all or nothing (R1, R2). It runs on the
        driver (driver.py), as teaching's batched statements do."""
        with self._driver_tx(serializable=True) as db:
            hit = db.rows(probes.TURN_TO_END, {"t": turn_id})
            if not hit:
                raise E.UnknownTurn(turn_id)
            turn = probes.TurnToEndRow._make(hit[0])
            self._refuse_unless_open(turn_id, turn.status, turn.run_id, bool(turn.ended))
            if not may_transition(turn.status, status):  # the turn state machine decides every end (R1, R2)
                raise E.TurnNotOpen(turn_id, turn.status)
            nested: dict[int, str] = dict(db.rows(probes.NESTED_WORK, {"t": turn_id}))
            if "open" in nested.values():
                raise E.NestedOpen.still_held(turn_id)
            n = history.take_moment(db)
            about = {"org": turn.org_id, "run": turn.run_id, "turn": turn_id, "detail": status}
            if status != "completed":
                db.change(probes.TURN_ENDED, {"st": status, "t": turn_id})
                history.log_turn(db, turn_id, n)
                history.mark(db, n, "turn_ended", **about)  # type: ignore[arg-type]
                return TurnEnded(status, rule="R2")  # a failed or cancelled turn teaches nothing
            settings = RunFacts(  # R16: the settings as they stand now, when the teaching is written
                surface=turn.surface,
                ephemeral=bool(turn.ephemeral),
                person_erased=turn.person_id is None,
                learn_from_ephemeral_runs=bool(turn.learn_from_ephemeral_runs),
                learn_from_users=bool(turn.learn_from_users),
            )
            result = teach(
                db,
                turn_id,
                settings,
                nested,
                run_id=turn.run_id,
                org_id=turn.org_id,
                person_id=turn.person_id,
                moment=n,
            )
            db.change(
                probes.TURN_TAUGHT,
                {
                    "t": turn_id,
                    "st": status,
                    "w": result.taught["world"],
                    "u": result.taught["user"],
                    "f": result.taught["flow"],
                    "skipped": db.json([k.stored() for k in result.skipped]),  # R10, without the labels
                },
            )
            history.log_turn(db, turn_id, n)
            history.mark(db, n, "turn_ended", facts=result.changes.facts, **about)  # type: ignore[arg-type]
            taught = result.taught
            return TurnEnded(
                status,
                taught=Taught(taught["world"], taught["user"], taught["flow"]),
                skipped=tuple(result.skipped),
                excluded_records=tuple(result.excluded_records),
                changes=result.changes.listed(),
            )

    def end_run(self, run_id: str) -> RunEnded:
        """End a run: cancel its open turns; an ephemeral run is then erased (R17)."""
        with self._tx() as s:
            run = self._run(s, run_id)
            if run.ended:
                raise E.RunEnded.already(run_id)
            cancelled = []
            for turn in queries.open_turns(s, run_id):
                if not may_transition(turn.status, "cancelled"):  # the turn state machine (R17: open turns end)
                    continue
                for work in queries.open_works(s, turn.id):
                    work.status = "cancelled"
                    s.add(work)
                turn.status = "cancelled"
                cancelled.append(turn.id)
                s.add(turn)
            n = self._take_moment(s)
            run.ended = True
            run.ended_at = n
            s.add(run)
            erased = run.ephemeral
            if erased:
                s.flush()
                erase_run(s, run)
            about = {"org": run.org_id, "run": run_id, "detail": "erased" if erased else None}
            self._mark(s, n, "run_ended", turns=[] if erased else cancelled, **about)
        return RunEnded(tuple(cancelled), erased, self._scrub_after() if erased else None)
