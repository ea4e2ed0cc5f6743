"""What-if: replay a scenario under another combination of settings and compare the graphs."""

from __future__ import annotations

import copy
from collections import Counter

from ..format.checks import check
from ..format.replay import EventEngine, EventResult
from ..plain import Obj
from ..rules.settings import DEFAULT_SETTINGS
from ..usecases.export import without_nulls
from ..usecases.facade import MemoryService
from ..usecases.results import RunEnded, RunStarted, StepRun, TurnEnded
from ..usecases.shapes import RunRow
from .text import plural
from .viz import fact_label


def initial_settings(doc: Obj, org: str) -> dict[str, bool]:
    """An organization's settings as the scenario starts them (defaults filled in)."""
    return {
        **DEFAULT_SETTINGS,
        **next((o.get("settings", {}) for o in doc.get("organizations", []) if o["id"] == org), {}),
    }


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


def _difference(b: Obj | None, a: Obj | None) -> str:
    """How a fact differs between the replays: only as written, only what-if, status, weight, or not."""
    if b is None or a is None:
        return "only what-if" if b is None else "only as written"
    return "status" if b["status"] != a["status"] else "weight" if b["weight"] != a["weight"] else ""


def _diff(base_state: Obj, alt_state: Obj) -> list[Obj]:
    """Each fact of either state: its weight and status both ways, and how they differ."""
    base, alt = _facts(base_state), _facts(alt_state)
    return [_row(key, base.get(key), alt.get(key)) for key in sorted(base.keys() | alt.keys())]


def _row(key: tuple[str, str, str], b: Obj | None, a: Obj | None) -> Obj:
    """A fact compared: graph, owner, fact, its weight and status as written and what if, and the difference."""
    row: Obj = dict(zip(("graph", "owner", "fact"), key, strict=True))
    for f, side in ((b, "as written"), (a, "what if")):
        row |= {side: (f or {}).get("weight"), f"status {side}": (f or {}).get("status")}
    return row | {"difference": _difference(b, a)}


#: The behaviour a replay counts, in the order the page lists it (claims kept out follow, by rule).
ASKED = "runs asked to be ephemeral (R11)"
BEHAVIOUR = (
    ASKED,
    "of which stored as permanent (R11)",
    "of which erased at their end (R17)",
    "steps run",
    "steps skipped by a shortcut (R22)",
)


def _counted(e: Obj, o: object, *, mine: set[str], turns: dict[str, str]) -> list[str]:
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
    """What the organization's runs did in a replay: ephemeral asked, kept (R11) and erased (R17), steps run or
    skipped (R22), claims kept out by rule (R8-R10, R30)."""
    events = doc.get("events", [])
    mine, turns = _runs_and_turns(events, org)
    counted = Counter(
        row for e, r in zip(events, results, strict=False) for row in _counted(e, r.outcome, mine=mine, turns=turns)
    )
    kept = sorted((row for row in counted if row not in BEHAVIOUR), key=_by_number)  # a rule: claims it kept out
    return {row: counted[row] for row in BEHAVIOUR} | {f"claims kept out by {rule}": counted[rule] for rule in kept}


def _runs_and_turns(events: list[Obj], org: str) -> tuple[set[str], dict[str, str]]:
    """The organization's runs in a scenario's events, and their turns (turn -> run)."""
    mine = {e["run"] for e in events if e.get("do") == "start_run" and e.get("org") == org}
    return mine, {e["turn"]: e["run"] for e in events if e.get("do") == "open_turn" and e.get("run") in mine}


def _by_number(rule: str) -> tuple[int, str]:
    """A rule's place in order: by its number (R8a, R8b, R9, R10)."""
    return int("".join(c for c in rule if c.isdigit())), rule


def _with_settings(doc: Obj, org: str, settings: dict[str, bool]) -> Obj:
    alt = copy.deepcopy(doc)
    for o in alt.get("organizations", []):
        if o["id"] == org:
            o["settings"] = dict(settings)
    return alt


