"""The notebook (#23, #37): a scenario run cell by cell on a scratch memory, changed and saved by its methods."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from ..errors import FormatError
from ..format.checks import Scenario
from ..format.replay import EventEngine
from ..format.scenario import decode, parse, to_json
from ..plain import Obj
from ..rules.vocabulary import TURN_END_STATUSES
from ..usecases.facade import MemoryService
from . import notebook_file as nf
from .cell_said import describe, read
from .cells import outcome
from .notebook_file import MadeFrom, NotebookDamaged, notebook_dir, scratch_service
from .notebook_scrub import scrub
from .text import inert

UNDO_DEPTH = 20
Whole = Annotated[int, Field(strict=True, ge=0)]


def checked(doc: Obj) -> Scenario:
    """The scenario a document stands for, read as `replay` reads it (FormatError names the place)."""
    return parse(json.dumps(doc))


class Notebook(BaseModel):
    """A scenario run cell by cell; its fields are what its file keeps, in order, checked on reading."""

    id: str
    file: str | None = None
    scenario: Obj
    gen: Whole = 0
    cursor: Whole = 0
    results: dict[str, Obj] = Field(default_factory=dict)
    moments: dict[str, Annotated[int, Field(strict=True)]] | None = None
    reads: list[Obj] = Field(default_factory=list)
    refused: list[Obj] = Field(default_factory=list)
    outside: list[Annotated[str, Field(strict=True)]] = Field(default_factory=list)
    notes: list[Obj | None]  # the outcome each note was written for (None: judged by its next outcome)
    story: Annotated[str, Field(strict=True)] = "original"  # until the first edit: notes judged by it
    last: Whole | None = None
    rev: Annotated[int, Field(strict=True)] = 0
    author: str | None = None  # who made it, signed in (None: made in the local demo, or before authors were kept)
    made_from: MadeFrom | None = None
    _checked: Scenario = PrivateAttr()  # set wherever the document is
    _digest: str = PrivateAttr(default="")
    _undo: list[Obj] = PrivateAttr(default_factory=list)
    _undo_rev: int = PrivateAttr(default=0)
    _saved: tuple[int, int] | None = PrivateAttr(default=None)  # rev and undo_rev last kept on disk
    _file: tuple[int, int] | None = PrivateAttr(default=None)  # its file as last kept or read

    # --- what it is ----------------------------------------------------------------------------

    def events(self) -> list[Obj]:
        """The checked events (defaults filled in), one a cell: the document is checked when it changes."""
        return self._checked.events

    def digest(self) -> str:
        """A digest of the document, kept until it changes (the page's caches of the cells use it)."""
        if not self._digest:
            text = json.dumps(self.scenario, sort_keys=True, ensure_ascii=False)
            self._digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return self._digest

    @property
    def db(self) -> str:
        """The database URL of its scratch memory (notebook_file.scratch_path)."""
        return f"sqlite:///{nf.scratch_path(self.id, self.gen)}"

    @property
    def service(self) -> MemoryService:
        return scratch_service(self.db)

    def state(self) -> Obj:
        """Its memory as `memory-state/1`, with the reads and refusals of the cells run."""
        return EventEngine(self.service, reads=self.reads, refused=self.refused).state()

    def edited(self) -> bool:
        """Whether the document differs from the one opened (some edit is still there to undo)."""
        return bool(self._undo)

    def _set_document(self, doc: Obj, sc: Scenario, notes: list[Obj | None]) -> None:
        self.scenario, self._checked, self._digest, self.notes = doc, sc, "", notes

    # --- running cells -------------------------------------------------------------------------

    def reset(self) -> Notebook:
        """Forget every run cell: a new scratch memory with only the setup, in a generation no other tab took (#26)."""
        left = self.gen
        notebook_dir().mkdir(parents=True, exist_ok=True)
        self.gen, claim = _claim(self.id, left + 1)
        try:
            self.cursor, self.last, self.results, self.reads, self.refused, self.outside = 0, None, {}, [], [], []
            EventEngine(self.service).setup(self._checked)
        finally:
            claim.unlink(missing_ok=True)
        self.moments = {"-1": self.service.clock()}  # the clock after the setup, then after each cell (R32)
        nf.remove(self.id, before=left)
        self.rev += 1
        return self

    def run_next(self) -> Obj | None:
        """Run the next cell on the scratch memory: its result (None: every cell ran)."""
        evs, i = self.events(), self.cursor
        if i >= len(evs):
            return None
        engine = EventEngine(self.service, reads=self.reads, refused=self.refused)
        res = describe(engine.apply(i, evs[i]))
        self.results[str(i)] = res
        self.moments = (self.moments or {}) | {str(i): engine.moments[-1]}
        if self.notes[i] is None:
            self.notes[i] = outcome(res)
        self.last, self.cursor = i, i + 1
        self.rev += 1
        return res

    def run_to(self, index: int) -> None:
        """Run cells up to and including `index` (resetting first if it already ran past it)."""
        if self.cursor > index + 1:
            self.reset()
        while self.cursor <= index and self.run_next() is not None:
            pass

    def run_all(self, each: Callable[[int], None] = lambda _: None) -> None:
        """Run every cell not run yet; `each` is told how many ran after each one (a progress bar)."""
        while self.run_next() is not None:
            each(self.cursor)

    def preview_end_turn(self, turn: str) -> dict[str, Obj]:
        """What a turn would teach if it completed, failed or was cancelled now (sandboxed, R1, R2)."""
        out = {}
        for status in TURN_END_STATUSES:
            with self.service.sandbox() as box:
                out[status] = describe(EventEngine(box).apply(-1, {"do": "end_turn", "turn": turn, "status": status}))
        return out

    # --- editing cells, and undoing an edit ------------------------------------------------------

    def insert_cell(self, index: int, event: Obj) -> None:
        cells = self._cells()
        self._replace_events([*cells[:index], (None, event), *cells[index:]], index)

    def update_cell(self, index: int, event: Obj) -> None:
        """Change a cell; a changed note is written for the outcome the cell has from now on."""
        cells = self._cells()
        cells[index] = (None if cells[index][1].get("note") != event.get("note") else index, event)
        self._replace_events(cells, index)

    def delete_cell(self, index: int) -> None:
        cells = self._cells()
        self._replace_events(cells[:index] + cells[index + 1 :], index)

    def move_cell(self, index: int, offset: int) -> None:
        cells, to = self._cells(), index + offset
        if 0 <= to < len(cells):
            cells[index], cells[to] = cells[to], cells[index]
            self._replace_events(cells, min(index, to))

    def _cells(self) -> list[tuple[int | None, Obj]]:
        return list(enumerate(self.scenario["events"]))

    def undo(self) -> bool:
        """Put back the document before the last edit (False: nothing to undo)."""
        if not self._undo:
            return False
        prev = self._undo.pop()
        self._undo_rev += 1
        old, back = self.scenario["events"], prev["scenario"]["events"]
        first = next((i for i, (x, y) in enumerate(zip(old, back, strict=False)) if x != y), min(len(old), len(back)))
        self._set_document(prev["scenario"], checked(prev["scenario"]), list(prev["notes"]))
        self._run_again_from(first, len(back))
        return True

    def _replace_events(self, cells: list[tuple[int | None, Obj]], first_changed: int) -> None:
        """Apply an edit: each new cell with its old place (None: new, or its note changed)."""
        sc = checked({**self.scenario, "events": [e for _, e in cells]})  # a bad edit raises FormatError
        if self.story == "original":
            self._story_outcomes()
            self.story = "edited"
        self._undo.append({"scenario": self.scenario, "notes": list(self.notes)})
        del self._undo[:-UNDO_DEPTH]
        self._undo_rev += 1
        self._set_document(to_json(sc), sc, [None if j is None else self.notes[j] for j, _ in cells])
        self._run_again_from(first_changed, len(cells))

    def _run_again_from(self, first_changed: int, cells: int) -> None:
        """After an edit above the run cells, memory recomputed to the same point."""
        ran = self.cursor
        if first_changed < ran:
            self.reset().run_to(min(ran, cells) - 1)
        self.rev += 1

    def _story_outcomes(self) -> None:
        """Before the first edit: the outcome each note not yet run was written for (in a sandbox)."""
        evs, raw = self.events(), self.scenario["events"]
        todo = [i for i in range(self.cursor, len(evs)) if self.notes[i] is None and raw[i].get("note")]
        if not todo:
            return
        try:
            with self.service.sandbox() as box:
                engine = EventEngine(box)
                for i in range(self.cursor, todo[-1] + 1):
                    res = describe(engine.apply(i, evs[i]))
                    if i in todo:
                        self.notes[i] = outcome(res)
        except Exception:  # noqa: BLE001 - a note left unjudged is better than an edit refused
            return

    # --- changes made elsewhere ----------------------------------------------------------------

    def note_outside_change(self, what: str) -> None:
        """Record that a page changed its memory outside its cells (a replay would not)."""
        self.outside.append(what)
        self.rev += 1
        self.save()

    def scrub_results(self) -> int:
        """Scrub what its own cells erased from its saved results and keep that (how many values went)."""
        if n := scrub(self):
            self.rev += 1
            self.save()
        return n

    # --- kept on disk: a reload of the page (a new session) reopens the notebook -----------------

    def save(self) -> None:
        """Keep the notebook on disk beside its scratch memory, when it changed since last kept."""
        main, stack = nf.path_of(self.id, "notebook"), nf.path_of(self.id, "undo")
        saved = self._saved or (-1, -1)
        if saved[0] != self.rev:
            main.parent.mkdir(parents=True, exist_ok=True)
            nf.write(main, {"format": "memory-notebook/1", **self.model_dump()})
            self._file = nf.stamp(main)
            if self.made_from is not None:
                nf.write(nf.path_of(self.id, "run"), self.made_from.model_dump())  # what scrub_erased looks for
        if saved[1] != self._undo_rev:
            nf.write(stack, self._undo)
        self._saved = (self.rev, self._undo_rev)

    def changed_elsewhere(self) -> bool:
        """Whether another tab saved its file since this copy did (#26): then it is read again."""
        return self._file is not None and nf.stamp(nf.path_of(self.id, "notebook")) != self._file


def new(doc: Obj | Scenario, name: str = "", *, made_from: MadeFrom | None = None) -> Notebook:
    """A notebook for a scenario document (or one checked), with a fresh scratch memory holding its setup."""
    scenario = doc if isinstance(doc, Scenario) else checked(doc)
    notes: list[Obj | None] = [None] * len(scenario.events)
    nb = Notebook(id=uuid.uuid4().hex, file=name, scenario=to_json(scenario), notes=notes, made_from=made_from)
    nb._checked = scenario
    return nb.reset()


def load_text(text: str | bytes, name: str = "") -> Notebook:
    """A notebook from scenario text, read exactly as `replay` reads a file (FormatError: where)."""
    return new(parse(text), name)


def run_export(svc: MemoryService, org: str, run_id: str) -> Obj:
    """A real run as a scenario (#23): `doc`, what it leaves out as a `sentence`, `opens` (R30), `made_from` (R29-R31)."""
    # named for the notebook's reader, who need not know where the database is (not `export`'s URL)
    doc, omitted = svc.export_scenario(org=org, run=run_id, where=f"the memory of {org}")
    start = next((e for e in doc["events"] if e["do"] == "start_run"), None)  # none: only settings changes
    left = f"Not everything of run {run_id} can be written back, so the notebook leaves out: {'; '.join(omitted)}."
    return {
        "doc": {**doc, "title": f"Run {run_id} of {org}"},
        "sentence": left if omitted else None,
        "opens": start is not None,
        "made_from": {"org": org, "run": run_id, "person": start["person"] if start else None},
    }


def notebook_of(export: Obj, run_id: str) -> Notebook:
    """A notebook of an exported run (`run-ID.json`), no cell run yet, gone with the run or its person (R29-R31)."""
    return new(export["doc"], f"run-{run_id}.json", made_from=MadeFrom.model_validate(export["made_from"]))


def reopen(nb_id: str) -> Notebook | None:
    """The notebook kept under this id (None: none; NotebookDamaged: not a file this version wrote)."""
    if not nf.NOTEBOOK_ID.fullmatch(nb_id or "") or not (main := nf.path_of(nb_id, "notebook")).exists():
        return None
    stack = nf.path_of(nb_id, "undo")
    try:
        data = decode(main.read_bytes())
        undo_stack = decode(stack.read_bytes()) if stack.exists() else []
    except OSError as exc:
        raise NotebookDamaged(f"{main.name}: cannot be read ({exc.strerror})") from None
    except FormatError as exc:
        raise NotebookDamaged(f"{main.name}: {exc}") from None
    nb = _from_file(main.name, nb_id, data, undo_stack)
    if not nf.scratch_path(nb_id, nb.gen).exists() or len(nb.moments or {}) != nb.cursor + 1:
        # its scratch memory is gone, or it was kept without each cell's moment (R32): the cells run again
        ran = nb.cursor
        nb.reset().run_to(ran - 1)
    nb._saved, nb._file = (nb.rev, 0), nf.stamp(main)
    return nb


def reopen_for(nb_id: str, svc: MemoryService, caller: tuple[str, str] | None) -> tuple[Notebook | None, str]:
    """The notebook kept under this id, or why not: for its author or its run's organization's owner (#40)."""
    try:
        nb = reopen(nb_id)
    except NotebookDamaged as exc:
        return None, inert(exc)
    if nb is None or caller is None or caller[0] == nb.author:
        return nb, ""
    (person, org), made = caller, nb.made_from
    owners = {m["id"] for m in svc.members(org) if m["role"] == "owner"} if made and made.org == org else set()
    return (nb, "") if person in owners else (None, nf.NOT_YOURS)


def _from_file(name: str, nb_id: str, data: object, undo_stack: object) -> Notebook:
    """The notebook a file holds, each field of the kind this version writes (missing: null), or NotebookDamaged."""
    if not isinstance(data, dict) or data.get("format") != "memory-notebook/1":
        raise NotebookDamaged(f"{name}: not a memory-notebook/1 file")
    if data.get("id") != nb_id:
        raise nf.damaged(name, "id", "is not the notebook's own")
    try:
        nb = Notebook.model_validate({k: data.get(k) for k in Notebook.model_fields} | {"gen": data.get("gen", 0)})
        nb._checked = checked(nb.scenario)
        n = len(nb.events())
        bounds = {"cursor": nb.cursor <= n, "notes": len(nb.notes) == n, "last": nb.last is None or nb.last < n}
        wrong = next((field for field, ok in bounds.items() if not ok), None)
    except ValidationError as exc:
        wrong = str(exc.errors()[0]["loc"][0])
    except FormatError as exc:
        raise nf.damaged(name, "scenario", f"is not a scenario this version reads ({exc})") from None
    if wrong:
        raise nf.damaged(name, wrong, f"holds {json.dumps(data.get(wrong))[:40]}, not what a notebook keeps there")
    for key, res in nb.results.items():  # each read as its kind says (views/cell_said)
        try:
            read(res)
        except ValueError as exc:
            raise nf.damaged(name, f"results.{key[:20]}", f"is not a cell's result this version reads: {exc}") from None
    if not isinstance(undo_stack, list):
        raise NotebookDamaged(f"{name}: its undo stack is not a list")
    nb._undo = undo_stack
    return nb


def _claim(nb_id: str, gen: int) -> tuple[int, Path]:
    """The first generation from `gen` on that no scratch file holds and no one claimed, claimed."""
    while True:
        path = nf.scratch_path(nb_id, gen)
        claim = path.with_name(f"{path.name}.claim")
        if not path.exists():
            with contextlib.suppress(FileExistsError):
                os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                return gen, claim
        gen += 1
