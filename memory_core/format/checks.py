"""`memory-scenario/1` checked as a whole: the setup, each event, the references between them.

The kinds of event and the keys of each object are the models' (format/events.py, documents.py);
the checks here add what a schema cannot say and write the sentences a file's author reads."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import FormatError
from ..plain import Obj
from ..rules.settings import SETTING_BY_NAME, settings_problem
from ..rules.shortcuts import DEFAULT_MIN_WEIGHT
from ..rules.vocabulary import READ_CALLS, STEP_KINDS, SURFACES, TURN_END_STATUSES
from . import documents as doc
from . import events as ev
from .events import EVENT_MODELS, default, keys
from .fields import (
    MAX_INTEGER,
    _graph,
    _join,
    _type_name,
    boolean,
    claims,
    entity,
    fact_ref,
    ident,
    items,
    number,
    obj,
    one_of,
    read_args,
    record_fields,
    storable,
    text,
    work,
)

FORMAT = doc.SCENARIO_FORMAT


@dataclass
class Scenario:
    """A checked scenario: plain dicts with defaults filled in, ready for the event engine."""

    title: str = ""
    description: str = ""
    organizations: list[Obj] = field(default_factory=list)
    people: list[Obj] = field(default_factory=list)
    workflows: list[Obj] = field(default_factory=list)
    events: list[Obj] = field(default_factory=list)


def _ev_start_run(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.StartRun))
    return {
        "run": ident(_join(p, "run"), e["run"]),
        "org": ident(_join(p, "org"), e["org"]),
        "person": ident(_join(p, "person"), e["person"]),
        "workflow": ident(_join(p, "workflow"), e["workflow"]) if e.get("workflow") is not None else None,
        "surface": one_of(_join(p, "surface"), e.get("surface", default(ev.StartRun, "surface")), SURFACES),
        "ephemeral": boolean(_join(p, "ephemeral"), e.get("ephemeral", default(ev.StartRun, "ephemeral"))),
    }


def _ev_open_turn(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.OpenTurn))
    req = e["request"]
    if isinstance(req, dict):
        r = obj(_join(p, "request"), req, *keys(ev.Request))
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
    obj(p, e, *keys(ev.Record))
    return {"turn": ident(_join(p, "turn"), e["turn"]), "record": record_fields(p, e)}


def _ev_step(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.Step))
    out: Obj = {"turn": ident(_join(p, "turn"), e["turn"]), "step": ident(_join(p, "step"), e["step"]), "record": None}
    if e.get("record") is not None:
        rp = _join(p, "record")
        r = obj(rp, e["record"], *keys(ev.StepRecord))
        out["record"] = record_fields(rp, r, within=False)
    return out


def _ev_call(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.Call))
    return {"turn": ident(_join(p, "turn"), e["turn"]), "work": work(_join(p, "work"), e["work"])}


def _ev_return(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.Return))
    return {
        "turn": ident(_join(p, "turn"), e["turn"]),
        "work": work(_join(p, "work"), e["work"]),
        "status": one_of(_join(p, "status"), e["status"], TURN_END_STATUSES),
    }


def _ev_read(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.Read))
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
    obj(p, e, *keys(ev.EndTurn))
    return {
        "turn": ident(_join(p, "turn"), e["turn"]),
        "status": one_of(_join(p, "status"), e["status"], TURN_END_STATUSES),
    }


def _ev_end_run(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.EndRun))
    return {"run": ident(_join(p, "run"), e["run"])}


def _ev_delete_run(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.DeleteRun))
    return {"run": ident(_join(p, "run"), e["run"]), "by": ident(_join(p, "by"), e["by"])}


def _ev_delete_account(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.DeleteAccount))
    return {"person": ident(_join(p, "person"), e["person"])}


def _ev_set_settings(p: str, e: Obj) -> Obj:
    obj(p, e, *keys(ev.SetSettings))
    if not isinstance(e["settings"], dict):
        raise FormatError(_join(p, "settings"), f"expected an object, found {_type_name(e['settings'])}")
    # Unknown names and non-boolean values are refusals (invalid_setting, R15), not format errors.
    return {
        "org": ident(_join(p, "org"), e["org"]),
        "by": ident(_join(p, "by"), e["by"]),
        "settings": dict(e["settings"]),
    }


def _ev_correction(model: type[ev.Dispute | ev.Retract]) -> Callable[[str, Obj], Obj]:
    def check(p: str, e: Obj) -> Obj:
        obj(p, e, *keys(model))
        return {
            "org": ident(_join(p, "org"), e["org"]),
            "by": ident(_join(p, "by"), e["by"]),
            "fact": fact_ref(_join(p, "fact"), e["fact"]),
            "graph": _graph(p, e),
        }

    return check


_CHECKS: dict[type, Callable[[str, Obj], Obj]] = {
    ev.StartRun: _ev_start_run,
    ev.OpenTurn: _ev_open_turn,
    ev.Record: _ev_record,
    ev.Step: _ev_step,
    ev.Call: _ev_call,
    ev.Return: _ev_return,
    ev.Read: _ev_read,
    ev.EndTurn: _ev_end_turn,
    ev.EndRun: _ev_end_run,
    ev.DeleteRun: _ev_delete_run,
    ev.DeleteAccount: _ev_delete_account,
    ev.SetSettings: _ev_set_settings,
    ev.Dispute: _ev_correction(ev.Dispute),
    ev.Retract: _ev_correction(ev.Retract),
}


#: The check of each kind of event the models name, by its `do`, in their order.
EVENT_CHECKS: dict[str, Callable[[str, Obj], Obj]] = {do: _CHECKS[model] for do, model in EVENT_MODELS.items()}


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


def _unique(path: str, value: Any, seen: set[str], what: str) -> str:
    name = ident(path, value)
    if name in seen:
        raise FormatError(path, f"{what} id {name!r} is used twice")
    seen |= {name}
    return name


def _organizations(raw: list[Any]) -> list[Obj]:
    out, seen = [], set[str]()
    for i, value in enumerate(raw):
        p = f"organizations[{i}]"
        o = obj(p, value, *keys(doc.Organization))
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
        o = obj(p, value, *keys(doc.Person))
        memberships = o.get("memberships", {})
        if not isinstance(memberships, dict):
            raise FormatError(_join(p, "memberships"), f"expected an object, found {_type_name(memberships)}")
        for org, role in memberships.items():
            mp = _join(_join(p, "memberships"), org)
            if org not in orgs:
                raise FormatError(mp, f"no organization has the id {org!r}")
            one_of(mp, role, doc.ROLES)
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
    s = obj(path, value, *keys(doc.WorkflowStep))
    kind = one_of(_join(path, "kind"), s["kind"], STEP_KINDS)
    admits = boolean(_join(path, "admits_calls"), s.get("admits_calls", default(doc.WorkflowStep, "admits_calls")))
    if admits and kind != "model":
        raise FormatError(_join(path, "admits_calls"), "only model steps admit calls (R19)")
    out: Obj = {
        "id": ident(_join(path, "id"), s["id"]),
        "kind": kind,
        "admits_calls": admits,
        "answers": None,
        "min_weight": DEFAULT_MIN_WEIGHT,
    }
    if s.get("answers") is not None:
        ap = _join(path, "answers")
        a = obj(ap, s["answers"], *keys(doc.Answers))
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
        o = obj(p, value, *keys(doc.Workflow))
        org = ident(_join(p, "org"), o["org"])
        if org not in orgs:
            raise FormatError(_join(p, "org"), f"no organization has the id {org!r}")
        probes = None
        if o.get("budget") is not None:
            b = obj(_join(p, "budget"), o["budget"], *keys(doc.Budget))
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


def check(data: Any) -> Scenario:
    """Check a parsed scenario as a whole; the first problem raises FormatError with its path."""
    storable("", data)
    if isinstance(data, dict) and data.get("format") == doc.STATE_FORMAT:
        raise FormatError("format", f"this is a {doc.STATE_FORMAT} file (what replay prints), not a scenario to run")
    top = obj("", data, *keys(doc.Scenario))
    if top["format"] != FORMAT:
        raise FormatError("format", f"expected {FORMAT!r}, found {top['format']!r}")
    if "$schema" in top:  # for an editor (docs/schema); the check itself does not read it
        text("$schema", top["$schema"])
    title = text("title", top.get("title", ""), empty=True)
    description = text("description", top.get("description", ""), empty=True)
    orgs = _organizations(items("organizations", top.get("organizations", [])))
    org_ids = {o["id"] for o in orgs}
    people = _people(items("people", top.get("people", [])), org_ids)
    _check_owners(orgs, people)
    workflows = _workflows(items("workflows", top.get("workflows", [])), org_ids)
    events = [event(f"events[{i}]", e) for i, e in enumerate(items("events", top["events"]))]
    return Scenario(title, description, orgs, people, workflows, events)
