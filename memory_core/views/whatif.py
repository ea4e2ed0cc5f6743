"""What-if: replay a scenario under another combination of settings and compare the graphs."""

from __future__ import annotations

import copy
import functools
from collections import Counter

from ..format.checks import check
from ..format.replay import EventEngine, EventResult
from ..plain import Obj
from ..rules.settings import DEFAULT_SETTINGS
from ..rules.wording import fact_label
from ..usecases.facade import MemoryService
from ..usecases.results import RunEnded, RunStarted, StepRun, TurnEnded


def initial_settings(doc: Obj, org: str) -> dict[str, bool]:
    """An organization's settings as the scenario starts them (defaults filled in)."""
    return DEFAULT_SETTINGS | next((o.get("settings", {}) for o in doc.get("organizations", []) if o["id"] == org), {})


def _facts(state: Obj) -> dict[tuple[str, str, str], Obj]:
    """Every fact of a state by its graph, owner and label."""
    owners = {"world": "organizations", "user": "people", "flow": "runs"}
    return {(g, k, fact_label(f)): f for g, key in owners.items() for k, o in state[key].items() for f in o[g]["facts"]}


def _replayed(doc: Obj) -> tuple[Obj, list[EventResult]]:
    """The state a document ends in on a fresh memory, and each event's result (R17: ephemeral runs are erased)."""
    scenario = check(copy.deepcopy(doc))
    engine = EventEngine(MemoryService.at("sqlite://"))
    engine.setup(scenario)
    results = [engine.apply(i, e) for i, e in enumerate(scenario.events)]
    return engine.state(), results


def _diff(base_state: Obj, alt_state: Obj) -> list[Obj]:
    """Each fact of either state: its weight and status as written and what if, and how they differ."""
    base, alt, rows = _facts(base_state), _facts(alt_state), []
    for key in sorted(base.keys() | alt.keys()):
        b, a = base.get(key), alt.get(key)
        row: Obj = dict(zip(("graph", "owner", "fact"), key, strict=True))
        for f, side in ((b, "as written"), (a, "what if")):
            row |= {side: (f or {}).get("weight"), f"status {side}": (f or {}).get("status")}
        if b is None or a is None:
            rows.append(row | {"difference": "only what-if" if b is None else "only as written"})
        else:
            same = "status" if b["status"] != a["status"] else "weight" if b["weight"] != a["weight"] else ""
            rows.append(row | {"difference": same})
    return rows


#: The behaviour a replay counts, in the order the page lists it (claims kept out follow, by rule).
ASKED = "runs asked to be ephemeral (R11)"
BEHAVIOUR = (
    ASKED,
    "of which stored as permanent (R11)",
    "of which erased at their end (R17)",
    "steps run",
    "steps skipped by a shortcut (R22)",
)


def _counted(e: Obj, o: object, *, mine: set[str], turns: set[str]) -> list[str]:
    """The rows of `behaviour` one event's outcome counts in, and the rules of claims it kept out (R8-R10, R30)."""
    if isinstance(o, RunStarted | RunEnded) and e["run"] in mine:
        return _run_counted(e, o)
    if isinstance(o, StepRun) and e["turn"] in turns:
        return ["steps run" if o.shortcut is None else "steps skipped by a shortcut (R22)"]
    if isinstance(o, TurnEnded) and e["turn"] in turns:
        return [k.rule for k in o.skipped]
    return []


def _run_counted(e: Obj, o: RunStarted | RunEnded) -> list[str]:
    """A run of the organization: asked to be ephemeral, and stored as permanent (R11), or erased at its end (R17)."""
    if isinstance(o, RunEnded):
        return ["of which erased at their end (R17)"] if o.erased else []
    if not e.get("ephemeral"):
        return []
    return [ASKED] + ([] if o.ephemeral else ["of which stored as permanent (R11)"])


def behaviour(doc: Obj, results: list[EventResult], org: str) -> dict[str, int]:
    """What the organization's runs did in a replay, by rule (R8-R11, R17, R22, R30)."""
    events = doc.get("events", [])  # the organization's runs, and their turns
    mine = {e["run"] for e in events if e.get("do") == "start_run" and e.get("org") == org}
    turns = {e["turn"] for e in events if e.get("do") == "open_turn" and e.get("run") in mine}
    counted = Counter(
        row for e, r in zip(events, results, strict=False) for row in _counted(e, r.outcome, mine=mine, turns=turns)
    )
    by_number = lambda rule: (int("".join(c for c in rule if c.isdigit())), rule)  # R8a, R8b, R9, R10
    kept = sorted((row for row in counted if row not in BEHAVIOUR), key=by_number)  # a rule: claims it kept out
    return {row: counted[row] for row in BEHAVIOUR} | {f"claims kept out by {rule}": counted[rule] for rule in kept}


def _with_settings(doc: Obj, org: str, settings: dict[str, bool], *, always: bool) -> Obj:
    """The document with `org` on `settings` from the start (`always`: only those unlike its history's end, R16)."""
    alt = copy.deepcopy(doc)
    mine = [e for e in alt["events"] if e["do"] == "set_settings" and e["org"] == org]
    settings = _from_start(initial_settings(doc, org), mine, settings) if always else dict(settings)
    for o in alt.get("organizations", []):
        if o["id"] == org:
            o["settings"] = settings
    alt["events"] = [e for e in alt["events"] if e not in mine or e["settings"]]
    return alt


def _from_start(start: dict[str, bool], mine: list[Obj], settings: dict[str, bool]) -> dict[str, bool]:
    """The start with the settings unlike the history's end, each taken out of the history's changes (R16)."""
    ended = functools.reduce(lambda now, e: now | e["settings"], mine, start)
    flipped = {k: v for k, v in settings.items() if v != ended.get(k)}
    for e in mine:
        e["settings"] = {k: v for k, v in e["settings"].items() if k not in flipped}
    return start | flipped


def compare(doc: Obj, org: str, settings: dict[str, bool], *, always: bool = False) -> Obj:
    """Both replays side by side: each fact and the runs' `behaviour` as written and under `settings` (R16)."""
    alt = _with_settings(doc, org, settings, always=always)
    (base_state, base_results), (alt_state, alt_results) = _replayed(doc), _replayed(alt)
    return {
        "rows": _diff(base_state, alt_state),
        "behaviour": {"base": behaviour(doc, base_results, org), "alt": behaviour(alt, alt_results, org)},
    }


# --- the live organization: memory as it is, as the export writes it ---------------------------


def history_of(svc: MemoryService, org: str, *, by: str | None = None) -> tuple[Obj, list[str]]:
    """The organization's memory as its export (R3), what that leaves out (R17, R29-R31); the owner's alone (R15)."""
    svc.get_settings(org, by=by)
    doc, omitted = svc.export_scenario(org=org)
    name = next(o["name"] for o in doc["organizations"] if o["id"] == org)
    return doc | {"title": f"{name} as memory holds it"}, omitted  # no export time: the page caches on it
