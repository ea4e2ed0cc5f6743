"""Use cases of runs and turns: setup, start and end a run, open, record in, step and end a turn (R1 to R10, R17, R22)."""

from __future__ import annotations

from typing import Any, cast

from .. import errors as E
from ..plain import Obj
from ..rules.learning import RunFacts
from ..rules.permissions import is_member
from ..rules.settings import stored_ephemeral
from ..rules.shortcuts import DEFAULT_MIN_WEIGHT
from ..rules.turns import may_transition, teaches
from ..store import dashboard, moments, queries
from ..store import turns as store
from ..store.graph import FactChanges, map_counts, shortcut
from ..store.repository import Repository
from .results import RecordKept, RunEnded, RunStarted, StepRun, TurnEnded, TurnOpened, WorkCalled, WorkReturned
from .shapes import Map, Taught


class Turns(Repository):
    """Use cases of runs and turns."""

    def load_setup(self, *, organizations: list[Obj], people: list[Obj], workflows: list[Obj]) -> None:
        """Create a checked scenario's organizations, people and workflows, in one transaction."""
        with self.database.transaction() as s:
            n = moments.take_moment(s)
            store.add_setup(s, organizations=organizations, people=people, workflows=workflows, moment=n)
            moments.mark(s, n, "setup")

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
        """Start a run; an ephemeral request is honoured only as R11 allows; an MCP `session` ends it when it ends."""
        with self.database.transaction() as s:
            o = self._org(s, org)
            self._person(s, person)
            cap = None
            if workflow is not None:
                wf = store.workflow(s, workflow)
                if wf is None or wf.org_id != org:
                    raise E.UnknownWorkflow(org, workflow, known=[w["id"] for w in dashboard.workflows(s, org)])
                cap = wf.memory_probes
            self._used(s, "run", run_id)
            if not is_member(queries.role(s, person, org)):
                raise E.NotMember(person, org, so=", so cannot start a run there")
            stored = stored_ephemeral(requested=ephemeral, surface=surface, allow_ephemeral_runs=o.allow_ephemeral_runs)
            n = moments.take_moment(s)
            new = store.NewRun(run_id, org, person, workflow, surface, ephemeral, stored, session)  # asked, then stored
            store.add_run(s, new, moment=n)
            moments.mark(s, n, "run_started", org=org, run=run_id, person=person)
            return RunStarted(ephemeral=stored, rule="R11" if ephemeral and not stored else None, cap=cap)

    def open_turn(self, turn_id: str, *, run: str, request: Obj, replaces: str | None = None) -> TurnOpened:
        """Open a turn: withdraw the turn it replaces (R3), take the map (R18), record the request."""
        with self.database.driver(serializable=True) as db:
            run_row = store.run_to_open(db, run)
            if run_row is None:
                raise E.UnknownRun(run)
            replaced = store.turn_to_replace(db, replaces) if replaces is not None else None
            if replaces is not None and replaced is None:
                raise E.UnknownTurn(replaces)
            if run_row.person_id is None:
                raise E.UnknownPerson.gone_from_run(run)
            self._used(db, "turn", turn_id)
            if run_row.ended:
                raise E.EndedRun(run, then="it opens no more turns (R17)")
            changes, n = FactChanges(), moments.take_moment(db)
            if replaced is not None and replaces is not None:
                if replaced.run_id != run:
                    raise E.NotAllowed.replacing_across_runs(replaces, its_run=replaced.run_id, run=run)
                if not may_transition(replaced.status, "replaced"):
                    raise E.NotAllowed.replacing(replaces, replaced.status)
                store.replace_turn(db, replaces, changes, moment=n, taught=teaches(replaced.status))
            org, taken = run_row.org_id, map_counts(db, run_row.org_id)
            store.add_turn(db, turn_id=turn_id, run_id=run, taken=taken, opened_at=n)
            said = ("person", run_row.person_id, request["text"], None, None, request.get("claims", []))  # the request
            store.add_record(db, store.NewRecord(turn_id, run, 0, *said))
            moments.mark(db, n, "turn_opened", org=org, run=run, turn=turn_id, detail=replaces, facts=changes.facts)
            return TurnOpened(map=cast(Map, taken), changes=changes.listed())

    def record(self, turn_id: str, *, record: Obj) -> RecordKept:
        """Record evidence in an open turn, possibly within open nested work (R5)."""
        with self.database.driver() as db:
            turn = store.turn_to_change(db, turn_id)
            src = _source(record, turn.person_id, turn.run_id)
            if record["origin"] == "person":
                self._member(db, src, turn.org_id)
            self._refuse_unless_open(turn_id, turn.status, turn.run_id, bool(turn.ended))
            return RecordKept(record=_add_record(db, turn_id, turn.run_id, turn.next_record, src, record))

    def run_step(self, turn_id: str, *, step: str, record: Obj | None = None) -> StepRun:
        """Run a workflow step, or skip it when memory already answers it well enough (R22)."""
        with self.database.transaction() as s:
            turn, run = self._turn(s, turn_id)
            spec = self._step(s, run, step)
            if record is not None and record["origin"] == "person" and record.get("source"):
                self._member(s, record["source"], run.org_id)
            self._refuse_unless_open(turn.id, turn.status, run.id, run.ended)
            skip = self._org(s, run.org_id).no_memory_shortcuts  # R14
            answer = None
            if spec.get("answers"):
                least = spec.get("min_weight", DEFAULT_MIN_WEIGHT)  # R22
                answer = shortcut(s, run, spec["answers"], min_weight=least, no_memory_shortcuts=skip)
            kept = None
            if answer is None and record is not None:
                src = _source(record, run.person_id, run.id)
                if record["origin"] == "person" and not record.get("source"):  # a source given was checked above
                    self._member(s, src, run.org_id)
                kept = _add_record(s, turn.id, run.id, turn.next_record, src, record)
            done: Obj = {"step": step, "ran": answer is None, "shortcut": answer}
            if kept is not None:  # which record the step kept: a record event keeps none (views of the state drop it)
                done["record"] = kept
            store.add_step(s, turn_id, done)
            n = moments.take_moment(s)
            moments.mark(s, n, "step", org=run.org_id, run=run.id, turn=turn_id, detail=step, turns=[turn_id])
            return StepRun(shortcut=answer, record=kept)

    def call(self, turn_id: str, *, work: str) -> WorkCalled:
        """Open nested work inside a turn; it reads and writes no graph (R4)."""
        with self.database.transaction() as s:
            turn, run = self._turn(s, turn_id)
            self._refuse_unless_open(turn.id, turn.status, run.id, run.ended)
            if store.open_work(s, turn_id, work) is not None:
                raise E.NestedOpen(work, turn_id)
            store.add_work(s, turn_id, work)
            return WorkCalled()

    def return_work(self, turn_id: str, *, work: str, status: str) -> WorkReturned:
        """End nested work; failed or cancelled work will contribute nothing (R5)."""
        with self.database.transaction() as s:
            turn, run = self._turn(s, turn_id)
            self._refuse_unless_open(turn.id, turn.status, run.id, run.ended)
            nested = store.open_work(s, turn_id, work)
            if nested is None:
                raise E.NestedNotOpen(work, turn_id)
            store.end_work(s, nested, status)
            return WorkReturned(rule=None if teaches(status) else "R5")

    def end_turn(self, turn_id: str, *, status: str) -> TurnEnded:
        """End a turn; only a completed one teaches, once, all or nothing (R1, R2)."""
        with self.database.driver(serializable=True) as db:
            turn = store.turn_to_change(db, turn_id)
            self._refuse_unless_open(turn_id, turn.status, turn.run_id, bool(turn.ended))
            if not may_transition(turn.status, status):  # the turn state machine decides every end (R1, R2)
                raise E.TurnNotOpen(turn_id, turn.status)
            nested = store.nested_of(db, turn_id)
            if "open" in nested.values():
                raise E.NestedOpen.still_held(turn_id)
            n, org, run = moments.take_moment(db), turn.org_id, turn.run_id
            if not teaches(status):
                store.end_turn(db, turn_id, status, moment=n)
                moments.mark(db, n, "turn_ended", org=org, run=run, turn=turn_id, detail=status)
                return TurnEnded(status=status, rule="R2")  # a failed or cancelled turn teaches nothing
            settings = RunFacts(  # R16: the settings as they stand now, when the teaching is written
                surface=turn.surface,
                ephemeral=bool(turn.ephemeral),
                person_erased=turn.person_id is None,
                learn_from_ephemeral_runs=bool(turn.learn_from_ephemeral_runs),
                learn_from_users=bool(turn.learn_from_users),
            )
            result = store.teach(db, turn_id, turn, settings, nested, moment=n)
            skipped = [k.stored() for k in result.skipped]  # R10, without the labels
            store.end_turn(db, turn_id, status, moment=n, taught=result.taught, skipped=skipped)
            moments.mark(db, n, "turn_ended", org=org, run=run, turn=turn_id, detail=status, facts=result.changes.facts)
            return TurnEnded(
                status=status,
                taught=cast(Taught, result.taught),
                skipped=tuple(result.skipped),
                excluded_records=tuple(result.excluded_records),
                changes=result.changes.listed(),
            )

    def end_run(self, run_id: str) -> RunEnded:
        """End a run: cancel its open turns; an ephemeral run is then erased (R17)."""
        with self.database.transaction() as s:
            run = self._run(s, run_id)
            if run.ended:
                raise E.EndedRun.already(run_id)
            cancelled = store.cancel_open_turns(s, run_id)  # R17: open turns end, and open may be cancelled
            n, erased, org_id = moments.take_moment(s), run.ephemeral, run.org_id
            store.end_run(s, run_id, moment=n, erase=erased)
            logged, run_named, detail = ([], None, "erased") if erased else (cancelled, run_id, None)  # R33
            moments.mark(s, n, "run_ended", turns=logged, org=org_id, run=run_named, detail=detail)
        return RunEnded(
            cancelled=tuple(cancelled), erased=erased, bytes_gone=self.database.scrub_after() if erased else None
        )


def _source(record: Obj, person_id: str | None, run_id: str) -> str:
    """A record's source: a person's record defaults to the run's person (R24, R30: none left)."""
    src: str | None = record.get("source")
    if record["origin"] == "person":
        src = src or person_id
        if src is None:
            raise E.UnknownPerson.no_source(run_id)
    return cast(str, src)


def _add_record(tx: Any, turn_id: str, run_id: str, number: int, source: str, record: Obj) -> str:
    """Keep a `record` event's or a step's record as number `number` of its turn, within its open nested work (R5)."""
    nested_id = None
    if record.get("within") is not None:
        nested_id = store.open_work(tx, turn_id, record["within"])
        if nested_id is None:
            raise E.NestedNotOpen(record["within"], turn_id)
    said = (record["origin"], source, record.get("excerpt"), record.get("reliability"), nested_id)
    return store.add_record(tx, store.NewRecord(turn_id, run_id, number, *said, record.get("claims", [])))
