"""Frozen copies of the rows an action names (the look-ups that refuse: repository.py), and `picked`."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

R = TypeVar("R", bound="_Ref")


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


@dataclass(frozen=True)
class PersonRef(_Ref):
    id: str


@dataclass(frozen=True)
class RunRef(_Ref):
    id: str
    org_id: str
    person_id: str | None
    workflow_id: str | None
    ephemeral: bool
    ended: bool


@dataclass(frozen=True)
class TurnRef(_Ref):
    id: str
    status: str
    next_record: int
    probes_used: int
    map: dict[str, Any]

    @classmethod
    def of(cls, row: Any) -> TurnRef:
        return replace(super().of(row), map=dict(row.map))
