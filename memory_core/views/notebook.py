"""The dashboard's notebook as plain data: a scenario run cell by cell against a scratch memory.

A notebook is a dict that Streamlit's session state can hold: the scenario document, its checked
form (checked once when the document changes, never per cell), the URL of its scratch database,
how many cells ran, each cell's result, the replay logs, the outcome each note was written for, and
a short stack of earlier documents to undo edits. It drives the same EventEngine as the replay
command, so running every cell ends in the same state as `replay` of the downloaded file. It is
kept on disk beside its scratch memory (`save`, `reopen`), so a reload of the page finds it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..format.checks import Scenario
from ..format.replay import EventEngine
from ..format.scenario import decode, parse, to_json
from ..usecases.facade import MemoryService
from .cells import claim_from, compact, describe, outcome, summary
from .notebook_file import NotebookDamaged, checked_file, stamp
from .notebook_scrub import scrub

__all__ = ["claim_from", "compact", "describe", "summary"]  # where pages and tests found them

from ..plain import Obj

END_STATUSES = ("completed", "failed", "cancelled")
UNDO_DEPTH = 20
NOTEBOOK_ID = re.compile(r"[0-9a-f]{32}")
#: What the notebook's file keeps: everything but the checked form (checked again on reopening)
#: and the undo stack (its own file, written only when an edit changes it).
KEPT = (
    "id",
    "file",
    "scenario",
    "gen",
    "cursor",
    "results",
    "moments",
    "reads",
    "refused",
    "outside",
    "notes",
    "story",
    "last",
    "rev",
)


def notebook_dir() -> Path:
    """Where scratch memories live: `MEMORY_NOTEBOOK_DIR`, else `.memory/notebooks`."""
    return Path(os.environ.get("MEMORY_NOTEBOOK_DIR") or ".memory/notebooks")


@lru_cache(maxsize=32)
def scratch_service(url: str) -> MemoryService:
    """One service per scratch database, shared by reruns."""
    return MemoryService.at(url)


def checked(doc: Obj) -> Scenario:
    """The scenario a notebook document stands for, read by the parser and check of `replay`
    (scenario.parse); FormatError names the place of a problem."""
    return parse(json.dumps(doc))


def new(doc: Obj, name: str = "") -> Obj:
    """A notebook for a scenario document, with a fresh scratch memory holding its setup."""
    return _opened(checked(doc), name)


def load_text(text: str | bytes, name: str = "") -> Obj:
    """A notebook from uploaded or pasted scenario text, read exactly as `replay` reads a file
    (scenario.parse); FormatError says where the file is wrong."""
    return _opened(parse(text), name)


def _opened(scenario: Scenario, name: str) -> Obj:
    nb: Obj = {
        "id": uuid.uuid4().hex,
        "file": name,
        "scenario": to_json(scenario),
        "checked": scenario,
        "db": "",
        "notes": [None] * len(scenario.events),  # the outcome each note was written for
        "story": "original",  # until the first edit, notes are judged by the story as opened
        "undo": [],
        "rev": 0,
    }
    return reset(nb)


def _touch(nb: Obj) -> None:
    nb["rev"] = nb.get("rev", 0) + 1


def scenario_of(nb: Obj) -> Scenario:
    """The checked form of the notebook's document, kept until the document changes."""
    sc = nb.get("checked")
    if sc is None:
        sc = nb["checked"] = checked(nb["scenario"])
    return sc


