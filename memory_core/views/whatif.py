"""What-if: replay a scenario under another combination of settings and compare the graphs."""

from __future__ import annotations

import copy
from typing import Any

from ..format.checks import check
from ..format.replay import replay
from ..rules.settings import DEFAULT_SETTINGS
from ..store.database import make_engine
from ..usecases.facade import MemoryService
from .viz import fact_label

Obj = dict[str, Any]


def initial_settings(doc: Obj, org: str) -> dict[str, bool]:
    """An organization's settings as the scenario starts them (defaults filled in)."""
    for o in doc.get("organizations", []):
        if o["id"] == org:
            return {**DEFAULT_SETTINGS, **o.get("settings", {})}
    return dict(DEFAULT_SETTINGS)


def _facts(state: Obj) -> dict[tuple[str, str, str], Obj]:
    out: dict[tuple[str, str, str], Obj] = {}
    for org, o in state["organizations"].items():
        out |= {("world", org, fact_label(f)): f for f in o["world"]["facts"]}
    for person, p in state["people"].items():
        out |= {("user", person, fact_label(f)): f for f in p["user"]["facts"]}
    for run, r in state["runs"].items():
        out |= {("flow", run, fact_label(f)): f for f in r["flow"]["facts"]}
    return out


def replay_state(doc: Obj) -> Obj:
    """The state a scenario document ends in, on a fresh in-memory memory."""
    engine, _ = replay(check(copy.deepcopy(doc)), MemoryService(make_engine("sqlite://")))
    return engine.state()


def compare(doc: Obj, org: str, settings: dict[str, bool]) -> Obj:
    """Both replays side by side: each fact's weight and status as written and under `settings`."""
    alt = copy.deepcopy(doc)
    for o in alt.get("organizations", []):
        if o["id"] == org:
            o["settings"] = dict(settings)
    base_facts, alt_facts = _facts(replay_state(doc)), _facts(replay_state(alt))
    rows = []
    for key in sorted(base_facts.keys() | alt_facts.keys()):
        b, a = base_facts.get(key), alt_facts.get(key)
        if b is None or a is None:
            diff = "only what-if" if b is None else "only as written"
        elif b["status"] != a["status"]:
            diff = "status"
        elif b["weight"] != a["weight"]:
            diff = "weight"
        else:
            diff = ""
        rows.append(
            {
                "graph": key[0],
                "owner": key[1],
                "fact": key[2],
                "as written": b["weight"] if b else None,
                "status as written": b["status"] if b else None,
                "what if": a["weight"] if a else None,
                "status what if": a["status"] if a else None,
                "difference": diff,
            }
        )
    return {"rows": rows, "counts": {"base": len(base_facts), "alt": len(alt_facts)}}
