"""The dashboard's notebook as plain data: a scenario run cell by cell against a scratch memory.

A notebook is a dict that Streamlit's session state can hold: the scenario document, the
URL of its scratch database, how many cells ran, each cell's result, and the replay logs.
It drives the same event Engine as the replay command, so running every cell ends in the
same state as `replay` of the downloaded file.
"""

from __future__ import annotations

import copy
import json
import os
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..format.checks import Scenario
from ..format.replay import Engine, EventResult
from ..format.scenario import parse, to_json
from ..rules.wording import RULE_TEXT
from ..store.database import make_engine
from ..store.graph import FactChange
from ..usecases.facade import MemoryService
from ..usecases.results import TurnEnded

Obj = dict[str, Any]
END_STATUSES = ("completed", "failed", "cancelled")


def notebook_dir() -> Path:
    """Where scratch memories live: `MEMORY_NOTEBOOK_DIR`, else `.memory/notebooks`."""
    return Path(os.environ.get("MEMORY_NOTEBOOK_DIR") or ".memory/notebooks")


@lru_cache(maxsize=32)
def scratch_service(url: str) -> MemoryService:
    """One service per scratch database, shared by reruns."""
    return MemoryService(make_engine(url))


def checked(doc: Obj) -> Scenario:
    """The scenario a notebook document stands for, read by the parser and check of `replay`
    (scenario.parse); FormatError names the place of a problem."""
    return parse(json.dumps(doc))


def new(doc: Obj) -> Obj:
    """A notebook for a scenario document, with a fresh scratch memory holding its setup."""
    return _opened(checked(doc))


def _opened(scenario: Scenario) -> Obj:
    nb: Obj = {"scenario": to_json(scenario), "db": "", "cursor": 0, "results": {}, "reads": [], "refused": []}
    return reset(nb)


def reset(nb: Obj) -> Obj:
    """Forget every run cell: a new scratch memory with only the scenario's setup."""
    old = nb.get("db", "")
    folder = notebook_dir()
    folder.mkdir(parents=True, exist_ok=True)
    nb.update(
        db=f"sqlite:///{folder / (uuid.uuid4().hex + '.db')}", cursor=0, results={}, reads=[], refused=[], outside=[]
    )
    Engine(scratch_service(nb["db"])).setup(checked(nb["scenario"]))
    _drop(old)
    return nb


def _drop(url: str) -> None:
    if url.startswith("sqlite:///"):
        scratch_service.cache_clear()
        for p in Path(url.removeprefix("sqlite:///")).parent.glob(Path(url).name + "*"):
            p.unlink(missing_ok=True)


def service(nb: Obj) -> MemoryService:
    return scratch_service(nb["db"])


def _engine(nb: Obj) -> Engine:
    return Engine(service(nb), reads=nb["reads"], refused=nb["refused"])


def events(nb: Obj) -> list[Obj]:
    """The checked events (defaults filled in), one a cell."""
    return checked(nb["scenario"]).events


def run_next(nb: Obj) -> Obj | None:
    """Run the next cell; its result, or None when every cell ran."""
    evs = events(nb)
    if nb["cursor"] >= len(evs):
        return None
    i = nb["cursor"]
    result = _engine(nb).apply(i, evs[i])
    nb["results"][str(i)] = describe(result)
    nb["cursor"] = i + 1
    return nb["results"][str(i)]


def run_to(nb: Obj, index: int) -> None:
    """Run cells up to and including `index` (resetting first if it already ran past it)."""
    if nb["cursor"] > index + 1:
        reset(nb)
    while nb["cursor"] <= index and run_next(nb) is not None:
        pass


def run_all(nb: Obj) -> None:
    while run_next(nb) is not None:
        pass


# --- editing cells -------------------------------------------------------------------------


def _replace_events(nb: Obj, new_events: list[Obj], first_changed: int) -> None:
    doc = copy.deepcopy(nb["scenario"])
    doc["events"] = new_events
    checked(doc)  # a bad edit raises FormatError and changes nothing
    ran = nb["cursor"]
    nb["scenario"] = to_json(checked(doc))
    if first_changed < ran:  # an edit above the run cells: recompute memory to the same point
        reset(nb)
        run_to(nb, min(ran, len(new_events)) - 1)


def insert_cell(nb: Obj, index: int, event: Obj) -> None:
    evs = list(nb["scenario"]["events"])
    evs.insert(index, event)
    _replace_events(nb, evs, index)


def update_cell(nb: Obj, index: int, event: Obj) -> None:
    evs = list(nb["scenario"]["events"])
    evs[index] = event
    _replace_events(nb, evs, index)


def delete_cell(nb: Obj, index: int) -> None:
    evs = list(nb["scenario"]["events"])
    del evs[index]
    _replace_events(nb, evs, index)


def move_cell(nb: Obj, index: int, offset: int) -> None:
    evs = list(nb["scenario"]["events"])
    to = index + offset
    if not 0 <= to < len(evs):
        return
    evs[index], evs[to] = evs[to], evs[index]
    _replace_events(nb, evs, min(index, to))


# --- what a cell did ------------------------------------------------------------------------


