"""#38.3: every tool's input schema says what the server requires, so a client knows before it calls.
Arguments are generated from each tool's published schema, valid ones and others one step off it
(a key dropped, a key's value of another kind, an unknown key); the schema's verdict (jsonschema)
must be the server's: what the schema admits is never answered `invalid`, what it refuses always is.
One check is the format's alone and said in words: a web source has a host (R25)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import jsonschema
import pytest
from backend import ABOVE_THE_STORE, SERVER, fresh_url
from helpers import scenario
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from test_mcp import served

from memory_core import MemoryService, parse, replay
from memory_core.agents.server import MemoryAgents

pytestmark = ABOVE_THE_STORE
Obj = dict[str, Any]
#: Texts as JSON carries them: no NUL and no lone surrogate (the format refuses both, R25's "storable").
#: Numbers as JSON carries them: finite (JSON has no infinity; the SDK's client sends one as null).
CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
ANY_JSON = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(CHARS, max_size=5),
)


def values(schema: Obj, defs: Obj) -> st.SearchStrategy[Any]:
    """Values a schema admits (the JSON Schema the SDK publishes: refs, anyOf/oneOf, enums, objects)."""
    if "$ref" in schema:
        return st.deferred(lambda: values(defs[schema["$ref"].rsplit("/", 1)[1]], defs))
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema or "oneOf" in schema:
        return st.one_of([values(s, defs) for s in schema.get("anyOf", schema.get("oneOf"))])
    kind = schema.get("type")
    if kind == "string":
        text = st.from_regex(schema["pattern"], alphabet=CHARS) if "pattern" in schema else st.text(CHARS)
        return text.filter(lambda t: len(t) <= schema.get("maxLength", 10_000))
    if kind == "number":
        low, high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        return st.floats(
            low, high, exclude_min=low is not None, exclude_max=high is not None, allow_nan=False, allow_infinity=False
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(values(schema["items"], defs), max_size=2)
    props, required = schema.get("properties", {}), set(schema.get("required", ()))
    return st.fixed_dictionaries(
        {k: values(v, defs) for k, v in props.items() if k in required},
        optional={k: values(v, defs) for k, v in props.items() if k not in required},
    )


def arguments(schema: Obj) -> st.SearchStrategy[Obj]:
    """Arguments of a tool: as its schema generates them, or one step off (dropped, changed, added)."""
    made = values(schema, schema.get("$defs", {}))

    @st.composite
    def off(draw: Any) -> Obj:
        args = dict(draw(made))
        how = draw(st.sampled_from(["drop", "change", "add"] if args else ["add"]))
        key = draw(st.sampled_from(sorted(args))) if how != "add" else draw(st.sampled_from(["x", "person", "org"]))
        if how == "drop":
            del args[key]
        else:
            args[key] = draw(ANY_JSON)
        return args

    return st.one_of(made, off())


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryAgents]:
    # a file, not SQLite in memory (one connection for every thread): the sessions' sweeper and the tools'
    # worker threads each take their own connection, as in a served memory (a shared one failed under load)
    url = fresh_url() if SERVER else f"sqlite:///{tmp_path_factory.mktemp('schemas') / 'memory.db'}"
    svc: MemoryService = MemoryService.at(url)
    replay(parse(json.dumps(scenario([]))), svc)
    agents = served(svc)
    yield agents
    agents.sessions.stop()
    svc.close()


def tool_schemas() -> dict[str, Obj]:
    from memory_core.agents.server import _tool
    from memory_core.agents.tools import TOOLS

    return {name: _tool(name, fn, notes).parameters for name, (fn, notes) in TOOLS.items()}


@pytest.mark.parametrize("name", sorted(tool_schemas()))
def test_the_server_answers_as_the_tools_schema_says(agents, name):
    schema = tool_schemas()[name]
    checker = jsonschema.Draft202012Validator(schema)

    @settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.lists(arguments(schema), min_size=20, max_size=20))
    def holds(calls: list[Obj]) -> None:
        async def answers() -> list[Obj]:
            async with Client(agents.build()) as c:
                return [
                    (r.structured_content or {}) if r.is_error else {}
                    for r in [await c.call_tool(name, a) for a in calls]
                ]

        optional = set(schema["properties"]) - set(schema.get("required", ()))
        for args, out in zip(calls, anyio.run(answers), strict=True):
            # a null optional argument is taken as absent (docs/decisions.md, MCP): judged without it
            fits = checker.is_valid({k: v for k, v in args.items() if v is not None or k not in optional})
            if fits and out.get("reason") == "invalid":
                assert "needs a host" in out["message"], (args, out)  # R25, said in the schema's words only
            else:
                assert (out.get("reason") == "invalid") is not fits, (fits, args, out)

    holds()


def test_record_says_source_is_required_unless_the_origin_is_person():
    schema = tool_schemas()["record"]
    checker = jsonschema.Draft202012Validator(schema)
    claim = {
        "graph": "user",
        "subject": {"name": "Me", "kind": "person"},
        "relation": "likes",
        "object": {"value": "t"},
    }
    for origin in ("model", "tool", "web", "document"):
        assert not checker.is_valid({"turn": "t", "origin": origin, "claims": [claim]}), origin
        assert checker.is_valid({"turn": "t", "origin": origin, "source": "https://a.example/", "claims": [claim]})
    assert checker.is_valid({"turn": "t", "origin": "person", "claims": [claim]})
