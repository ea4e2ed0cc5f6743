"""Corrections in the store (R28): a dispute added, a fact retracted, and the fact's weight and
status recomputed in the same transaction."""

from __future__ import annotations

from sqlmodel import Session

from .driver import driver_of
from .facts import load_facts, refresh_facts
from .graph import FactChanges
from .models import Dispute, Fact


def add_dispute(s: Session, fact_id: int, *, by: str, contribution: float, moment: int) -> FactChanges:
    """A person's dispute of a fact, and the fact recomputed (R26, R28)."""
    s.add(Dispute(fact_id=fact_id, by=by, contribution=contribution, since=moment))
    return _refresh(s, fact_id, moment)


def retract(s: Session, fact_id: int, *, moment: int) -> FactChanges:
    """The fact retracted at `moment`: never served again (R28)."""
    f = s.get(Fact, fact_id)
    assert f is not None
    f.retracted = True
    f.retracted_at = moment
    s.add(f)
    return _refresh(s, fact_id, moment)


def _refresh(s: Session, fact_id: int, moment: int) -> FactChanges:
    changes = FactChanges()
    with driver_of(s) as db:  # writes what is pending first
        refresh_facts(db, load_facts(db, [fact_id]), changes, moment=moment)
    return changes
