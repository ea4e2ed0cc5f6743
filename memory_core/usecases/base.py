"""The base of every family of use cases: the store's repository (transactions, look-ups that refuse) and the
refusals of a turn's state and budget."""

from __future__ import annotations

from .. import errors as E
from ..plain import Obj
from ..rules.turns import takes_events
from ..store.lookups import RunRef, TurnRef
from ..store.repository import Repository

__all__ = ["Obj", "UseCases"]


class UseCases(Repository):
    """A family of use cases: plain methods over the database's transactions (store/repository.py), each
    handed on to typed store functions. The facade (facade.py) holds one of each family and
    delegates to them."""

    @classmethod
    def _require_open(cls, turn: TurnRef, run: RunRef) -> None:
        cls._refuse_unless_open(turn.id, turn.status, run.id, run.ended)

    @staticmethod
    def _refuse_unless_open(turn_id: str, status: str, run_id: str, ended: bool) -> None:
        if ended:
            raise E.EndedRun(run_id)
        if not takes_events(status):
            raise E.TurnNotOpen(turn_id, status)

    @staticmethod
    def _exhausted(turn_id: str, cap: int | None) -> E.Refusal:
        return E.BudgetExhausted(turn_id, cap)
