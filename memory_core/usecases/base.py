"""The base of every family of use cases: the store's repository and the refusals of a turn's state (R1, R2, R17)."""

from __future__ import annotations

from .. import errors as E
from ..plain import Obj
from ..rules.turns import takes_events
from ..store.repository import Repository

__all__ = ["Obj", "UseCases"]


class UseCases(Repository):
    """A family of use cases: methods over the database's transactions (store/repository.py) and typed store calls."""

    @staticmethod
    def _refuse_unless_open(turn_id: str, status: str, run_id: str, ended: bool) -> None:
        """No event on an ended run (R17) or a turn that is not open (R1, R2)."""
        if ended:
            raise E.EndedRun(run_id)
        if not takes_events(status):
            raise E.TurnNotOpen(turn_id, status)
