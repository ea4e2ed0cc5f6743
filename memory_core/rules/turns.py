"""The turn state machine (R1 to R3): which transitions a turn may make."""

from __future__ import annotations

from .vocabulary import TURN_END_STATUSES

_TRANSITIONS = {"open": {*TURN_END_STATUSES, "replaced"}, "completed": {"replaced"}}


def teaches(status: str | None) -> bool:
    """R1, R2, R5: only what completed teaches (a turn, or nested work a record came from)."""
    return status == "completed"


def takes_events(status: str) -> bool:
    """R1, R2: only an open turn takes events (records, steps, calls, reads, its end)."""
    return status == "open"


def may_transition(current: str, new: str) -> bool:
    """The turn state machine: open to an end, open or completed to replaced, nothing else."""
    return new in _TRANSITIONS.get(current, set())
