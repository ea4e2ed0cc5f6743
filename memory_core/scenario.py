"""The scenario format `memory-scenario/1`: parse and check a whole file before anything runs.

Every problem is a FormatError naming its place: `line L, column C` for bad JSON, the JSON
path for the rest (`events[3].status: expected one of completed, failed, cancelled`).
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .errors import FormatError
from .rules import (
    GRAPHS,
    READ_CALLS,
    SETTING_BY_NAME,
    STEP_KINDS,
    SURFACES,
    TURN_END_STATUSES,
    WORK_PREFIXES,
    WORLD_KINDS,
    settings_problem,
)
from .weights import ORIGINS, web_host

FORMAT = "memory-scenario/1"
Obj = dict[str, Any]

#: JSON nested deeper than this is refused before it is decoded. The format's deepest place
#: (`events[i].request.claims[j].subject.aliases[k]`) is 8 levels down.
MAX_DEPTH = 64
#: The largest whole number a count holds: a 4-byte integer column on PostgreSQL, and the
#: same limit on SQLite so that a file runs alike on both (`MemoryProbes`, R21).
MAX_INTEGER = 2**31 - 1
#: The longest id, kind, relation or work name, in characters. These are indexed as given
#: (PostgreSQL's btree holds about 2,700 bytes an index row), and one limit holds on both backends;
#: names, values, excerpts and sources may be of any length (rules.name_key, rules.value_key).
MAX_NAME = 200


@dataclass
class Scenario:
    """A checked scenario: plain dicts with defaults filled in, ready for the event engine."""

    title: str = ""
    description: str = ""
    organizations: list[Obj] = field(default_factory=list)
    people: list[Obj] = field(default_factory=list)
    workflows: list[Obj] = field(default_factory=list)
    events: list[Obj] = field(default_factory=list)


# --- small checkers ----------------------------------------------------------------------


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a text",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def obj(path: str, value: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> Obj:
    """An object with these keys and no others (an unknown key is an error at its path)."""
    if not isinstance(value, dict):
        raise FormatError(path, f"expected an object, found {_type_name(value)}")
    for key in value:
        if key not in required and key not in optional:
            allowed = ", ".join((*required, *optional))
            raise FormatError(_join(path, key), f"unknown key (allowed here: {allowed})")
    for key in required:
        if key not in value:
            raise FormatError(_join(path, key), "missing (required)")
    return value


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def text(path: str, value: Any, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise FormatError(path, f"expected a text, found {_type_name(value)}")
    if not empty and not value.strip():
        raise FormatError(path, "must not be empty")
    return value


def ident(path: str, value: Any) -> str:
    """An id, kind, relation or work name: a text of at most MAX_NAME characters."""
    name = text(path, value)
    if len(name) > MAX_NAME:
        raise FormatError(path, f"at most {MAX_NAME} characters here, found {len(name):,}")
    return name


def boolean(path: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise FormatError(path, f"expected true or false, found {_type_name(value)}")
    return value


def one_of(path: str, value: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise FormatError(path, f"expected one of {', '.join(choices)}")
    return value


def items(path: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise FormatError(path, f"expected a list, found {_type_name(value)}")
    return value


def number(path: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(path, f"expected a number, found {_type_name(value)}")
    try:
        out = float(value)
    except OverflowError:
        raise FormatError(path, "too large to be a number (the largest is about 1.8e308)") from None
    if not math.isfinite(out):
        raise FormatError(path, f"expected a finite number, found {value}")
    return out


# --- entities, claims, records -----------------------------------------------------------


def entity(path: str, value: Any, *, world: bool) -> Obj:
    e = obj(path, value, ("name", "kind"), ("aliases",))
    text(_join(path, "name"), e["name"])
    kind = ident(_join(path, "kind"), e["kind"])
    if world and kind not in WORLD_KINDS:
        raise FormatError(
            _join(path, "kind"), f"a world entity's kind is one of {', '.join(WORLD_KINDS)}, not {kind!r}"
        )
    for i, alias in enumerate(items(_join(path, "aliases"), e.get("aliases", []))):
        text(_join(_join(path, "aliases"), i), alias)
    return {"name": e["name"], "kind": kind, "aliases": list(e.get("aliases", []))}


def fact_object(path: str, value: Any, *, world: bool) -> Obj:
    if isinstance(value, dict) and "value" in value:
        o = obj(path, value, ("value",))
        return {"value": text(_join(path, "value"), o["value"], empty=True)}
    return entity(path, value, world=world)


def claim(path: str, value: Any) -> Obj:
    c = obj(path, value, ("graph", "subject", "relation", "object"))
    graph = one_of(_join(path, "graph"), c["graph"], GRAPHS)
    world = graph == "world"
    return {
        "graph": graph,
        "subject": entity(_join(path, "subject"), c["subject"], world=world),
        "relation": ident(_join(path, "relation"), c["relation"]),
        "object": fact_object(_join(path, "object"), c["object"], world=world),
    }


def claims(path: str, value: Any) -> list[Obj]:
    return [claim(_join(path, i), c) for i, c in enumerate(items(path, value))]


RECORD_FIELDS = ("origin", "source", "excerpt", "reliability", "within", "claims")


def record_fields(path: str, value: Obj, *, within: bool = True) -> Obj:
    """The fields of a record (R24 to R26), checked where they stand in `value`."""
    origin = one_of(_join(path, "origin"), value["origin"], ORIGINS)
    source = value.get("source")
    if origin != "person" and "source" not in value:
        raise FormatError(_join(path, "source"), f"missing (required for a {origin} record)")
    if source is not None or "source" in value:
        source = text(_join(path, "source"), source)
    if origin == "web" and web_host(source or "") is None:
        raise FormatError(_join(path, "source"), f"a web source needs a host, {source!r} has none (R25)")
    excerpt = value.get("excerpt")
    if excerpt is not None:
        text(_join(path, "excerpt"), excerpt, empty=True)
    reliability = value.get("reliability")
    if reliability is not None:
        r = number(_join(path, "reliability"), reliability)
        if not 0.5 < r < 1:
            raise FormatError(
                _join(path, "reliability"), f"must be strictly between 0.5 and 1, found {reliability} (R26)"
            )
        reliability = r
    nested = value.get("within")
    if nested is not None and within:
        work(_join(path, "within"), nested)
    return {
        "origin": origin,
        "source": source,
        "excerpt": excerpt,
        "reliability": reliability,
        "within": nested,
        "claims": claims(_join(path, "claims"), value["claims"]),
    }


def work(path: str, value: Any) -> str:
    name = ident(path, value)
    if not name.startswith(WORK_PREFIXES) or not name.split(":", 1)[1].strip():
        raise FormatError(path, "expected workflow:NAME, agent:NAME or debater:NAME")
    return name


def fact_ref(path: str, value: Any) -> Obj:
    f = obj(path, value, ("subject", "relation", "object"))
    return {
        "subject": entity(_join(path, "subject"), f["subject"], world=False),
        "relation": ident(_join(path, "relation"), f["relation"]),
        "object": fact_object(_join(path, "object"), f["object"], world=False),
    }


# --- events ------------------------------------------------------------------------------


def _graph(path: str, value: Obj) -> str:
    return one_of(_join(path, "graph"), value.get("graph", "world"), GRAPHS)


def read_args(path: str, call: str, value: Any) -> Obj:
    """A read's arguments must fit its call (R23); a misfit is an error of the file."""
    if call == "GraphResolve":
        a = obj(path, value, ("name",), ("kind",))
        out: Obj = {"name": text(_join(path, "name"), a["name"])}
        if "kind" in a:
            out["kind"] = ident(_join(path, "kind"), a["kind"])
        return out
    if call == "GraphExpand":
        a = obj(path, value, ("entity",), ("graph", "relation"))
        out = {"entity": entity(_join(path, "entity"), a["entity"], world=False), "graph": _graph(path, a)}
        if "relation" in a:
            out["relation"] = ident(_join(path, "relation"), a["relation"])
        return out
    a = obj(path, value, ("fact",), ("graph",))
    return {"fact": fact_ref(_join(path, "fact"), a["fact"]), "graph": _graph(path, a)}


