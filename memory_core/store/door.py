"""The store's side of every family of use cases: the house a family takes its transactions from,
and the look-ups and checks that read inside one (lookups.py). A use case hands the transactions
it is given to typed store functions; it never names their types or opens one itself."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from .. import errors as E
from ..plain import Obj
from ..rules.permissions import is_member, may_correct, may_link_identity
from . import ids, queries, turns
from .graph import find_fact
from .house import Db, House, Tx
from .lookups import Lookups, RunRef


class Door(Lookups):
    """A family of use cases over one house (house.py): its transactions, and the look-ups that
    refuse in the order the rules give."""

    def __init__(self, house: House) -> None:
        self.house = house

    def _tx(self) -> AbstractContextManager[Tx]:
        return self.house.tx()

    def _read(self, *, fresh: bool = False) -> AbstractContextManager[Tx]:
        """A read-only transaction: on a standby when there is one and it has replayed this process's
        writes (standby.py); `fresh`, on the primary (a read whose answer a write follows)."""
        return self.house.read(fresh=fresh)

    def _driver_tx(self, *, serializable: bool = False) -> AbstractContextManager[Db]:
        return self.house.driver_tx(serializable=serializable)

    @staticmethod
    def _used(s: Tx | Db, kind: str, ident: str) -> None:
        """Take a run or turn id for good, or refuse one used before, erased ones included (R33)."""
        if not ids.claim(s, kind, ident):
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
        """The fact a correction names (R28), after the checks that come before looking it up: the
        ids, then membership (a non-member learns nothing of what exists there)."""
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
        """The ids named exist (the organization, `by`, the person linked), then `by` is the owner
        (R15); `by` None is the command line, which anyone holding the database runs."""
        self._org(s, org_id)
        if by is not None:
            self._person(s, by)
        if person is not None:
            self._person(s, person)
        if by is not None and not may_link_identity(queries.role(s, by, org_id)):
            raise E.NotOwner(org_id, does=does)
