"""The base of every family of use cases: the engine, its transactions, the look-ups that refuse."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..rules.turns import takes_events
from ..store import queries, turns
from ..store.database import Engine, make_engine
from ..store.erasure import after_erasure, heal
from ..store.lookups import Lookups
from ..store.transactions import Db, Transactions, Tx

if TYPE_CHECKING:  # the look-ups' rows, for annotations only
    from ..store.models import Run, Turn

Obj = dict[str, Any]


class UseCases(Lookups):
    """The engine and the transactions every use case runs in (store/transactions.py)."""

    def __init__(self, engine: Engine | None = None, *, box: Tx | None = None) -> None:
        self.engine = engine if engine is not None else make_engine()
        self._store = Transactions(self.engine, box)
        self.retries = 0  # conflicts with concurrent use cases that were retried (retry.py)
        self._erased = False  # inside one transaction: something was erased, to scrub after it
        heal(self.engine)  # R31: a deletion whose scrub a killed process never finished

    @property
    def _sandbox(self) -> Tx | None:
        """The one transaction of a box (sandbox or all_or_nothing) every use case joins, if any."""
        return self._store.box

    def _tx(self) -> AbstractContextManager[Tx]:
        return self._store.tx()

    def _read(self) -> AbstractContextManager[Tx]:
        return self._store.read()

    def _driver_tx(self, *, serializable: bool = False) -> AbstractContextManager[Db]:
        return self._store.driver_tx(serializable=serializable)

    def _scrub_after(self) -> bool | None:
        """R31, right after a deletion committed: its text leaves the files now (SQLite's checkpoint)
        or in the background (PostgreSQL's rewrite, or a SQLite log a reader holds); the outcome
        says which (`bytes_gone`, None inside a box), and `erasure_status` says when it is done."""
        if self._sandbox is None:
            return after_erasure(self.engine)
        self._erased = True  # all_or_nothing scrubs once its one transaction commits
        return None

    @classmethod
    def _require_open(cls, turn: Turn, run: Run) -> None:
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
    def _step(cls, s: Tx, run: Run, step: str) -> Obj:
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