def _ev_start_run(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "run", "org", "person"), ("workflow", "surface", "ephemeral", "note"))
    return {
        "run": ident(_join(p, "run"), e["run"]),
        "org": ident(_join(p, "org"), e["org"]),
        "person": ident(_join(p, "person"), e["person"]),
        "workflow": ident(_join(p, "workflow"), e["workflow"]) if e.get("workflow") is not None else None,
        "surface": one_of(_join(p, "surface"), e.get("surface", "workflow"), SURFACES),
        "ephemeral": boolean(_join(p, "ephemeral"), e.get("ephemeral", False)),
    }


def _ev_open_turn(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "run", "turn", "request"), ("replaces", "note"))
    req = e["request"]
    if isinstance(req, dict):
        r = obj(_join(p, "request"), req, ("text",), ("claims",))
        request = {
            "text": text(_join(p, "request.text"), r["text"], empty=True),
            "claims": claims(_join(p, "request.claims"), r.get("claims", [])),
        }
    else:
        request = {"text": text(_join(p, "request"), req, empty=True), "claims": []}
    replaces = e.get("replaces")
    return {
        "run": ident(_join(p, "run"), e["run"]),
        "turn": ident(_join(p, "turn"), e["turn"]),
        "request": request,
        "replaces": ident(_join(p, "replaces"), replaces) if replaces is not None else None,
    }


