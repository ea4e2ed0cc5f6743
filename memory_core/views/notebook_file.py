"""A notebook's files (#26): where, how written, read back (or NotebookDamaged), gone with their run (#40, R29-R31)."""

from __future__ import annotations

import json
import os
import re
import weakref
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..errors import FormatError
from ..format.scenario import decode
from ..usecases.facade import MemoryService

NOTEBOOK_ID = re.compile(r"[0-9a-f]{32}")
#: Why a signed-in caller's link to someone else's notebook opens nothing (notebook.reopen_for).
NOT_YOURS = (
    "it is not yours: a notebook opens only for the person who made it, and one made from an "
    "organization's run for that organization's owner too"
)


def notebook_dir() -> Path:
    """Where scratch memories live: `MEMORY_NOTEBOOK_DIR`, else `.memory/notebooks`."""
    return Path(os.environ.get("MEMORY_NOTEBOOK_DIR") or ".memory/notebooks")


@lru_cache(maxsize=32)
def scratch_service(url: str) -> MemoryService:
    """One service per scratch database, shared by reruns."""
    return MemoryService.at(url)


def scratch_path(nb_id: str, gen: int) -> Path:
    """Its scratch memory's file: by id and generation, never by what its file says (#26)."""
    if not NOTEBOOK_ID.fullmatch(nb_id) or not isinstance(gen, int) or isinstance(gen, bool) or gen < 0:
        raise ValueError(f"not a notebook's scratch memory: {nb_id!r} generation {gen!r}")
    return notebook_dir() / f"{nb_id}.{gen}.db"


class MadeFrom(BaseModel):
    """The run a notebook was made from (Runs' "Open in the Notebook"): its organization and person."""

    org: str
    run: str
    person: str | None


class NotebookDamaged(ValueError):
    """A notebook's file that cannot be reopened as it is: what is wrong, and where."""


def damaged(name: str, field: str, what: str) -> NotebookDamaged:
    """The file `name` is damaged at `field`, said."""
    return NotebookDamaged(f"{name}: `{field}` {what}")


def stamp(path: Path) -> tuple[int, int] | None:
    """The file's modification time and size, or None when it cannot be read."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def path_of(nb_id: str, kind: str) -> Path:
    return notebook_dir() / f"{nb_id}.{kind}.json"


def write(path: Path, data: object) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)  # a reader finds the old file or the new one, never half of one


#: The version of each memory when scrub_erased last looked in it (nothing erased since: no look).
_LOOKED: weakref.WeakKeyDictionary[MemoryService, str] = weakref.WeakKeyDictionary()


def scrub_erased(svc: MemoryService) -> list[str]:
    """R29-R31: each notebook made from a run since erased, or whose person's account is, removed: their ids."""
    version = svc.version()  # memory unchanged since the last look: no file read again (a page run asks each time)
    if version is not None and _LOOKED.get(svc) == version or not (made := _made_from_runs()):
        return []
    orgs = {m.org for m in made.values()} & {o["id"] for o in svc.organizations()}  # another database's: left
    runs = {r["id"]: r["person"] for org in orgs for r in svc.runs(org)}  # gone, or its person's account gone
    removed = [i for i, m in made.items() if m.org in orgs and (m.run not in runs or (m.person and not runs[m.run]))]
    for nb_id in removed:
        remove(nb_id)
    if version is not None:
        _LOOKED[svc] = version
    return removed


def _made_from_runs() -> dict[str, MadeFrom]:
    """Each notebook made from a run, by id: the run, as its `<id>.run.json` says (unreadable: left out)."""
    made = {}
    for path in sorted(notebook_dir().glob("*.run.json")):
        try:
            made[path.name.split(".")[0]] = MadeFrom.model_validate(decode(path.read_bytes()))
        except (OSError, FormatError, ValidationError):
            continue
    return made


def remove(nb_id: str, before: int | None = None) -> None:
    """Every file of a notebook, scratch memories and logs too (R31); `before`: only the older generations' files."""
    if NOTEBOOK_ID.fullmatch(nb_id):
        scratch_service.cache_clear()
        for path in notebook_dir().glob(f"{nb_id}.*"):
            number = path.name.removeprefix(f"{nb_id}.").split(".")[0]
            if before is None or (number.isdigit() and int(number) < before):
                path.unlink(missing_ok=True)
