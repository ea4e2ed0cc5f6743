"""What the Memory reads page offers: the open turns a person may read through (R19, R20)."""

from __future__ import annotations

from collections.abc import Iterable

from ..rules.visibility import reads_through
from ..usecases.shapes import RunRow


def readable_turns(runs: Iterable[RunRow], person: str | None) -> list[tuple[str, str]]:
    """(run, turn) of each open turn of a run still going whose person is `person`, in the runs' order."""
    return [
        (r["id"], t["id"])
        for r in runs
        if not r["ended"] and reads_through(person, runs_person=r["person"])
        for t in r["turns"]
        if t["status"] == "open"
    ]