def _ev_record(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "turn", "origin", "claims"), ("source", "excerpt", "reliability", "within", "note"))
    return {"turn": ident(_join(p, "turn"), e["turn"]), "record": record_fields(p, e)}


def _ev_step(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "turn", "step"), ("record", "note"))
    out: Obj = {"turn": ident(_join(p, "turn"), e["turn"]), "step": ident(_join(p, "step"), e["step"]), "record": None}
    if e.get("record") is not None:
        rp = _join(p, "record")
        r = obj(rp, e["record"], ("origin", "claims"), ("source", "excerpt", "reliability"))
        out["record"] = record_fields(rp, r, within=False)
    return out


def _ev_call(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "turn", "work"), ("note",))
    return {"turn": ident(_join(p, "turn"), e["turn"]), "work": work(_join(p, "work"), e["work"])}


def _ev_return(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "turn", "work", "status"), ("note",))
    return {
        "turn": ident(_join(p, "turn"), e["turn"]),
        "work": work(_join(p, "work"), e["work"]),
        "status": one_of(_join(p, "status"), e["status"], TURN_END_STATUSES),
    }


def _ev_read(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "turn", "call", "args"), ("within", "step", "note"))
    call = one_of(_join(p, "call"), e["call"], READ_CALLS)
    return {
        "turn": ident(_join(p, "turn"), e["turn"]),
        "call": call,
        "args": read_args(_join(p, "args"), call, e["args"]),
        "args_given": copy.deepcopy(e["args"]),
        "within": work(_join(p, "within"), e["within"]) if e.get("within") is not None else None,
        "step": ident(_join(p, "step"), e["step"]) if e.get("step") is not None else None,
    }


def _ev_end_turn(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "turn", "status"), ("note",))
    return {
        "turn": ident(_join(p, "turn"), e["turn"]),
        "status": one_of(_join(p, "status"), e["status"], TURN_END_STATUSES),
    }


def _ev_end_run(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "run"), ("note",))
    return {"run": ident(_join(p, "run"), e["run"])}


def _ev_delete_run(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "run", "by"), ("note",))
    return {"run": ident(_join(p, "run"), e["run"]), "by": ident(_join(p, "by"), e["by"])}


def _ev_delete_account(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "person"), ("note",))
    return {"person": ident(_join(p, "person"), e["person"])}


