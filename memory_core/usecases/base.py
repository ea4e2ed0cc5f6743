"""The base of every family of use cases: the engine, its transactions, the look-ups that refuse."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from .. import errors as E
from ..plain import Obj
from ..rules.turns import takes_events
from ..store import queries, turns
from ..store.database import Engine, make_engine
from ..store.erasure import after_erasure, heal
from ..store.lookups import Lookups, RunRef, TurnRef
from ..store.transactions import Db, Transactions, Tx


class House:
    """One database as the use cases of one facade share it: its engine and its transactions (with
    `box`, every transaction is a savepoint of the box's one), and whether a box erased something."""

    def __init__(self, engine: Engine | None = None, *, box: Tx | None = None) -> None:
        self.engine = engine if engine is not None else make_engine()
        self.store = Transactions(self.engine, box)
        self.erased = False  # inside one box: something was erased, to scrub after it commits
        heal(self.engine)  # R31: a deletion whose scrub a killed process never finished

    @property
    def boxed(self) -> bool:
        """Whether every use case joins one box's transaction (a sandbox or all_or_nothing)."""
        return self.store.box is not None

    @contextmanager
    def box(self, *, commit: bool) -> Iterator[House]:
        """A house whose use cases all happen in one transaction: rolled back at the end, or (commit)
        committed when the block ends and rolled back by any error in it (Transactions.boxed)."""
        with self.store.boxed(commit=commit) as s:
            yield House(self.engine, box=s)


class UseCases(Lookups):
    """A family of use cases: plain methods over the house's transactions (store/transactions.py).
    The facade (facade.py) holds one of each family and delegates to them."""

    def __init__(self, house: House) -> None:
        self.house = house
        self.engine = house.engine
        self._store = house.store

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
        self.house.erased = True  # all_or_nothing scrubs once its one transaction commits
        return None

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