def change_json(c: FactChange) -> Obj:
    f = c.fact
    obj = f["object"].get("name", f["object"].get("value"))
    return {
        "graph": c.graph,
        "owner": c.owner,
        "fact": f"{f['subject']['name']} —{f['relation']}→ {obj}",
        "change": c.kind,
        "weight_before": c.before[0] if c.before else None,
        "weight_after": c.after[0] if c.after else None,
        "status_before": c.before[1] if c.before else None,
        "status_after": c.after[1] if c.after else None,
    }


def describe(result: EventResult) -> Obj:
    """A cell's result as plain data: applied or refused, fact changes, claims kept out and why
    (one entry per claim, with what it says, R10), and what else the use case said (`detail`)."""
    if result.refused:
        return {
            "index": result.index,
            "do": result.do,
            "status": "refused",
            "reason": result.reason,
            "message": result.message,
            "changes": [],
            "skipped": [],
            "detail": {},
        }
    assert result.outcome is not None
    outcome = result.outcome
    skipped = [
        {**s.stored(), "why": RULE_TEXT.get(s.rule, ""), "claim_text": s.label}
        for s in (outcome.skipped if isinstance(outcome, TurnEnded) else ())
    ]
    detail = outcome.to_json()
    detail.pop("skipped", None)  # in `skipped` above, with what each claim says
    return {
        "index": result.index,
        "do": result.do,
        "status": "ok",
        "reason": None,
        "message": None,
        "changes": [change_json(c) for c in outcome.changes],
        "skipped": skipped,
        "detail": detail,
    }


def preview_end_turn(nb: Obj, turn: str) -> dict[str, Obj]:
    """What a turn would teach if it completed, failed or was cancelled now (sandboxed, R1, R2)."""
    out = {}
    for status in END_STATUSES:
        with service(nb).sandbox() as box:
            result = Engine(box).apply(-1, {"do": "end_turn", "turn": turn, "status": status})
            out[status] = describe(result)
    return out


def note_outside_change(nb: Obj, what: str) -> None:
    """Record that a page changed this notebook's memory outside its cells (a read, a setting, an
    erasure): the Notebook says so, since a replay of the cells would not reproduce it."""
    nb.setdefault("outside", []).append(what)


def state(nb: Obj) -> Obj:
    """The notebook's memory as `memory-state/1`, with the reads and refusals of the cells run."""
    return _engine(nb).state()


def load_text(text: str | bytes) -> Obj:
    """A notebook from uploaded or pasted scenario text, read exactly as `replay` reads a file
    (scenario.parse); FormatError says where the file is wrong."""
    return _opened(parse(text))


# --- cells as people read and write them ---------------------------------------------------


def summary(e: Obj) -> str:
    """One line that says what a cell does."""
    d = e["do"]
    if d == "start_run":
        eph = ", ephemeral" if e.get("ephemeral") else ""
        return f"{e['person']} starts run {e['run']} in {e['org']} ({e.get('surface', 'workflow')}{eph})"
    if d == "open_turn":
        req = e["request"] if isinstance(e["request"], str) else e["request"].get("text", "")
        rep = f", replacing {e['replaces']}" if e.get("replaces") else ""
        return f"turn {e['turn']} opens in {e['run']}{rep}: “{req}”"
    if d in ("record", "step"):
        r = e.get("record") or {}  # a checked event keeps the record's fields under `record`
        n = len(r.get("claims", []))
        head = f"step {e['step']} in {e['turn']}" if d == "step" else f"record in {e['turn']}"
        within = f" within {r['within']}" if r.get("within") else ""
        src = f" from {r.get('origin')} {r.get('source') or ''}".rstrip() if r else ""
        return f"{head}{within}{src}: {n} claim{'s' if n != 1 else ''}"
    if d in ("call", "return"):
        st = f" → {e['status']}" if d == "return" else ""
        return f"{d} {e['work']} in {e['turn']}{st}"
    if d == "read":
        who = f" by step {e['step']}" if e.get("step") else (f" within {e['within']}" if e.get("within") else "")
        return f"{e['call']}{who} in {e['turn']}: {json.dumps(e.get('args', {}), ensure_ascii=False)}"
    if d == "end_turn":
        return f"turn {e['turn']} ends {e['status']}"
    if d == "end_run":
        return f"run {e['run']} ends"
    if d == "delete_run":
        return f"{e['by']} deletes run {e['run']}"
    if d == "delete_account":
        return f"{e['person']} deletes their account"
    if d == "set_settings":
        return f"{e['by']} sets {json.dumps(e['settings'])} in {e['org']}"
    f = e["fact"]
    o = f["object"].get("name", f["object"].get("value"))
    return f"{e['by']} {d}s {f['subject']['name']} —{f['relation']}→ {o} ({e.get('graph', 'world')})"


def claim_from(*, graph: str, subject: str, subject_kind: str, relation: str, obj: str, object_kind: str) -> Obj:
    """A claim from form fields; an object kind of `value` makes a literal."""
    target: Obj = {"value": obj} if object_kind == "value" else {"name": obj, "kind": object_kind}
    return {"graph": graph, "subject": {"name": subject, "kind": subject_kind}, "relation": relation, "object": target}


def compact(event: Obj) -> Obj:
    """Drop empty optional fields a form left blank."""
    return {k: v for k, v in event.items() if v not in (None, "", [], {}) or k in ("claims", "settings", "args")}