def _ev_set_settings(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "org", "by", "settings"), ("note",))
    if not isinstance(e["settings"], dict):
        raise FormatError(_join(p, "settings"), f"expected an object, found {_type_name(e['settings'])}")
    # Unknown names and non-boolean values are refusals (invalid_setting, R15), not format errors.
    return {
        "org": ident(_join(p, "org"), e["org"]),
        "by": ident(_join(p, "by"), e["by"]),
        "settings": dict(e["settings"]),
    }


def _ev_correction(p: str, e: Obj) -> Obj:
    obj(p, e, ("do", "org", "by", "fact"), ("graph", "note"))
    return {
        "org": ident(_join(p, "org"), e["org"]),
        "by": ident(_join(p, "by"), e["by"]),
        "fact": fact_ref(_join(p, "fact"), e["fact"]),
        "graph": _graph(p, e),
    }


EVENT_CHECKS: dict[str, Callable[[str, Obj], Obj]] = {
    "start_run": _ev_start_run,
    "open_turn": _ev_open_turn,
    "record": _ev_record,
    "step": _ev_step,
    "call": _ev_call,
    "return": _ev_return,
    "read": _ev_read,
    "end_turn": _ev_end_turn,
    "end_run": _ev_end_run,
    "delete_run": _ev_delete_run,
    "delete_account": _ev_delete_account,
    "set_settings": _ev_set_settings,
    "dispute": _ev_correction,
    "retract": _ev_correction,
}
EVENT_KINDS = tuple(EVENT_CHECKS)


def event(path: str, value: Any) -> Obj:
    """One event, checked and normalized: `do`, its fields with defaults, and `note` if any."""
    if not isinstance(value, dict):
        raise FormatError(path, f"expected an object, found {_type_name(value)}")
    if "do" not in value:
        raise FormatError(_join(path, "do"), "missing (required)")
    do = value["do"]
    if not isinstance(do, str) or do not in EVENT_CHECKS:
        raise FormatError(_join(path, "do"), f"unknown event {do!r}; expected one of {', '.join(EVENT_KINDS)}")
    out = EVENT_CHECKS[do](path, value)
    out = {"do": do, **out}
    if "note" in value:
        out["note"] = text(_join(path, "note"), value["note"], empty=True)
    return out


# --- the top level -----------------------------------------------------------------------


def _unique(path: str, value: Any, seen: set[str], what: str) -> str:
    name = ident(path, value)
    if name in seen:
        raise FormatError(path, f"{what} id {name!r} is used twice")
    seen.add(name)
    return name


def _organizations(raw: list[Any]) -> list[Obj]:
    out, seen = [], set[str]()
    for i, value in enumerate(raw):
        p = f"organizations[{i}]"
        o = obj(p, value, ("id", "name", "owner"), ("settings",))
        settings = o.get("settings", {})
        if not isinstance(settings, dict):
            raise FormatError(_join(p, "settings"), f"expected an object, found {_type_name(settings)}")
        problem = settings_problem(settings)
        if problem:
            bad = next(k for k in settings if settings_problem({k: settings[k]}))
            raise FormatError(_join(_join(p, "settings"), bad), problem)
        out.append(
            {
                "id": _unique(_join(p, "id"), o["id"], seen, "organization"),
                "name": text(_join(p, "name"), o["name"]),
                "owner": text(_join(p, "owner"), o["owner"]),
                "settings": dict(settings),
            }
        )
    return out


def _people(raw: list[Any], orgs: set[str]) -> list[Obj]:
    out, seen = [], set[str]()
    for i, value in enumerate(raw):
        p = f"people[{i}]"
        o = obj(p, value, ("id", "name"), ("memberships",))
        memberships = o.get("memberships", {})
        if not isinstance(memberships, dict):
            raise FormatError(_join(p, "memberships"), f"expected an object, found {_type_name(memberships)}")
        for org, role in memberships.items():
            mp = _join(_join(p, "memberships"), org)
            if org not in orgs:
                raise FormatError(mp, f"no organization has the id {org!r}")
            one_of(mp, role, ("owner", "member"))
        out.append(
            {
                "id": _unique(_join(p, "id"), o["id"], seen, "person"),
                "name": text(_join(p, "name"), o["name"]),
                "memberships": dict(memberships),
            }
        )
    return out


