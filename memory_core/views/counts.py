"""Counts said with what they count (#25), so two differing numbers of one page each have their word."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .text import plural

#: The order statuses are said in.
STATUSES = ("active", "disputed", "retracted")


def by_status(statuses: Iterable[str]) -> str:
    """`172 active, 4 disputed and 1 retracted` (a status none holds is left out)."""
    n = Counter(statuses)
    parts = [f"{n[s]:,} {s}" for s in (*STATUSES, *sorted(set(n) - set(STATUSES))) if n[s]]
    if not parts:
        return "none"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def world_table(statuses: list[str], total: int | None, on_map: int) -> str:
    """What a table of World facts lists beside the map's count of active facts (R18): every status."""
    listed = len(statuses)
    if total is not None and total > listed:
        head = f"The {listed:,} heaviest of {plural(total, 'World fact')}, of every status"
    elif total is None and listed:
        head = f"The {listed:,} heaviest World facts, of every status"
    else:
        head = f"{plural(listed, 'World fact')}, of every status: {by_status(statuses)}"
    return (
        f"{head}. The map above counts only the {plural(on_map, 'active fact')} (R18); disputed and retracted "
        "facts are not on it (R28)."
    )
