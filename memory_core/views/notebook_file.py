"""A notebook's file as it is read back (issue #26): like a scenario file (depth, numbers, keys),
then each field checked to be what this version writes; a damaged file is NotebookDamaged, said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..format.scenario import parse
from ..plain import Obj
from . import cell_said as said


class NotebookDamaged(ValueError):
    """A notebook's file that cannot be reopened as it is: what is wrong, and where."""


def checked_file(name: str, nb_id: str, data: Any, undo_stack: Any, kept: tuple[str, ...]) -> Obj:
    """The notebook a file holds, each field of the kind this version writes, or NotebookDamaged."""

    def wrong(field: str, what: str) -> NotebookDamaged:
        return NotebookDamaged(f"{name}: `{field}` {what}")

    if not isinstance(data, dict) or data.get("format") != "memory-notebook/1":
        raise NotebookDamaged(f"{name}: not a memory-notebook/1 file")
    if data.get("id") != nb_id:
        raise wrong("id", "is not the notebook's own")
    nb: Obj = {k: data.get(k) for k in kept} | {"undo": undo_stack, "undo_rev": 0}
    nb["gen"] = data.get("gen", 0)  # kept before generations: its scratch memory is made again
    try:
        nb["checked"] = parse(json.dumps(nb["scenario"]))
    except FormatError as exc:
        raise wrong("scenario", f"is not a scenario this version reads ({exc})") from None
    cells = len(nb["checked"].events)
    whole = (int,)
    for field, ok in (
        ("gen", lambda v: isinstance(v, whole) and not isinstance(v, bool) and v >= 0),
        ("cursor", lambda v: isinstance(v, whole) and not isinstance(v, bool) and 0 <= v <= cells),
        ("rev", lambda v: isinstance(v, whole) and not isinstance(v, bool)),
        ("results", lambda v: isinstance(v, dict) and all(isinstance(r, dict) for r in v.values())),
        ("moments", lambda v: v is None or (isinstance(v, dict) and all(isinstance(m, int) for m in v.values()))),
        ("reads", lambda v: isinstance(v, list)),
        ("refused", lambda v: isinstance(v, list)),
        ("outside", lambda v: isinstance(v, list) and all(isinstance(o, str) for o in v)),
        ("notes", lambda v: isinstance(v, list) and len(v) == cells),
        ("story", lambda v: isinstance(v, str)),
        ("last", lambda v: v is None or (isinstance(v, whole) and not isinstance(v, bool) and 0 <= v < cells)),
        ("file", lambda v: v is None or isinstance(v, str)),
    ):
        if not ok(nb[field]):
            raise wrong(field, f"holds {json.dumps(nb[field])[:40]}, not what a notebook keeps there")
    for key, res in nb["results"].items():  # each kept result read as its kind says (views/cell_said)
        try:
            said.read(res)
        except ValueError as exc:
            raise wrong(f"results.{key[:20]}", f"is not a cell's result this version reads: {exc}") from None
    if not isinstance(undo_stack, list):
        raise NotebookDamaged(f"{name}: its undo stack is not a list")
    return nb


def stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