def _check_owners(orgs: list[Obj], people: list[Obj]) -> None:
    """Exactly one owner an organization: the one it names, whose membership says `owner`."""
    for i, org in enumerate(orgs):
        owners = [p["id"] for p in people if p["memberships"].get(org["id"]) == "owner"]
        if org["owner"] not in owners:
            raise FormatError(
                f"organizations[{i}].owner",
                f"{org['owner']!r} is not a person whose memberships name {org['id']!r} as owner",
            )
        if len(owners) > 1:
            raise FormatError(
                f"organizations[{i}].owner",
                f"an organization has exactly one owner; {', '.join(owners)} all claim {org['id']!r}",
            )


def _step(path: str, value: Any) -> Obj:
    s = obj(path, value, ("id", "kind"), ("admits_calls", "answers", "min_weight"))
    kind = one_of(_join(path, "kind"), s["kind"], STEP_KINDS)
    admits = boolean(_join(path, "admits_calls"), s.get("admits_calls", False))
    if admits and kind != "model":
        raise FormatError(_join(path, "admits_calls"), "only model steps admit calls (R19)")
    out: Obj = {
        "id": ident(_join(path, "id"), s["id"]),
        "kind": kind,
        "admits_calls": admits,
        "answers": None,
        "min_weight": 0.9,
    }
    if s.get("answers") is not None:
        ap = _join(path, "answers")
        a = obj(ap, s["answers"], ("subject", "relation"))
        out["answers"] = {
            "subject": entity(_join(ap, "subject"), a["subject"], world=False),
            "relation": ident(_join(ap, "relation"), a["relation"]),
        }
    if "min_weight" in s:
        mw = number(_join(path, "min_weight"), s["min_weight"])
        if not 0 <= mw <= 1:
            raise FormatError(_join(path, "min_weight"), f"a weight is between 0 and 1, found {mw}")
        out["min_weight"] = mw
    return out


