"""A scenario checked by its models, then what they cannot say: references, unique ids, one owner, R15 and R25."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import FormatError
from ..plain import Obj
from ..rules.settings import SETTING_BY_NAME, settings_problem
from ..rules.weights import web_host
from . import documents as doc
from .events import EVENT_MODELS, READ_ARGS, Closed, Read, RecordEvent, Step
from .fields import join, storable, type_name, validate

#: The parts of a scenario checked one by one, each after what the scenario says of itself.
SECTIONS = ("organizations", "people", "workflows", "events")


@dataclass
class Scenario:
    """A checked scenario: plain dicts with defaults filled in, ready for the event engine."""

    title: str = ""
    description: str = ""
    organizations: list[Obj] = field(default_factory=list)
    people: list[Obj] = field(default_factory=list)
    workflows: list[Obj] = field(default_factory=list)
    events: list[Obj] = field(default_factory=list)


def event(path: str, value: Any) -> Obj:
    """One event, checked by its model and normalized: `do`, its fields with defaults, `note` if any."""
    if not isinstance(value, dict):
        raise FormatError(path, f"expected an object, found {type_name(value)}")
    if "do" not in value:
        raise FormatError(join(path, "do"), "missing (required)")
    do = value["do"]
    if not isinstance(do, str) or do not in EVENT_MODELS:
        raise FormatError(join(path, "do"), f"unknown event {do!r}; expected one of {', '.join(EVENT_MODELS)}")
    out = _plain(path, validate(EVENT_MODELS[do], value, path=path), value)
    if "note" in value:
        out["note"] = value["note"]
    return out


def _plain(path: str, e: Closed, given: Obj) -> Obj:
    """An event as the engine takes it: one `record`, a request {text, claims}, args as its call's (R23) and given."""
    out = e.model_dump(exclude={"note"})
    if isinstance(e, RecordEvent):
        return {"do": "record", "turn": e.turn, "record": _record(path, out)}
    if isinstance(e, Step) and e.record is not None:
        out["record"] = _record(join(path, "record"), {**out["record"], "within": None})
    if isinstance(out.get("request"), str):
        out["request"] = {"text": out["request"], "claims": []}
    if isinstance(e, Read):
        args = validate(READ_ARGS[e.call], given["args"], path=join(path, "args"))
        out["args"], out["args_given"] = args.model_dump(exclude_none=True), copy.deepcopy(given["args"])
        out["within"], out["step"] = out.pop("within"), out.pop("step")
    return out


def _record(path: str, r: Obj) -> Obj:
    """A record's fields, with what its schema says in an `if` and the host of a web source (R24, R25)."""
    if r["origin"] != "person" and r["source"] is None:
        raise FormatError(join(path, "source"), f"missing (required for a {r['origin']} record)")
    if r["origin"] == "web" and web_host(r["source"] or "") is None:
        raise FormatError(join(path, "source"), f"a web source needs a host, {r['source']!r} has none (R25)")
    return {k: r.get(k) for k in ("origin", "source", "excerpt", "reliability", "within", "claims")}


def _entries(raw: Any, section: str, entry: Callable[[str, Any], Obj]) -> list[Obj]:
    """A section's entries, each checked by `entry` at its path, each id used once."""
    out, seen = [], set[str]()
    for i, value in enumerate(validate(list[Any], raw, path=section)):
        made = entry(f"{section}[{i}]", value)
        if made["id"] in seen:
            raise FormatError(f"{section}[{i}].id", f"{_WHAT[section]} id {made['id']!r} is used twice")
        seen.add(made["id"])
        out.append(made)
    return out


_WHAT = {"organizations": "organization", "people": "person", "workflows": "workflow"}


def _organization(p: str, value: Any) -> Obj:
    settings = value.get("settings", {}) if isinstance(value, dict) else {}
    problem = settings_problem(settings) if isinstance(settings, dict) else None
    if problem:
        bad = next(k for k in settings if settings_problem({k: settings[k]}))
        raise FormatError(join(join(p, "settings"), bad), problem)
    o = validate(doc.OrganizationEntry, value, path=p)
    return {"id": o.id, "name": o.name, "owner": o.owner, "settings": dict(settings)}


