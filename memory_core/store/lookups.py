"""Finding what an action names, or refusing with the reason the format gives (`unknown_*`)."""

from __future__ import annotations

from sqlmodel import Session

from .. import errors as E
from .models import Organization, Person, Run, Turn


class Lookups:
    """The look-ups every use case starts with; a miss is a refusal that says what names nothing."""

    @staticmethod
    def _org(s: Session, org_id: str) -> Organization:
        org = s.get(Organization, org_id)
        if org is None:
            raise E.UnknownOrg(org_id)
        return org

    @staticmethod
    def _person(s: Session, person_id: str) -> Person:
        person = s.get(Person, person_id)
        if person is None:
            raise E.UnknownPerson(person_id)
        return person

    @staticmethod
    def _run(s: Session, run_id: str) -> Run:
        run = s.get(Run, run_id)
        if run is None:
            raise E.UnknownRun(run_id)
        return run

    @staticmethod
    def _turn(s: Session, turn_id: str) -> tuple[Turn, Run]:
        turn = s.get(Turn, turn_id)
        if turn is None:
            raise E.UnknownTurn(turn_id)
        run = s.get(Run, turn.run_id)
        assert run is not None
        return turn, run