def _declared_setting(path: str, value: Any) -> str | None:
    """The path of a `settings` key, or a key named like a setting, anywhere in a workflow."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "settings" or k in SETTING_BY_NAME:
                return _join(path, k)
            found = _declared_setting(_join(path, k), v)
            if found:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = _declared_setting(_join(path, i), v)
            if found:
                return found
    return None


def _workflows(raw: list[Any], orgs: set[str]) -> list[Obj]:
    out, seen = [], set[str]()
    for i, value in enumerate(raw):
        p = f"workflows[{i}]"
        declared = _declared_setting(p, value)
        if declared:
            raise FormatError(
                declared, "a workflow cannot declare an organization setting; only the owner sets them (R15)"
            )
        o = obj(p, value, ("id", "org"), ("budget", "steps"))
        org = ident(_join(p, "org"), o["org"])
        if org not in orgs:
            raise FormatError(_join(p, "org"), f"no organization has the id {org!r}")
        probes = None
        if o.get("budget") is not None:
            b = obj(_join(p, "budget"), o["budget"], (), ("MemoryProbes",))
            if b.get("MemoryProbes") is not None:
                mp = b["MemoryProbes"]
                if isinstance(mp, bool) or not isinstance(mp, int) or not 0 <= mp <= MAX_INTEGER:
                    raise FormatError(
                        _join(p, "budget.MemoryProbes"), f"expected a whole number from 0 to {MAX_INTEGER:,} (R21)"
                    )
                probes = mp
        steps = [
            _step(_join(_join(p, "steps"), j), s) for j, s in enumerate(items(_join(p, "steps"), o.get("steps", [])))
        ]
        ids = [s["id"] for s in steps]
        for j, sid in enumerate(ids):
            if sid in ids[:j]:
                raise FormatError(f"{p}.steps[{j}].id", f"step id {sid!r} is used twice in this workflow")
        out.append(
            {
                "id": _unique(_join(p, "id"), o["id"], seen, "workflow"),
                "org": org,
                "memory_probes": probes,
                "steps": steps,
            }
        )
    return out


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _escaped(text: str) -> str:
    """A text with its NUL characters and lone surrogates written as JSON escapes, for messages."""
    return _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _unstorable(found: str) -> str:
    if found == "\x00":
        return "a NUL character (\\u0000), which a database cannot store alike on SQLite and PostgreSQL"
    return f"a lone surrogate (\\u{ord(found):04x}), which is not a character and cannot be stored as UTF-8"


def storable(path: str, value: Any) -> None:
    """Every text in `value`, object keys included, can be stored as given on both backends."""
    if isinstance(value, str):
        found = _UNSTORABLE.search(value)
        if found:
            raise FormatError(path, f"this text holds {_unstorable(found.group())}")
    elif isinstance(value, dict):
        for key, item in value.items():
            place = _join(path, _escaped(key) if isinstance(key, str) else key)
            found = _UNSTORABLE.search(key) if isinstance(key, str) else None
            if found:
                raise FormatError(place, f"this key holds {_unstorable(found.group())}")
            storable(place, item)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            storable(_join(path, i), item)


def check(data: Any) -> Scenario:
    """Check a parsed scenario as a whole; the first problem raises FormatError with its path."""
    storable("", data)
    if isinstance(data, dict) and data.get("format") == "memory-state/1":
        raise FormatError("format", "this is a memory-state/1 file (what replay prints), not a scenario to run")
    top = obj("", data, ("format", "events"), ("title", "description", "organizations", "people", "workflows"))
    if top["format"] != FORMAT:
        raise FormatError("format", f"expected {FORMAT!r}, found {top['format']!r}")
    title = text("title", top.get("title", ""), empty=True)
    description = text("description", top.get("description", ""), empty=True)
    orgs = _organizations(items("organizations", top.get("organizations", [])))
    org_ids = {o["id"] for o in orgs}
    people = _people(items("people", top.get("people", [])), org_ids)
    _check_owners(orgs, people)
    workflows = _workflows(items("workflows", top.get("workflows", [])), org_ids)
    events = [event(f"events[{i}]", e) for i, e in enumerate(items("events", top["events"]))]
    return Scenario(title, description, orgs, people, workflows, events)


# --- the JSON text ------------------------------------------------------------------------


class _Refused(Exception):
    """A hook of the JSON decoder met something the format refuses; its place is found afterwards."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen = dict(pairs)
    if len(seen) != len(pairs):
        raise _Refused
    return seen


def _no_constant(name: str) -> Any:
    raise _Refused


def _integer(literal: str) -> int:
    if len(literal) > 310:  # more digits than any finite number has (and than int() converts)
        raise _Refused
    value = int(literal)
    if abs(value) > _LARGEST:
        raise _Refused
    return value


def _float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused
    return value


_LARGEST = int(sys.float_info.max)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_TOKEN = re.compile(
    r'[ \t\r\n]*(?:(?P<text>"[^"\\]*(?:\\.[^"\\]*)*")|(?P<open>[\[{])|(?P<close>[\]}])|(?P<word>-?[A-Za-z]+)'
    r"|(?P<number>-?[0-9][0-9.eE+-]*)|[,:])",
    re.S,
)
_COLON = re.compile(r"[ \t\r\n]*:")


