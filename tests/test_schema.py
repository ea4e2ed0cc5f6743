"""One typed contract (issue 24): the JSON Schemas generated from the format's models are the ones
published in docs/schema, every scenario and state the project ships or prints fits them, and the
schema and the check (format.checks) refuse the same malformed events.

The check refuses more than a schema can say (references between ids, a web source's host, NUL
characters, a key written twice); those are named where they are tested, never here as agreement.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from helpers import BASE, HQ, PREFERS, scenario, start, taught_turn, web
from jsonschema import Draft202012Validator

from memory_core import FormatError, MemoryService, load, make_engine, parse, replay
from memory_core.__main__ import main
from memory_core.format.checks import check
from memory_core.format.documents import DOCUMENTS, json_schema, schema_text
from memory_core.format.events import EVENT_MODELS, keys
from memory_core.format.replay import HANDLERS

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "docs" / "schema"
SAMPLES = sorted((ROOT / "sample_data").glob("*.json"))
TEST_FILES = sorted((ROOT / "tests" / "scenarios").glob("*.json"))

Obj = dict[str, Any]

SCENARIO = Draft202012Validator(json_schema("scenario"))
STATE = Draft202012Validator(json_schema("state"))


def problems(validator: Draft202012Validator, doc: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in validator.iter_errors(doc)]


# --- the published schemas are the command's output ---------------------------------------------


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_the_published_schema_is_what_the_command_prints(name, capsys):
    assert main(["schema", name]) == 0
    printed = capsys.readouterr().out
    assert printed == schema_text(name)
    assert (PUBLISHED / f"{name}.schema.json").read_text(encoding="utf-8") == printed, (
        f"docs/schema/{name}.schema.json is stale: python -m memory_core schema {name} > docs/schema/{name}.schema.json"
    )


def test_the_command_prints_the_scenario_schema_by_default_as_draft_2020_12():
    out = subprocess.run(
        [sys.executable, "-m", "memory_core", "schema"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out == schema_text("scenario")
    doc = json.loads(out)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] and doc["title"] == "memory-scenario/1"
    assert out == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"  # deterministic
    for name in DOCUMENTS:
        Draft202012Validator.check_schema(json_schema(name))


def test_an_unknown_document_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "memory_core", "schema", "notebook"], capture_output=True, cwd=ROOT)
    assert done.returncode == 2 and b"invalid choice" in done.stderr


def test_the_schema_names_every_event_kind_the_check_and_the_replay_know():
    schema = json_schema("scenario")
    assert list(EVENT_MODELS) == list(HANDLERS)
    assert set(schema["properties"]["events"]["items"]["discriminator"]["mapping"]) == set(EVENT_MODELS)


# --- what the project ships and prints fits the schemas -------------------------------------------


def docs_example() -> tuple[Obj, Obj]:
    blocks = re.findall(r"```json\n(.*?)```", (ROOT / "docs" / "formats.md").read_text(encoding="utf-8"), flags=re.S)
    return json.loads(blocks[0]), json.loads(blocks[1])


@pytest.mark.parametrize("path", [*SAMPLES, *TEST_FILES], ids=lambda p: p.name)
def test_every_shipped_scenario_fits_the_schema(path):
    assert problems(SCENARIO, json.loads(path.read_text(encoding="utf-8"))) == []


def test_the_scenarios_the_tests_write_and_the_docs_show_fit_the_schema():
    good = scenario([start(), *taught_turn("t1", web("https://a.example/", HQ))])
    assert problems(SCENARIO, good) == []
    assert problems(SCENARIO, scenario(valid_events())) == []
    example, state = docs_example()
    assert problems(SCENARIO, example) == []
    assert problems(STATE, state) == []


def test_a_scenario_may_name_its_schema_for_an_editor():
    doc = {"$schema": "../docs/schema/scenario.schema.json", **json.loads(SAMPLES[0].read_text(encoding="utf-8"))}
    assert problems(SCENARIO, doc) == []
    assert parse(json.dumps(doc)).events  # the check takes it, and reads nothing from it
    for bad in (7, "", None):
        doc["$schema"] = bad
        assert problems(SCENARIO, doc)
        with pytest.raises(FormatError, match=r"^\$schema: "):
            check(doc)


def replayed(path: Path) -> tuple[Any, MemoryService]:
    service = MemoryService(make_engine("sqlite://"))
    engine, _ = replay(load(str(path)), service)
    return engine, service


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_state_a_replay_prints_fits_the_schema(path):
    engine, service = replayed(path)
    assert problems(STATE, engine.state()) == []  # replay --json
    assert problems(STATE, service.export_state()) == []  # state --db
    for at in sorted({0, len(engine.moments) // 2, len(engine.moments) - 1}):  # replay --json --at N
        assert problems(STATE, engine.state_at(at)) == [], at


def test_the_state_commands_print_what_the_schema_says(capsys, tmp_path):
    sample = str(ROOT / "sample_data" / "erasure.json")
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    for argv in (["replay", sample, "--json"], ["replay", sample, "--json", "--at", "3"]):
        assert main(argv) == 0
        assert problems(STATE, json.loads(capsys.readouterr().out)) == [], argv
    assert main(["load", sample, "--db", url]) == 0
    capsys.readouterr()
    assert main(["state", "--db", url]) == 0
    assert problems(STATE, json.loads(capsys.readouterr().out)) == []
    assert main(["export", "--db", url]) == 0
    assert problems(SCENARIO, json.loads(capsys.readouterr().out)) == []


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_export_fits_the_scenario_schema(path, capsys, tmp_path):
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    assert main(["load", str(path), "--db", url]) == 0
    capsys.readouterr()
    assert main(["export", "--db", url]) == 0
    assert problems(SCENARIO, json.loads(capsys.readouterr().out)) == []


# --- the schema and the check refuse the same events ----------------------------------------------

WORLD_CLAIM = {
    "graph": "world",
    "subject": {"name": "Globex", "kind": "organization", "aliases": ["Globex Corp"]},
    "relation": "founded",
    "object": {"value": "1989"},
}


def valid_events() -> list[Obj]:
    """One event of every kind (reads: one of every call), each with every key it may hold."""
    fact = {"subject": {"name": "Globex", "kind": "organization"}, "relation": "hq", "object": {"value": "x"}}
    return [
        {"do": "start_run", "run": "r1", "org": "acme", "person": "dana", "workflow": "research"}
        | {"surface": "search", "ephemeral": True, "note": "n"},
        {"do": "open_turn", "run": "r1", "turn": "t1", "request": {"text": "", "claims": [HQ, PREFERS]}}
        | {"replaces": "t0", "note": ""},
        {"do": "record", "turn": "t1", "origin": "document", "claims": [WORLD_CLAIM, PREFERS], "source": "doc:1"}
        | {"excerpt": "e", "reliability": 0.7, "within": "agent:checker", "note": "n"},
        {"do": "record", "turn": "t1", "origin": "person", "claims": []},
        {"do": "step", "turn": "t1", "step": "lookup", "note": "n"}
        | {"record": {"origin": "tool", "claims": [HQ], "source": "tool:x", "excerpt": None, "reliability": 0.95}},
        {"do": "call", "turn": "t1", "work": "agent:checker", "note": "n"},
        {"do": "return", "turn": "t1", "work": "agent:checker", "status": "failed", "note": "n"},
        {"do": "read", "turn": "t1", "call": "GraphResolve", "args": {"name": "Globex", "kind": "organization"}}
        | {"within": "agent:checker", "step": "plan", "note": "n"},
        {"do": "read", "turn": "t1", "call": "GraphExpand"}
        | {"args": {"entity": {"name": "Globex", "kind": "organization"}, "graph": "user", "relation": "hq"}},
        {"do": "read", "turn": "t1", "call": "GraphSource", "args": {"fact": fact, "graph": "flow"}},
        {"do": "end_turn", "turn": "t1", "status": "cancelled", "note": "n"},
        {"do": "end_run", "run": "r1", "note": "n"},
        {"do": "delete_run", "run": "r1", "by": "dana", "note": "n"},
        {"do": "delete_account", "person": "lee", "note": "n"},
        {"do": "set_settings", "org": "acme", "by": "dana", "settings": {"LearnFromUsers": False}, "note": "n"},
        {"do": "dispute", "org": "acme", "by": "lee", "fact": fact, "graph": "user", "note": "n"},
        {"do": "retract", "org": "acme", "by": "dana", "fact": fact, "graph": "world", "note": "n"},
    ]


def refused_by_schema(event: Obj) -> bool:
    return not SCENARIO.is_valid({"format": "memory-scenario/1", "events": [event]})


def refused_by_check(event: Obj) -> str | None:
    try:
        check({"format": "memory-scenario/1", "events": [event]})
    except FormatError as exc:
        return str(exc)
    return None


def wrong_type(value: Any) -> Any:
    """A value of another JSON type than `value`, that no key takes in its place."""
    return 7 if isinstance(value, (str, dict, list)) else "yes"


def enum_keys(model: type) -> list[str]:
    """The keys of an event model that take one of a list of words (`do` aside)."""
    out = []
    for name, f in model.model_fields.items():  # type: ignore[attr-defined]
        kinds = [f.annotation, *get_args(f.annotation)]
        if name != "do" and any(get_origin(k) is Literal for k in kinds):
            out.append(f.alias or name)
    return out


def malformed() -> list[tuple[str, str, Obj]]:
    """For every kind of event: its `do` misspelt (a bad enum value every kind has), each required key
    missing, an unknown key, each key of the wrong type, each key that takes words given another word."""
    out = []
    for event in valid_events():
        do = event["do"]
        required, _ = keys(EVENT_MODELS[do])
        out.append((do, "bad enum: do", {**event, "do": do + "_now"}))
        out.append((do, "unknown key", {**event, "colour": "red"}))
        out += [(do, f"missing {k}", {x: v for x, v in event.items() if x != k}) for k in required]
        out += [(do, f"wrong type: {k}", {**event, k: wrong_type(v)}) for k, v in event.items()]
        out += [(do, f"bad enum: {k}", {**event, k: "nonsense"}) for k in enum_keys(EVENT_MODELS[do]) if k in event]
    return out


MALFORMED = malformed()


def test_the_corpus_covers_every_kind_with_every_mistake():
    kinds = {do for do, _, _ in MALFORMED}
    assert kinds == set(EVENT_MODELS)
    for do in kinds:
        mistakes = {m.split(":")[0].split(" ")[0] for d, m, _ in MALFORMED if d == do}
        assert mistakes == {"bad", "unknown", "missing", "wrong"}, do
    assert {m for _, m, _ in MALFORMED} >= {"bad enum: status", "bad enum: origin", "bad enum: call", "bad enum: graph"}


@pytest.mark.parametrize("event", valid_events(), ids=lambda e: e["do"])
def test_a_valid_event_of_every_kind_passes_both(event):
    assert refused_by_check(event) is None
    assert not refused_by_schema(event)


@pytest.mark.parametrize(("do", "mistake", "event"), MALFORMED, ids=[f"{d}-{m}" for d, m, _ in MALFORMED])
def test_a_malformed_event_is_refused_by_the_schema_and_by_the_check(do, mistake, event):
    assert refused_by_schema(event), mistake
    assert refused_by_check(event), mistake


#: Values put in every place of every event, and a place's key taken away: whatever the schema
#: says of the event, the check says too.
SWAPS = [7, 0.75, 2.5, True, None, "", "  ", "x", "nonsense", "a" * 201, "agent:x", [], {}, ["x"], {"value": "v"}]


def places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += places(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += places(v, (*path, i))
    return found


def put(event: Obj, path: tuple[Any, ...], value: Any, *, remove: bool = False) -> Obj:
    out = copy.deepcopy(event)
    where = out
    for step in path[:-1]:
        where = where[step]
    if remove:
        del where[path[-1]]
    else:
        where[path[-1]] = value
    return out


def at(event: Obj, path: tuple[Any, ...]) -> Any:
    for step in path:
        event = event[step]
    return event


def variants(event: Obj) -> list[Obj]:
    """The event with each place given each of SWAPS, each key taken away, each object a key more."""
    out = []
    for path in places(event):
        out += [put(event, path, v) for v in SWAPS]
        if isinstance(path[-1], str):
            out.append(put(event, path, None, remove=True))
    for path in [(), *places(event)]:
        if isinstance(at(event, path), dict):
            out.append(put(event, (*path, "colour"), "red"))
    return out


@pytest.mark.parametrize("event", valid_events(), ids=lambda e: e["do"])
def test_the_schema_and_the_check_agree_on_every_change_of_every_place(event):
    disagree = []
    refused = 0
    for changed in variants(event):
        by_check = refused_by_check(changed)
        if refused_by_schema(changed) != (by_check is not None):
            disagree.append((changed, by_check))
        refused += by_check is not None
    assert disagree == []
    assert refused > 10


def test_what_only_the_check_says():
    """The schema cannot say these; the check refuses them, and the schema lets them pass."""
    host = {"do": "record", "turn": "t1", "origin": "web", "source": "urn:isbn:1", "claims": []}  # R25
    nul = {"do": "end_run", "run": "r\u0000"}
    for event in (host, nul):
        assert not refused_by_schema(event) and refused_by_check(event)
    doc = copy.deepcopy(BASE) | {"events": []}
    doc["workflows"][0]["org"] = "nowhere"  # a reference between ids
    assert SCENARIO.is_valid(doc)
    with pytest.raises(FormatError, match="no organization has the id"):
        check(doc)


#: What the check says of a scenario's setup that a schema cannot: references between ids.
REFERENCES = re.compile(r"no organization has the id|is not a person whose memberships|exactly one owner|used twice")


def test_the_schema_and_the_check_agree_on_the_setup_but_for_references():
    """Every change of every place of the organizations, people and workflows: what the schema refuses,
    the check refuses; what only the check refuses is a reference between ids."""
    doc = scenario([], settings={"LearnFromUsers": False}, title="T", description="D")
    setup = {k: v for k, v in doc.items() if k != "events"}
    changed = []
    for path in places(setup):
        changed += [put(doc, path, v) for v in SWAPS]
        if isinstance(path[-1], str):
            changed.append(put(doc, path, None, remove=True))
    changed += [put(doc, (*path, "colour"), "red") for path in [(), *places(setup)] if isinstance(at(doc, path), dict)]
    disagree = []
    for variant in changed:
        try:
            check(variant)
            by_check = None
        except FormatError as exc:
            by_check = str(exc)
        by_schema = not SCENARIO.is_valid(variant)
        if by_schema != (by_check is not None) and not (by_check and REFERENCES.search(by_check)):
            disagree.append((variant, by_check))
    assert disagree == []
    assert len(changed) > 1000
