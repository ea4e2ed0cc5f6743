"""Use cases of corrections (R28): dispute a fact, retract it."""

from __future__ import annotations

from .. import errors as E
from ..plain import Obj
from ..rules.permissions import may_retract
from ..rules.weights import DISPUTE_CONTRIBUTION
from ..store import moments, queries
from ..store.graph import FactChanges
from ..store.repository import Repository
from .results import Corrected


class Corrections(Repository):
    """Use cases of corrections (R28)."""

    def dispute(self, *, org: str, by: str, fact: Obj, graph: str = "world") -> Corrected:
        """R28: a member disputes a World fact, a person their own User fact; one each."""
        with self.database.transaction() as s:
            f = self._correctable(s, org, by, fact, graph, doing="dispute")
            if queries.has_disputed(s, f.id, by):
                raise E.NotAllowed.disputing_again(by)
            n = moments.take_moment(s)
            changes = queries.add_dispute(s, f.id, by=by, contribution=DISPUTE_CONTRIBUTION, moment=n)
            moments.mark(s, n, "dispute", org=org, person=by, detail=graph, facts=changes.facts)
            return _corrected(changes)

    def retract(self, *, org: str, by: str, fact: Obj, graph: str = "world") -> Corrected:
        """R28: the owner retracts a World fact, a person their own User fact: never served again."""
        with self.database.transaction() as s:
            f = self._correctable(s, org, by, fact, graph, doing="retract")
            if not may_retract(queries.role(s, by, org), graph):
                raise E.NotOwner(org, does="retracts its world facts (R28)")
            if f.retracted:  # accepted, and changes nothing (a decision beside R28)
                return Corrected(changes=[], weight=f.weight, status=f.status)
            n = moments.take_moment(s)
            changes = queries.retract(s, f.id, moment=n)
            moments.mark(s, n, "retract", org=org, person=by, detail=graph, facts=changes.facts)
            return _corrected(changes)


def _corrected(changes: FactChanges) -> Corrected:
    """The result of a correction: its one fact's change, and the weight and status it left."""
    listed = changes.listed()
    after = listed[0].after if listed else None
    return Corrected(changes=listed, weight=after[0] if after else None, status=after[1] if after else None)
