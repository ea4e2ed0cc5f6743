"""The base of every family of use cases: the house's transactions and the look-ups that refuse."""

from __future__ import annotations

from contextlib import AbstractContextManager

from .. import errors as E
from ..plain import Obj
from ..rules.turns import takes_events
from ..store import queries, turns
from ..store.house import Db, House, Tx
from ..store.lookups import Lookups, RunRef, TurnRef


class UseCases(Lookups):
    """A family of use cases: plain methods over the house's transactions (store/house.py), each
    handed on to typed store functions. The facade (facade.py) holds one of each family and
    delegates to them."""

    def __init__(self, house: House) -> None:
        self.house = house

    def _tx(self) -> AbstractContextManager[Tx]:
        return self.house.tx()

    def _read(self, *, fresh: bool = False) -> AbstractContextManager[Tx]:
        """A read-only transaction: on a standby when there is one and it has replayed this process's
        writes (store/standby.py); `fresh`, on the primary (a read whose answer a write follows)."""
        return self.house.read(fresh=fresh)

    def _driver_tx(self, *, serializable: bool = False) -> AbstractContextManager[Db]:
        return self.house.driver_tx(serializable=serializable)

    @classmethod
    def _require_open(cls, turn: TurnRef, run: RunRef) -> None:
        cls._refuse_unless_open(turn.id, turn.status, run.id, run.ended)

    @staticmethod
    def _refuse_unless_open(turn_id: str, status: str, run_id: str, ended: bool) -> None:
        if ended:
            raise E.RunEnded(run_id)
        if not takes_events(status):
            raise E.TurnNotOpen(turn_id, status)

    @staticmethod
    def _used(s: Tx, kind: str, ident: str) -> None:
        if queries.id_used(s, kind, ident):
            raise E.DuplicateId(kind, ident)
        queries.use_id(s, kind, ident)

    @classmethod
    def _step(cls, s: Tx, run: RunRef, step: str) -> Obj:
        wf = turns.workflow(s, run.workflow_id) if run.workflow_id else None
        return cls._step_of(run.workflow_id if wf else None, wf.steps if wf else [], step)

    @staticmethod
    def _step_of(workflow_id: str | None, steps: list[Obj], step: str) -> Obj:
        for spec in steps:
            if spec["id"] == step:
                return spec
        raise E.UnknownStep(step, workflow_id)

    @staticmethod
    def _exhausted(turn_id: str, cap: int | None) -> E.Refusal:
        return E.BudgetExhausted(turn_id, cap)
