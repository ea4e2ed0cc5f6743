"""Tiny scenarios written inline, as networkx's tests write tiny graphs."""

from __future__ import annotations

import copy
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from typing import Any

from backend import fresh_service

from memory_core import MemoryService, parse, replay
from memory_core.__main__ import main
from pages import _links

#: app.py's pages as the tests name them, in its order: the address a link opens ("overview" for the
#: default, served at `/`) -> the page's script (pages/_links.PAGES).
PAGES = {("overview" if p == _links.PAGES[0] else p.address): p.script for p in _links.PAGES}

Obj = dict[str, Any]

BASE: Obj = {
    "format": "memory-scenario/1",
    "organizations": [
        {"id": "acme", "name": "Acme", "owner": "dana"},
        {"id": "globex", "name": "Globex", "owner": "omar"},
    ],
    "people": [
        {"id": "dana", "name": "Dana", "memberships": {"acme": "owner"}},
        {"id": "lee", "name": "Lee", "memberships": {"acme": "member", "globex": "member"}},
        {"id": "omar", "name": "Omar", "memberships": {"globex": "owner"}},
        {"id": "pat", "name": "Pat", "memberships": {}},
    ],
    "workflows": [
        {
            "id": "research",
            "org": "acme",
            "budget": {"MemoryProbes": 2},
            "steps": [
                {"id": "plan", "kind": "model", "admits_calls": True},
                {"id": "draft", "kind": "model"},
                {"id": "lookup", "kind": "tool"},
                {
                    "id": "find_hq",
                    "kind": "tool",
                    "answers": {"subject": {"name": "Globex", "kind": "organization"}, "relation": "headquartered_in"},
                    "min_weight": 0.7,
                },
                {
                    "id": "find_hq_default",
                    "kind": "tool",
                    "answers": {"subject": {"name": "Globex", "kind": "organization"}, "relation": "headquartered_in"},
                },
            ],
        },
        {"id": "free", "org": "acme", "steps": []},
    ],
}


def scenario(events: list[Obj], *, settings: Obj | None = None, **top: Any) -> Obj:
    """A scenario over BASE with these events; `settings` go to acme."""
    doc = copy.deepcopy(BASE)
    if settings:
        doc["organizations"][0]["settings"] = settings
    doc.update(top)
    doc["events"] = events
    return doc


def run(events: list[Obj], *, settings: Obj | None = None, service: MemoryService | None = None) -> Obj:
    """Replay events on a fresh in-memory memory and return the state."""
    svc = service or fresh_service()
    engine, _ = replay(parse(json.dumps(scenario(events, settings=settings))), svc)
    return engine.state()


def entity(name: str, kind: str = "organization") -> Obj:
    return {"name": name, "kind": kind}


def claim(
    subject: str, relation: str, obj: str, *, graph: str = "world", skind: str = "organization", okind: str = "place"
) -> Obj:
    return {"graph": graph, "subject": entity(subject, skind), "relation": relation, "object": entity(obj, okind)}


HQ = claim("Globex", "headquartered_in", "Springfield")
HQ_REF = {"subject": entity("Globex"), "relation": "headquartered_in", "object": entity("Springfield", "place")}


def web(url: str, *claims: Obj, **extra: Any) -> Obj:
    return {"origin": "web", "source": url, "excerpt": f"page {url}", "claims": list(claims), **extra}


def start(run_id: str = "r1", person: str = "dana", org: str = "acme", **extra: Any) -> Obj:
    return {"do": "start_run", "run": run_id, "org": org, "person": person, "workflow": "research", **extra}


def open_turn(turn: str, run_id: str = "r1", request: Any = "Where is Globex?", **extra: Any) -> Obj:
    return {"do": "open_turn", "run": run_id, "turn": turn, "request": request, **extra}


def rec(turn: str, record: Obj, **extra: Any) -> Obj:
    return {"do": "record", "turn": turn, **record, **extra}


def end(turn: str, status: str = "completed") -> Obj:
    return {"do": "end_turn", "turn": turn, "status": status}


def taught_turn(turn: str, *records: Obj, run_id: str = "r1", status: str = "completed") -> list[Obj]:
    return [open_turn(turn, run_id), *(rec(turn, r) for r in records), end(turn, status)]


def world(state: Obj, org: str = "acme") -> list[Obj]:
    return state["organizations"][org]["world"]["facts"]


def weights(facts: list[Obj]) -> dict[tuple[str, str, str], float]:
    return {
        (f["subject"]["name"], f["relation"], f["object"].get("name", f["object"].get("value"))): f["weight"]
        for f in facts
    }


CEO = claim("Globex", "ceo", "Hank Scorpio", okind="person")
LIVES = claim("Hank Scorpio", "lives_in", "Springfield", skind="person")
FOUNDED = {"graph": "world", "subject": entity("Globex"), "relation": "founded", "object": {"value": "1989"}}
LIKES = {
    "graph": "world",
    "subject": entity("Hank Scorpio", "person"),
    "relation": "likes",
    "object": {"value": "hammocks"},
}
PREFERS = {"graph": "user", "subject": entity("Me", "person"), "relation": "prefers", "object": {"value": "tea"}}


# --- the command line, in this process -------------------------------------------------------------


@dataclass(frozen=True)
class Ran:
    """What a command said and its exit code, as `subprocess.run` would give them."""

    returncode: int
    stdout: str
    stderr: str


def memory_cli(*argv: str) -> Ran:
    """`python -m memory_core ARGV`, run in this process: its real `main`, its output captured.

    A new interpreter costs about 0.6 s of CPU (imports) per command; the tests that need a process
    of its own (two at once, a file-size limit, a killed server connection, stdin) still start one."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse: usage errors exit 2, --help 0
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return Ran(code, out.getvalue(), err.getvalue())
