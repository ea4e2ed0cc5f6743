"""The store's side of every family of use cases: its database (transactions.py) and the look-ups that refuse."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from .. import errors as E
from ..plain import Obj
from ..rules.permissions import is_member, may_correct, may_manage_settings
from ..rules.turns import takes_events
from . import queries, turns
from .bulk import digest, key_of
from .driver import driver_of
from .lookups import OrgRef, PersonRef, RunRef, TurnRef
from .models import Organization, Person, Run, Turn
from .probes import find_fact
from .transactions import Database, Db, Tx

P = ParamSpec("P")
R = TypeVar("R")
M = TypeVar("M")


class Repository:
    """A family of use cases over one database, and the look-ups that refuse in the order the rules give."""

    def __init__(self, database: Database) -> None:
        self.database = database

    @staticmethod
    def _org(s: Tx, org_id: str) -> OrgRef:
        return OrgRef.of(_found(s, Organization, org_id, E.UnknownOrg))

    @staticmethod
    def _person(s: Tx, person_id: str, *, maybe_deleted: bool = True) -> PersonRef:
        return PersonRef.of(_found(s, Person, person_id, lambda i: E.UnknownPerson(i, maybe_deleted=maybe_deleted)))

    @staticmethod
    def _member(s: Tx | Db, person_id: str, org_id: str) -> None:
        """A person a record names: a member of the run's organization, else unknown_person, word for word (#40)."""
        sql = "SELECT person_id FROM membership WHERE person_id = :p AND org_id = :o"
        with driver_of(s) as db:  # a record's use case is on the driver, a step's on the ORM
            if not db.rows(sql, {"p": person_id, "o": org_id}):
                raise E.UnknownPerson(person_id)

    @staticmethod
    def _run(s: Tx, run_id: str) -> RunRef:
        return RunRef.of(_found(s, Run, run_id, E.UnknownRun))

    @staticmethod
    def _turn(s: Tx, turn_id: str) -> tuple[TurnRef, RunRef]:
        turn = _found(s, Turn, turn_id, E.UnknownTurn)
        return TurnRef.of(turn), RunRef.of(_found(s, Run, turn.run_id, E.UnknownRun))

    @staticmethod
    def _refuse_unless_open(turn_id: str, status: str, run_id: str, ended: bool) -> None:
        """No event on an ended run (R17) or a turn that is not open (R1, R2)."""
        if ended:
            raise E.EndedRun(run_id)
        if not takes_events(status):
            raise E.TurnNotOpen(turn_id, status)

    def _read(self, read: Callable[Concatenate[Tx, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
        """One store read in a read-only transaction of its own: a read-only use case."""
        with self.database.transaction(write=False) as s:
            return read(s, *args, **kwargs)

    @staticmethod
    def _used(s: Tx | Db, kind: str, ident: str) -> None:
        """Take a run or turn id for good, or refuse one used before, erased ones included (R33)."""
        with driver_of(s) as db:  # one statement: nothing inserted, the id was taken before
            kept = {"k": kind, "i": digest(key_of(db), kind, ident)}
            if not db.change("INSERT INTO usedid (kind, id) VALUES (:k, :i) ON CONFLICT DO NOTHING", kept):
                raise E.DuplicateId(kind, ident)

    @classmethod
    def _step(cls, s: Tx, run: RunRef, step: str) -> Obj:
        """The step of the run's workflow that `step` names, or unknown_step."""
        wf = turns.workflow(s, run.workflow_id) if run.workflow_id else None
        return cls._step_of(run.workflow_id if wf else None, wf.steps if wf else [], step)

    @staticmethod
    def _step_of(workflow_id: str | None, steps: list[Obj], step: str) -> Obj:
        for spec in steps:
            if spec["id"] == step:
                return spec
        raise E.UnknownStep(step, workflow_id)

    def _correctable(self, s: Tx, org_id: str, by: str, fact: Obj, graph: str, *, doing: str) -> Any:
        """The fact a correction names (R28), after the ids and membership are checked (a non-member learns nothing)."""
        self._org(s, org_id)
        self._person(s, by)
        if not is_member(queries.role(s, by, org_id)):
            raise E.NotMember(by, org_id, so=f", so cannot {doing} its facts (R28)")
        if not may_correct(graph):
            raise E.NotAllowed.correcting_flow()
        f = find_fact(s, graph, org_id if graph == "world" else by, fact)
        if f is None:
            raise E.UnknownFact.in_graph(graph, org_id=org_id, by=by)
        return f

    def _owner_or_cli(self, s: Tx, org_id: str, by: str | None, does: str, *, person: str | None = None) -> None:
        """The ids named exist, then `by` is the owner (R15); `by` None is the command line."""
        self._org(s, org_id)
        for named in (by, person):
            if named is not None:
                self._person(s, named)
        if by is not None and not may_manage_settings(queries.role(s, by, org_id)):
            raise E.NotOwner(org_id, does=does)


def _found(s: Tx, model: type[M], ident: str, missing: Callable[[str], E.Refusal]) -> M:
    """The row of `model` with this id, or the refusal `missing` makes of the id."""
    row = s.get(model, ident)
    if row is None:
        raise missing(ident)
    return row