def compare(doc: Obj, org: str, settings: dict[str, bool]) -> Obj:
    """Both replays side by side: each fact as written and under `settings`, and the runs' `behaviour` each way."""
    alt = _with_settings(doc, org, settings)
    (base_state, base_results), (alt_state, alt_results) = _replayed(doc), _replayed(alt)
    rows = _diff(base_state, alt_state)
    return {
        "rows": rows,
        "counts": {"base": len(_facts(base_state)), "alt": len(_facts(alt_state))},
        "behaviour": {"base": behaviour(doc, base_results, org), "alt": behaviour(alt, alt_results, org)},
    }


# --- the live organization: its recorded history, replayed in a sandbox -----------------------


def _record(r: Obj, person: str) -> Obj:
    out: Obj = {"origin": r["origin"], "claims": without_nulls(r["claims"])}
    if r["source"] is not None and not (r["origin"] == "person" and r["source"] == person):
        out["source"] = r["source"]
    for key in ("excerpt", "reliability"):
        if r[key] is not None:
            out[key] = r[key]
    return out


def _turn_events(t: Obj, person: str) -> list[Obj]:
    """One recorded turn as its events: opened, records and nested work, steps, end (replaced: completed)."""
    request = next((x for x in t["records"] if x["number"] == 0), None) or {}
    opened = {"text": request.get("excerpt") or "", "claims": without_nulls(request.get("claims", []))}
    out: list[Obj] = [{"do": "open_turn", "run": t["run"], "turn": t["id"], "request": opened}]
    out += _work_events(t, person)
    out += [{"do": "step", "turn": t["id"], "step": step["step"]} for step in t["steps"]]
    if t["status"] in ("completed", "failed", "cancelled", "replaced"):
        status = "completed" if t["status"] == "replaced" else t["status"]
        out.append({"do": "end_turn", "turn": t["id"], "status": status})
    return out


def _work_events(t: Obj, person: str) -> list[Obj]:
    """A turn's records in order, nested work called before its first record and returned after all."""
    out: list[Obj] = []
    called: set[int] = set()
    for x in t["records"]:
        if x["number"] == 0:
            continue
        rec = _record(x, person)
        if x["call"] is not None:
            if x["call"] not in called:
                called.add(x["call"])
                out.append({"do": "call", "turn": t["id"], "work": x["nested"]})
            rec["within"] = x["nested"]
        out.append({"do": "record", "turn": t["id"], **rec})
    for i, w in enumerate(t["work"]):
        if i not in called:
            out.append({"do": "call", "turn": t["id"], "work": w["work"]})
        if w["status"] != "open":
            out.append({"do": "return", "turn": t["id"], "work": w["work"], "status": w["status"]})
    return out


def _started(r: RunRow, org: str, person: str) -> Obj:
    """A recorded run's start_run event: its workflow and the ephemeral run it asked for, if any."""
    start: Obj = {"do": "start_run", "run": r["id"], "org": org, "person": person, "surface": r["surface"]}
    if r["workflow"]:
        start["workflow"] = r["workflow"]
    if r["requested_ephemeral"]:
        start["ephemeral"] = True
    return start


ERASED = "erased-account"  # who a run of a deleted account (R30) is replayed as


def _runs(svc: MemoryService, org: str, people: dict[str, Obj], gaps: list[str]) -> list[Obj]:
    """Every run's events: started before its first turn, its turns in the order they opened, ended after its last."""
    runs = svc.runs(org)
    ended = {r["id"] for r in runs if r["ended"]}
    starts, last_of, turns = _recorded(svc, org, runs, people, gaps)
    events: list[Obj] = []
    for run_id, begun in starts.items():  # runs without a turn start where they stand
        if last_of[run_id] is None:
            events += [begun] + ([{"do": "end_run", "run": run_id}] if run_id in ended else [])
    for _, turn in sorted(turns, key=lambda pair: pair[0]):
        if turn["run"] in starts:  # the run starts right before its first turn
            events.append(starts.pop(turn["run"]))
        events += _turn_events(turn, turn["person"])
        if turn["id"] == last_of[turn["run"]] and turn["run"] in ended:
            events.append({"do": "end_run", "run": turn["run"]})
    return events