def _person(p: str, value: Any, *, orgs: set[str]) -> Obj:
    memberships = value.get("memberships", {}) if isinstance(value, dict) else {}
    for org in memberships if isinstance(memberships, dict) else ():
        if org not in orgs:
            raise FormatError(join(join(p, "memberships"), org), f"no organization has the id {org!r}")
    person = validate(doc.PersonEntry, value, path=p)
    return {"id": person.id, "name": person.name, "memberships": dict(person.memberships or {})}


def _check_owners(orgs: list[Obj], people: list[Obj]) -> None:
    """Exactly one owner an organization: the one it names, whose membership says `owner`."""
    for i, org in enumerate(orgs):
        owners = [p["id"] for p in people if p["memberships"].get(org["id"]) == "owner"]
        at = f"organizations[{i}].owner"
        if org["owner"] not in owners:
            raise FormatError(at, f"{org['owner']!r} is not a person whose memberships name {org['id']!r} as owner")
        if len(owners) > 1:
            raise FormatError(at, f"an organization has exactly one owner; {', '.join(owners)} all claim {org['id']!r}")


def _step(path: str, value: Any) -> Obj:
    s = validate(doc.WorkflowStep, value, path=path)
    if s.admits_calls and s.kind != "model":
        raise FormatError(join(path, "admits_calls"), "only model steps admit calls (R19)")
    return s.model_dump()


def _declared_setting(path: str, value: Any) -> str | None:
    """The path of a `settings` key, or a key named like a setting, anywhere in a workflow."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        if isinstance(k, str) and (k == "settings" or k in SETTING_BY_NAME):
            return join(path, k)
        if found := _declared_setting(join(path, k), v):
            return found
    return None


def _workflow(p: str, value: Any, *, orgs: set[str]) -> Obj:
    if declared := _declared_setting(p, value):
        raise FormatError(declared, "a workflow cannot declare an organization setting; only the owner sets them (R15)")
    w = validate(doc.WorkflowEntry, value, path=p)
    if w.org not in orgs:
        raise FormatError(join(p, "org"), f"no organization has the id {w.org!r}")
    steps = [_step(f"{p}.steps[{j}]", s) for j, s in enumerate(value.get("steps", []))]
    ids = [s["id"] for s in steps]
    for j, sid in enumerate(ids):
        if sid in ids[:j]:
            raise FormatError(f"{p}.steps[{j}].id", f"step id {sid!r} is used twice in this workflow")
    probes = w.budget.MemoryProbes if w.budget is not None else None
    return {"id": w.id, "org": w.org, "memory_probes": probes, "steps": steps}


def check(data: Any) -> Scenario:
    """Check a parsed scenario as a whole; the first problem raises FormatError with its path."""
    storable("", data)
    if isinstance(data, dict) and data.get("format") == doc.STATE_FORMAT:
        raise FormatError("format", f"this is a {doc.STATE_FORMAT} file (what replay prints), not a scenario to run")
    top = validate(dict[str, Any], data)  # then what the scenario says of itself (format, title, description)
    head = validate(doc.ScenarioDocument, {k: [] if k in SECTIONS else v for k, v in top.items()})
    orgs = _entries(top.get("organizations", []), "organizations", _organization)
    org_ids = {o["id"] for o in orgs}
    people = _entries(top.get("people", []), "people", functools.partial(_person, orgs=org_ids))
    _check_owners(orgs, people)
    workflows = _entries(top.get("workflows", []), "workflows", functools.partial(_workflow, orgs=org_ids))
    events = [event(f"events[{i}]", e) for i, e in enumerate(validate(list[Any], top["events"], path="events"))]
    return Scenario(head.title or "", head.description or "", orgs, people, workflows, events)
