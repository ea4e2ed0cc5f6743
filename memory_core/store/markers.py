"""R31's markers: a deletion writes one (models.ScrubDue); a scrub that took the text out removes those it covered."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlmodel import SQLModel

from . import models  # noqa: F401  (registers every table)


def scrub_due(engine: Engine) -> int:
    """How many deletions may still have erased text in the database files (R31); 0 without the table."""
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM scrubdue")).scalar() or 0)
    except (OperationalError, ProgrammingError):
        return 0


def top_marker(engine: Engine) -> int:
    """The newest marker: a scrub that starts now covers it and every one before it."""
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT coalesce(max(id), 0) FROM scrubdue")).scalar() or 0)


def clear_markers(writer: Engine, top: int | None) -> None:
    """Remove the markers a scrub covered (up to `top`; None: all), on the engine's writer."""
    with writer.begin() as conn:
        if top is None:
            conn.execute(text("DELETE FROM scrubdue"))
        else:
            conn.execute(text("DELETE FROM scrubdue WHERE id <= :top"), {"top": top})


def all_tables() -> list[str]:
    """Every table of memory, for a scrub (R31): whatever a deletion touched, all of them are rewritten."""
    return [t.name for t in SQLModel.metadata.sorted_tables]
