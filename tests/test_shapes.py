"""The facade's reads hold to their typed contract (memory_core/usecases/shapes.py).

Every read the pages, views, API and MCP server consume, on every sample (demo included), is
validated with pydantic against the TypedDict the facade declares for it, extra keys forbidden and
no coercion: a key the store adds, drops or retypes without the contract fails here. The declared
return type is read from the facade's annotations, so a read cannot be left out of the check.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from memory_core import MemoryService, make_engine, parse, replay
from memory_core.usecases import shapes

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "sample_data").glob("*.json"))


def declared(name: str) -> typing.Any:
    """The return type a family declares for a facade read."""
    method = getattr(MemoryService, name).__wrapped__
    return typing.get_type_hints(method)["return"]


def calls(svc: MemoryService) -> dict[str, object]:
    """Each read, called on everything the memory holds (every organization, run, turn, fact)."""
    out: dict[str, list[object]] = {}

    def add(name: str, value: object) -> None:
        out.setdefault(name, []).append(value)

    add("organizations", svc.organizations())
    add("people", svc.people())
    add("counts", svc.counts())
    add("erasure_status", svc.erasure_status())
    add("read_servers", svc.read_servers())
    add("moments", svc.moments())
    for org in svc.organizations():
        o = org["id"]
        add("members", svc.members(o))
        add("runs", svc.runs(o))
        add("timeline", svc.timeline(o))
        add("audit", svc.audit(o))
        owner = next(m["id"] for m in svc.members(o) if m["role"] == "owner")
        svc.link_identity(owner, org=o, issuer="https://id.example/", subject=f"{owner}-sub")
        svc.link_identity(owner, org=o, email=f"{owner}@{o}.example")
        add("identity_links", svc.identity_links(o, by=owner))
        add("org_map", svc.org_map(o))
        add("focus", svc.focus("world", o, None, depth=1))
        add("find_entities", svc.find_entities({"world": o}, "a"))
        add("graph", svc.graph("world", o, limit=20, ids=True))
        table = svc.facts_table(o)
        add("facts_table", table)
        for row in table[:40]:
            add("fact_breakdown", svc.fact_breakdown(row["id"], org=o))
            add("fact_history", svc.fact_history(row["id"]))
        for run in svc.runs(o):
            detail = svc.run_detail(o, run["id"])
            add("run_detail", detail)
            add("run_erasure_preview", svc.run_erasure_preview(run["id"]))
            for turn in detail["turns"]:
                add("turn_view", svc.turn_view(turn["id"]))
    for person in svc.people():
        add("account_erasure_preview", svc.account_erasure_preview(person["id"]))
    return out


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_every_read_of_every_sample_holds_to_its_declared_shape(sample):
    svc = MemoryService(make_engine("sqlite://"))
    replay(parse(sample.read_text()), svc)
    for name, values in calls(svc).items():
        adapter = TypeAdapter(declared(name))
        for value in values:
            adapter.validate_python(value, strict=True)


def test_a_key_the_contract_does_not_name_fails_and_so_does_a_wrong_type():
    adapter = TypeAdapter(shapes.Member)
    adapter.validate_python({"id": "dana", "name": "Dana", "role": "owner"}, strict=True)
    with pytest.raises(ValidationError, match="extra"):
        adapter.validate_python({"id": "dana", "name": "Dana", "role": "owner", "secret": 1}, strict=True)
    with pytest.raises(ValidationError):
        adapter.validate_python({"id": "dana", "name": "Dana", "role": 3}, strict=True)


#: Reads that answer parts of the scenario and state documents, whose contract is the format's JSON
#: Schema (`python -m memory_core schema`), not a shape.
DOCUMENTS = ("export_state", "state_at", "export_scenario", "workflows", "read_trace")


def test_every_read_the_pages_use_declares_a_shape():
    """No facade read returns an untyped dict: each declares a shape (or a plain value)."""
    untyped = []
    for name in dir(MemoryService):
        member = getattr(MemoryService, name)
        if name.startswith("_") or not hasattr(member, "__wrapped__"):
            continue
        text = json.dumps(str(declared(name)))
        if "dict[str, typing.Any]" in text and name not in DOCUMENTS:
            untyped.append(name)
    assert untyped == []
