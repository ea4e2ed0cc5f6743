"""The four settings of an organization (R11 to R14), how a change is checked (R15), R11's stored ephemeral."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    name: str
    column: str
    default: bool
    rule: str
    meaning: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "AllowEphemeralRuns",
        "allow_ephemeral_runs",
        False,
        "R11",
        "Whether a run may be ephemeral at all. Off, a run asked for as ephemeral is stored as permanent.",
    ),
    Setting(
        "LearnFromEphemeralRuns",
        "learn_from_ephemeral_runs",
        True,
        "R12",
        "Whether an ephemeral run teaches the World graph. Permanent runs always do.",
    ),
    Setting(
        "LearnFromUsers",
        "learn_from_users",
        True,
        "R13",
        "Whether a person's own words (the request that opened a turn, their answers) may become world knowledge.",
    ),
    Setting(
        "NoMemoryShortcuts",
        "no_memory_shortcuts",
        False,
        "R14",
        "Whether every turn runs all its steps, even where memory already holds a strong enough answer.",
    ),
)


SETTING_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


DEFAULT_SETTINGS: dict[str, bool] = {s.name: s.default for s in SETTINGS}


def settings_problem(changes: Mapping[str, object]) -> str | None:
    """Why a settings change is invalid as a whole (R15), or None when every key and value is good."""
    for name, value in changes.items():
        if name not in SETTING_BY_NAME:
            return f"unknown setting {name!r} (the settings are {', '.join(SETTING_BY_NAME)}) (R15)"
        if not isinstance(value, bool):
            return f"{name} must be true or false, not {value!r} (R15)"
    return None


def stored_ephemeral(*, requested: bool, surface: str, allow_ephemeral_runs: bool) -> bool:
    """R11: off, a run asked for as ephemeral is stored as permanent; Search runs may always be."""
    return requested and (allow_ephemeral_runs or surface == "search")