def digest(nb: Obj) -> str:
    """A digest of the notebook's document, kept until the document changes: what caches of the
    page that depend only on the cells are keyed on."""
    if not nb.get("digest"):
        text = json.dumps(nb["scenario"], sort_keys=True, ensure_ascii=False)
        nb["digest"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return str(nb["digest"])


def events(nb: Obj) -> list[Obj]:
    """The checked events (defaults filled in), one a cell."""
    return scenario_of(nb).events


def scratch_path(nb_id: str, gen: int) -> Path:
    """Where a notebook's scratch memory lives: named by its id and generation (one more at each
    reset), in the notebooks' folder, never by anything a notebook's file says (#26)."""
    if not NOTEBOOK_ID.fullmatch(nb_id) or not isinstance(gen, int) or isinstance(gen, bool) or gen < 0:
        raise ValueError(f"not a notebook's scratch memory: {nb_id!r} generation {gen!r}")
    return notebook_dir() / f"{nb_id}.{gen}.db"


def scratch_url(nb_id: str, gen: int) -> str:
    """The database URL of a notebook's scratch memory (scratch_path)."""
    return f"sqlite:///{scratch_path(nb_id, gen)}"


def reset(nb: Obj) -> Obj:
    """Forget every run cell: a new scratch memory with only the scenario's setup.

    Two tabs on one notebook may reset at once (#26, point 12): each takes a generation no file and
    no other tab has taken (a claim made with O_EXCL beside it), never deletes a file it did not
    leave, and keeps the generation it leaves until the next reset, since another tab's run may
    still be reading it; older ones go."""
    left = int(nb.get("gen") or 0)
    notebook_dir().mkdir(parents=True, exist_ok=True)
    gen, claim = _claim(nb["id"], left + 1)
    try:
        nb.update(gen=gen, db=scratch_url(nb["id"], gen), cursor=0, last=None)
        nb.update(results={}, reads=[], refused=[], outside=[])
        svc = scratch_service(nb["db"])
        EventEngine(svc).setup(scenario_of(nb))
    finally:
        claim.unlink(missing_ok=True)
    nb["moments"] = {"-1": svc.clock()}  # the memory's clock after the setup, then after each cell (R32)
    _drop_before(nb["id"], left)
    _touch(nb)
    return nb


def _claim(nb_id: str, gen: int) -> tuple[int, Path]:
    """The first generation from `gen` on that no scratch file holds and no one claimed, claimed."""
    while True:
        path = scratch_path(nb_id, gen)
        claim = path.with_name(f"{path.name}.claim")
        if not path.exists():
            try:
                os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                return gen, claim
            except FileExistsError:
                pass
        gen += 1


def _drop_before(nb_id: str, gen: int) -> None:
    """The notebook's scratch memories of generations before `gen`, and SQLite's files beside them
    (and a claim a killed reset left); nothing else (their names are their own)."""
    scratch_service.cache_clear()
    for path in notebook_dir().glob(f"{nb_id}.*"):
        number = path.name.removeprefix(f"{nb_id}.").split(".")[0]
        if number.isdigit() and int(number) < gen:
            path.unlink(missing_ok=True)


def service(nb: Obj) -> MemoryService:
    return scratch_service(nb["db"])


def _engine(nb: Obj) -> EventEngine:
    return EventEngine(service(nb), reads=nb["reads"], refused=nb["refused"])


def _notes(nb: Obj) -> list[Obj | None]:
    notes = nb.setdefault("notes", [])
    n = len(events(nb))
    if len(notes) != n:  # a notebook made before notes were kept
        notes[:] = (notes + [None] * n)[:n]
    return notes


def run_next(nb: Obj) -> Obj | None:
    """Run the next cell, only its use case on the scratch memory; its result, or None when every
    cell ran. A note whose outcome is not known yet takes this one."""
    evs = events(nb)
    i = nb["cursor"]
    if i >= len(evs):
        return None
    engine = _engine(nb)
    res = describe(engine.apply(i, evs[i]))
    nb["results"][str(i)] = res
    nb.setdefault("moments", {})[str(i)] = engine.moments[-1]
    notes = _notes(nb)
    if notes[i] is None:
        notes[i] = outcome(res)
    nb["cursor"] = i + 1
    nb["last"] = i
    _touch(nb)
    return res


def run_to(nb: Obj, index: int) -> None:
    """Run cells up to and including `index` (resetting first if it already ran past it)."""
    if nb["cursor"] > index + 1:
        reset(nb)
    while nb["cursor"] <= index and run_next(nb) is not None:
        pass


def run_all(nb: Obj) -> None:
    while run_next(nb) is not None:
        pass


# --- editing cells, and undoing an edit ----------------------------------------------------------


def _story_outcomes(nb: Obj) -> None:
    """Before the first edit: the outcome of each noted cell not run yet, in the story as opened
    (the cells after the cursor run in a sandbox that is rolled back), so each note is later judged
    by the outcome it was written for."""
    evs, notes = events(nb), _notes(nb)
    todo = [i for i in range(nb["cursor"], len(evs)) if notes[i] is None and nb["scenario"]["events"][i].get("note")]
    if not todo:
        return
    try:
        with service(nb).sandbox() as box:
            engine = EventEngine(box)
            for i in range(nb["cursor"], todo[-1] + 1):
                res = describe(engine.apply(i, evs[i]))
                if i in todo:
                    notes[i] = outcome(res)
    except Exception:  # noqa: BLE001 - a note left unjudged is better than an edit refused
        return


def _replace_events(nb: Obj, new_events: list[Obj], first_changed: int, order: list[int | None]) -> None:
    """Apply an edit: `order` says, for each new cell, which old cell it was (None: a new cell, or
    one whose note changed, judged by its next outcome)."""
    doc = {**nb["scenario"], "events": new_events}
    sc = checked(doc)  # a bad edit raises FormatError and changes nothing
    if nb.get("story") == "original":
        _story_outcomes(nb)
        nb["story"] = "edited"
    _push_undo(nb)
    old = _notes(nb)
    ran = nb["cursor"]
    nb.update(scenario=to_json(sc), checked=sc, digest=None, notes=[None if j is None else old[j] for j in order])
    if first_changed < ran:  # an edit above the run cells: recompute memory to the same point
        reset(nb)
        run_to(nb, min(ran, len(new_events)) - 1)
    _touch(nb)


def _push_undo(nb: Obj) -> None:
    stack = nb.setdefault("undo", [])
    stack.append({"scenario": nb["scenario"], "notes": list(_notes(nb))})
    del stack[:-UNDO_DEPTH]
    nb["undo_rev"] = nb.get("undo_rev", 0) + 1


def insert_cell(nb: Obj, index: int, event: Obj) -> None:
    evs = list(nb["scenario"]["events"])
    evs.insert(index, event)
    order: list[int | None] = list(range(len(evs) - 1))
    order.insert(index, None)
    _replace_events(nb, evs, index, order)


def update_cell(nb: Obj, index: int, event: Obj) -> None:
    """Change a cell; a changed note is written for the outcome the cell has from now on."""
    evs = list(nb["scenario"]["events"])
    order: list[int | None] = list(range(len(evs)))
    if evs[index].get("note") != event.get("note"):
        order[index] = None
    evs[index] = event
    _replace_events(nb, evs, index, order)


def delete_cell(nb: Obj, index: int) -> None:
    evs = list(nb["scenario"]["events"])
    del evs[index]
    order: list[int | None] = [j for j in range(len(evs) + 1) if j != index]
    _replace_events(nb, evs, index, order)


def move_cell(nb: Obj, index: int, offset: int) -> None:
    evs = list(nb["scenario"]["events"])
    to = index + offset
    if not 0 <= to < len(evs):
        return
    evs[index], evs[to] = evs[to], evs[index]
    order: list[int | None] = list(range(len(evs)))
    order[index], order[to] = order[to], order[index]
    _replace_events(nb, evs, min(index, to), order)


def can_undo(nb: Obj) -> bool:
    return bool(nb.get("undo"))


def undo(nb: Obj) -> bool:
    """Put back the document before the last edit, re-running the cells that ran if it differs
    above the cursor; False when there is nothing to undo."""
    if not nb.get("undo"):
        return False
    prev = nb["undo"].pop()
    nb["undo_rev"] = nb.get("undo_rev", 0) + 1
    old, back = nb["scenario"]["events"], prev["scenario"]["events"]
    first = next((i for i, (x, y) in enumerate(zip(old, back, strict=False)) if x != y), min(len(old), len(back)))
    ran = nb["cursor"]
    nb.update(scenario=prev["scenario"], checked=checked(prev["scenario"]), digest=None, notes=list(prev["notes"]))
    if first < ran:
        reset(nb)
        run_to(nb, min(ran, len(back)) - 1)
    _touch(nb)
    return True


def edited(nb: Obj) -> bool:
    """Whether the document differs from the one opened (some edit is still there to undo)."""
    return bool(nb.get("undo"))


# --- kept on disk: a reload of the page (a new session) reopens the notebook -----------------


def _path(nb_id: str, kind: str) -> Path | None:
    return notebook_dir() / f"{nb_id}.{kind}.json" if NOTEBOOK_ID.fullmatch(nb_id or "") else None


def _write(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)  # a reader finds the old file or the new one, never half of one


def save(nb: Obj) -> None:
    """Keep the notebook on disk beside its scratch memory, when it changed since last kept."""
    main, stack = _path(nb["id"], "notebook"), _path(nb["id"], "undo")
    if main is None or stack is None:
        return
    if nb.get("_saved") != nb.get("rev"):
        main.parent.mkdir(parents=True, exist_ok=True)
        _write(main, {"format": "memory-notebook/1", **{k: nb.get(k) for k in KEPT}})
        nb["_saved"] = nb.get("rev")
        nb["_file"] = stamp(main)
    if nb.get("_saved_undo") != nb.get("undo_rev"):
        _write(stack, nb.get("undo", []))
        nb["_saved_undo"] = nb.get("undo_rev")


def reopen(nb_id: str) -> Obj | None:
    """The notebook kept under this id (its edits, cursor and results), or None if there is none;
    NotebookDamaged if its file is not one this version wrote (read as a scenario file is: depth,
    numbers, keys, then every field checked). Its scratch memory is the one its id and generation
    name; if that file is gone (or the notebook was kept without the moment each cell left) the
    cells that ran run again."""
    main, stack = _path(nb_id, "notebook"), _path(nb_id, "undo")
    if main is None or stack is None or not main.exists():
        return None
    try:
        data = decode(main.read_bytes())
        undo_stack = decode(stack.read_bytes()) if stack.exists() else []
    except OSError as exc:
        raise NotebookDamaged(f"{main.name}: cannot be read ({exc.strerror})") from None
    except FormatError as exc:
        raise NotebookDamaged(f"{main.name}: {exc}") from None
    nb = checked_file(main.name, nb_id, data, undo_stack, KEPT)
    nb["db"] = scratch_url(nb_id, nb["gen"])
    moments = nb.get("moments") or {}
    if not scratch_path(nb_id, nb["gen"]).exists() or len(moments) != nb["cursor"] + 1:
        # Its scratch memory is gone, or it was kept without the moment each cell left (R32):
        # the cells that ran run again.
        ran = nb["cursor"]
        reset(nb)
        run_to(nb, ran - 1)
    nb["_saved"], nb["_saved_undo"] = nb["rev"], nb["undo_rev"]
    nb["_file"] = stamp(main)
    return nb


def changed_elsewhere(nb: Obj) -> bool:
    """Whether the notebook's file changed since this copy kept or read it: another tab or window
    on the same notebook saved (#26). One notebook has one scratch memory, so the copy that did
    not write must be read again before it runs or edits anything: the last change wins."""
    main = _path(str(nb.get("id")), "notebook")
    return bool(main is not None and nb.get("_file") is not None and stamp(main) != nb["_file"])


# --- what a turn would do, and the memory as the other pages see it ----------------------------


def preview_end_turn(nb: Obj, turn: str) -> dict[str, Obj]:
    """What a turn would teach if it completed, failed or was cancelled now (sandboxed, R1, R2)."""
    out = {}
    for status in END_STATUSES:
        with service(nb).sandbox() as box:
            result = EventEngine(box).apply(-1, {"do": "end_turn", "turn": turn, "status": status})
            out[status] = describe(result)
    return out


def note_outside_change(nb: Obj, what: str) -> None:
    """Record that a page changed this notebook's memory outside its cells (a read, a setting, an
    erasure): the Notebook says so, since a replay of the cells would not reproduce it."""
    nb.setdefault("outside", []).append(what)
    _touch(nb)
    if nb.get("id"):
        save(nb)


def scrub_results(nb: Obj) -> int:
    """Take what the notebook's own cells erased out of its saved results, reads and refusals, and
    keep it so on disk (views/notebook_scrub.py); how many values went (0: nothing to scrub)."""
    n = scrub(nb)
    if n:
        _touch(nb)
        save(nb)
    return n


def state(nb: Obj) -> Obj:
    """The notebook's memory as `memory-state/1`, with the reads and refusals of the cells run."""
    return _engine(nb).state()