def _deepest(source: str) -> int:
    """How deep the text's brackets nest outside its strings (fast: no Python loop per character)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", source))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _problems(source: str) -> Iterator[tuple[int, str]]:
    """Where the text passes the depth limit, holds NaN or Infinity, a number too large to be
    one, or a key repeated in one object: (offset, problem), in the order of the text."""
    keys: list[set[str] | None] = []  # one an open object (its keys so far) or list (None)
    pos = 0
    while (m := _TOKEN.match(source, pos)) is not None and m.end() > pos:
        pos = m.end()
        kind = m.lastgroup
        if kind is None:
            continue
        token, at = m.group(kind), m.start(kind)
        if kind == "open":
            if len(keys) >= MAX_DEPTH:
                yield at, f"nested more than {MAX_DEPTH} levels deep; the format needs far fewer"
                return
            keys.append(set() if token == "{" else None)
        elif kind == "close" and keys:
            keys.pop()
        elif kind == "text" and keys and keys[-1] is not None and _COLON.match(source, pos):
            try:
                key = json.loads(token)
            except json.JSONDecodeError:
                return  # bad JSON here: the decoder names it
            if key in keys[-1]:
                yield at, f"the key {key!r} appears twice in one object; a typo never passes silently"
            keys[-1].add(key)
        elif kind == "word" and token in ("NaN", "Infinity", "-Infinity"):
            yield at, f"{token} is not a number in JSON; numbers are finite"
        elif kind == "number":
            try:
                _float(token) if any(c in token for c in ".eE") else _integer(token)
            except (_Refused, ValueError):
                yield at, "this number is too large (numbers are finite, at most about 1.8e308)"


def _at(source: str, offset: int, problem: str) -> FormatError:
    line = source.count("\n", 0, offset) + 1
    column = offset - source.rfind("\n", 0, offset)
    return FormatError(f"line {line}, column {column}", problem)


def decode(source: str | bytes) -> Any:
    """The JSON value of a scenario's text, as the format reads it: UTF-8, nested at most
    MAX_DEPTH levels, finite numbers only (no NaN or Infinity), no key twice in one object.
    A problem is a FormatError naming its line and column (for bad UTF-8, its byte)."""
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"byte {exc.start}", "not UTF-8 text") from None
    end = len(source)
    if _deepest(source) > MAX_DEPTH:
        # Decode only what comes before the first problem, so that Python's own recursion
        # never runs out and a JSON error earlier in the text is still the one reported.
        end = next(_problems(source), (end, ""))[0]
    try:
        data = json.loads(
            source[:end],
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constant,
            parse_int=_integer,
            parse_float=_float,
        )
    except json.JSONDecodeError as exc:
        if exc.pos < end or end == len(source):
            raise _at(source, exc.pos, f"not valid JSON: {exc.msg}") from None
    except (_Refused, RecursionError):
        pass
    else:
        if end == len(source):
            return data
    found = next(_problems(source), None)
    if found is None:  # not expected: the scan and the decoder disagree
        raise FormatError("", f"nested too deeply or holding a number the format refuses (at most {MAX_DEPTH} levels)")
    raise _at(source, *found)


def parse(source: str | bytes) -> Scenario:
    """Parse and check scenario text; bad JSON names its line and column, bad UTF-8 its byte,
    the rest its JSON path."""
    return check(decode(source))


def load(path: str) -> Scenario:
    """Read and check a scenario file."""
    with open(path, "rb") as fh:
        return parse(fh.read())


def to_json(scenario: Scenario) -> Obj:
    """The scenario as a `memory-scenario/1` document (what the notebook downloads)."""
    return {
        "format": FORMAT,
        "title": scenario.title,
        "description": scenario.description,
        "organizations": scenario.organizations,
        "people": scenario.people,
        "workflows": [_workflow_json(w) for w in scenario.workflows],
        "events": [_event_json(e) for e in scenario.events],
    }


def _workflow_json(w: Obj) -> Obj:
    out: Obj = {"id": w["id"], "org": w["org"]}
    if w["memory_probes"] is not None:
        out["budget"] = {"MemoryProbes": w["memory_probes"]}
    out["steps"] = [{k: v for k, v in s.items() if v is not None} for s in w["steps"]]
    return out


def _event_json(e: Obj) -> Obj:
    """An event back in file form: record fields flattened, defaults left out where absent."""
    out = {k: v for k, v in e.items() if k not in ("record", "args", "args_given") and v is not None}
    if e["do"] == "read":
        out["args"] = e["args_given"]
    if e["do"] == "record":
        out.update({k: v for k, v in e["record"].items() if v is not None})
    elif e["do"] == "step" and e.get("record") is not None:
        out["record"] = {k: v for k, v in e["record"].items() if v is not None and k != "within"}
    if e["do"] == "open_turn":
        req = e["request"]
        out["request"] = {"text": req["text"], "claims": req["claims"]} if req["claims"] else req["text"]
    return out