def _recorded(
    svc: MemoryService, org: str, runs: list[RunRow], people: dict[str, Obj], gaps: list[str]
) -> tuple[dict[str, Obj], dict[str, str | None], list[tuple[int, Obj]]]:
    """Each run's start_run and last turn, and every turn by order opened (R30: a deleted account as ERASED)."""
    turns: list[tuple[int, Obj]] = []
    starts: dict[str, Obj] = {}
    last_of: dict[str, str | None] = {}
    for r in runs:
        person = r["person"] if r["person"] in people else ERASED
        if person == ERASED:
            people.setdefault(person, {"id": person, "name": "An erased account", "memberships": {org: "member"}})
        starts[r["id"]] = _started(r, org, person)
        detail = svc.run_detail(org, r["id"])
        last_of[r["id"]] = detail["turns"][-1]["id"] if detail["turns"] else None
        for t in detail["turns"]:
            turns.append((t["seq"], dict(t) | {"run": r["id"], "person": person}))
            if t["status"] == "replaced":
                gaps.append(f"turn {t['id']} was replaced (R3): replayed as completed, not replaced")
    return starts, last_of, turns


def _corrections(svc: MemoryService, org: str, people: dict[str, Obj], owner: str, gaps: list[str]) -> list[Obj]:
    """The disputes and retractions of the organization's World facts (R28); what erasures took said in `gaps`."""
    events: list[Obj] = []
    for f in svc.facts_table(org, graphs=("world",)):
        if f["disputes"] or f["status"] == "retracted":
            b = svc.fact_breakdown(int(f["id"]), org=org)
            fact = {"subject": {"name": f["subject"], "kind": f["subject_kind"]}, "relation": f["relation"]}
            fact["object"] = (
                {"name": f["object"], "kind": f["object_kind"]} if f["object_kind"] else {"value": f["object"]}
            )
            for d in b["disputes"]:
                if d["by"] in people:
                    events.append({"do": "dispute", "org": org, "by": d["by"], "fact": fact})
                else:
                    gaps.append("a dispute by an erased account is not replayed")
            if f["status"] == "retracted":
                events.append({"do": "retract", "org": org, "by": owner, "fact": fact})
        if f["erased"]:
            gaps.append(
                f"{plural(f['erased'], 'support')} of {f['subject']} —{f['relation']}→ {f['object']} came from erased runs"
            )
    return events


def history_of(svc: MemoryService, org: str, *, by: str | None = None) -> tuple[Obj, list[str]]:
    """The organization's recorded history as a scenario under its settings now, and what it cannot put back
    (R17, R29, R3: replaced turns as completed; corrections last); the settings are the owner's (R15)."""
    settings = svc.get_settings(org, by=by)
    o = next(o for o in svc.organizations() if o["id"] == org)
    members = svc.members(org)
    people: dict[str, Obj] = {
        m["id"]: {"id": m["id"], "name": m["name"], "memberships": {org: m["role"]}} for m in members
    }
    gaps: list[str] = []
    events = _runs(svc, org, people, gaps)
    events += _corrections(svc, org, people, next((m["id"] for m in members if m["role"] == "owner"), ""), gaps)
    doc = {
        "format": "memory-scenario/1",
        "title": f"The recorded history of {o['name']}",
        "organizations": [{"id": org, "name": o["name"], "owner": o["owner"], "settings": settings}],
        "people": list(people.values()),
        "workflows": [without_nulls(w) for w in svc.workflows(org)],
        "events": events,
    }
    return doc, gaps
