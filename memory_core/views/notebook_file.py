"""A notebook's file as it is read back (issue #26): like a scenario file (depth, numbers, keys),
then each field checked to be what this version writes (views/notebook.Notebook); a damaged file
is NotebookDamaged, said."""

from __future__ import annotations

from pathlib import Path

from ..plain import Obj
from . import cell_said as said


class NotebookDamaged(ValueError):
    """A notebook's file that cannot be reopened as it is: what is wrong, and where."""


def damaged(name: str, field: str, what: str) -> NotebookDamaged:
    """The file `name` is damaged at `field`, said."""
    return NotebookDamaged(f"{name}: `{field}` {what}")


def check_results(name: str, results: dict[str, Obj]) -> None:
    """Each kept result read as its kind says (views/cell_said), or NotebookDamaged naming it."""
    for key, res in results.items():
        try:
            said.read(res)
        except ValueError as exc:
            raise damaged(name, f"results.{key[:20]}", f"is not a cell's result this version reads: {exc}") from None


def stamp(path: Path) -> tuple[int, int] | None:
    """The file's modification time and size, or None when it cannot be read."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
