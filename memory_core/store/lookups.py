"""Finding what an action names, or refusing with the reason the format gives (`unknown_*`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from sqlmodel import Session

from .. import errors as E
from .models import Membership, Organization, Person, Run, Turn

R = TypeVar("R", bound="_Ref")
M = TypeVar("M")


def picked(row: Any, names: str) -> dict[str, Any]:
    """A row's attributes by name, in order: each of `names` a key, `key=attribute` where the two differ."""
    return {k: getattr(row, a or k) for k, _, a in (n.partition("=") for n in names.split())}


class _Ref:
    """A frozen copy of a row: the dataclass's fields, read from the row of the same names."""

    @classmethod
    def of(cls: type[R], row: Any) -> R:
        return cls(**{f.name: getattr(row, f.name) for f in fields(cls)})  # type: ignore[arg-type]


@dataclass(frozen=True)
class OrgRef(_Ref):
    id: str
    name: str
    allow_ephemeral_runs: bool  # R11
    learn_from_ephemeral_runs: bool  # R12
    learn_from_users: bool  # R13
    no_memory_shortcuts: bool  # R14
    since: int


@dataclass(frozen=True)
class PersonRef(_Ref):
    id: str
    name: str


@dataclass(frozen=True)
class RunRef(_Ref):
    id: str
    org_id: str
    person_id: str | None
    workflow_id: str | None
    surface: str
    ephemeral: bool
    ended: bool


@dataclass(frozen=True)
class TurnRef(_Ref):
    id: str
    run_id: str
    status: str
    next_record: int
    probes_used: int
    map: dict[str, Any]
    steps: tuple[dict[str, Any], ...]

    @classmethod
    def of(cls, row: Any) -> TurnRef:
        return replace(super().of(row), map=dict(row.map), steps=tuple(row.steps))


def _found(s: Session, model: type[M], ident: str, missing: Callable[[str], E.Refusal]) -> M:
    """The row of `model` with this id, or the refusal `missing` makes of the id."""
    row = s.get(model, ident)
    if row is None:
        raise missing(ident)
    return row


class Lookups:
    """The look-ups every use case starts with; a miss is a refusal that says what names nothing."""

    @staticmethod
    def _org(s: Session, org_id: str) -> OrgRef:
        return OrgRef.of(_found(s, Organization, org_id, E.UnknownOrg))

    @staticmethod
    def _person(s: Session, person_id: str) -> PersonRef:
        return PersonRef.of(_found(s, Person, person_id, E.UnknownPerson))

    @staticmethod
    def _member(s: Session, person_id: str, org_id: str) -> None:
        """A person a record names: a member of the run's organization, else unknown_person, word for word (#40)."""
        if s.get(Membership, (person_id, org_id)) is None:
            raise E.UnknownPerson(person_id)

    @staticmethod
    def _run(s: Session, run_id: str) -> RunRef:
        return RunRef.of(_found(s, Run, run_id, E.UnknownRun))

    @staticmethod
    def _turn(s: Session, turn_id: str) -> tuple[TurnRef, RunRef]:
        turn = _found(s, Turn, turn_id, E.UnknownTurn)
        return TurnRef.of(turn), RunRef.of(_found(s, Run, turn.run_id, E.UnknownRun))
