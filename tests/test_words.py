"""GraphResolve finds what an agent means (#38 point 6, agent-tools.md Version 2): `match: "words"` (part of
a name, any case or accent, aliases, exact matches first) and `near` on an exact resolve that found
nothing, never naming what the turn may not see (R20), one probe either way (R21); the word index on
both backends (its migration, the generator's bulk load, erasure) and the SDK's client over stdio."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from backend import SERVER, database_url, fresh_service
from helpers import claim, end, open_turn, rec, run, start, taught_turn, web
from mcp import Client
from sqlalchemy import text
from test_mcp_transports import call, stdio

from memory_core import MemoryService, make_engine
from memory_core.format.checks import event as checked
from memory_core.format.replay import apply
from memory_core.generate import generate
from memory_core.rules.visibility import owners
from memory_core.rules.words import folded, matches, words
from memory_core.store import words as word_index
from memory_core.store.database import driver_connection
from memory_core.store.dialect import dialect_of
from memory_core.store.driver import Driver

Obj = dict[str, Any]


def read(turn: str, name: str, **args: Any) -> Obj:
    return {"do": "read", "turn": turn, "call": "GraphResolve", "args": {"name": name, **args}}


def named(*names: str, kind: str = "organization", aliases: tuple[str, ...] = ()) -> list[Obj]:
    """A web record claiming each name is in Springfield (the first name with `aliases`)."""
    claims = [claim(n, "located_in", "Springfield", skind=kind) for n in names]
    if aliases:
        claims[0]["subject"]["aliases"] = list(aliases)
    return [web("https://a.example/", *claims)]


def reads_of(events: list[Obj], **kw: Any) -> list[Obj]:
    return run(events, **kw)["reads"]


def hits(r: Obj, key: str = "result") -> list[tuple[str, str]]:
    return [(e["name"], e["graph"]) for e in r.get(key, [])]


# --- the rule, pure ----------------------------------------------------------------------------------


def test_r23_words_fold_accents_and_case_and_split_on_anything_but_letters_and_digits():
    assert folded("Zürich Öl") == "zurich ol"
    assert words("  Brightgear-Motors, GmbH (ZÜRICH) brightgear") == ["brightgear", "motors", "gmbh", "zurich"]


@pytest.mark.parametrize(
    ("asked", "found"),
    [
        ("Brightgear", True),
        ("bright", True),
        ("BRIGHT mot", True),
        ("mot bright", True),  # any order
        ("motors gear", False),  # a word begins a word: "gear" begins none
        ("zurich", True),  # an alias, accents ignored
        ("bright zur", True),  # words of the name and of an alias
        ("brightgear motors ag", False),
        ("!!", False),  # no word: nothing
    ],
)
def test_r23_words_match_when_every_word_begins_a_word_of_the_name_or_an_alias(asked, found):
    assert matches(asked, ["Brightgear Motors", "BGM Zürich"]) is found


# --- through replay, on the backend under test ------------------------------------------------------


def test_r23_words_finds_part_of_a_name_in_any_case_with_accents_and_aliases_exact_first():
    taught = named("Brightgear", "Brightgear Motors", "Zürich Öl AG", "Globex", aliases=("BG Holdings",))
    first, second, third, fourth, fifth = reads_of(
        [
            start(workflow="free"),
            *taught_turn("t1", *taught),
            open_turn("t2"),
            read("t2", "brightgear", match="words"),
            read("t2", "MOT brig", match="words"),
            read("t2", "zurich ÖL", match="words"),
            read("t2", "holdings", match="words"),
            read("t2", "gear", match="words"),
        ]
    )
    # exact matches first (both graphs), then the rest by name
    assert hits(first) == [
        ("Brightgear", "world"),
        ("Brightgear", "flow"),
        ("Brightgear Motors", "world"),
        ("Brightgear Motors", "flow"),
    ]
    assert first["args"] == {"name": "brightgear", "match": "words"} and "near" not in first
    assert hits(second) == [("Brightgear Motors", "world"), ("Brightgear Motors", "flow")]
    assert hits(third) == [("Zürich Öl AG", "world"), ("Zürich Öl AG", "flow")]
    assert hits(fourth) == [("Brightgear", "world"), ("Brightgear", "flow")]  # by its alias
    assert fifth["result"] == []  # a word begins a word; "gear" is inside one


def test_r23_exact_stays_exact_and_carries_near_only_when_it_found_nothing():
    found, empty, nothing_near = reads_of(
        [
            start(workflow="free"),
            *taught_turn("t1", *named("Brightgear Motors")),
            open_turn("t2"),
            read("t2", "brightgear  MOTORS"),
            read("t2", "Brightgear"),
            read("t2", "Initech"),
        ]
    )
    assert hits(found) == [("Brightgear Motors", "world"), ("Brightgear Motors", "flow")] and "near" not in found
    assert empty["result"] == []
    assert empty["near"] == [
        {"name": "Brightgear Motors", "kind": "organization", "graph": "world"},
        {"name": "Brightgear Motors", "kind": "organization", "graph": "flow"},
    ]
    assert nothing_near["result"] == [] and "near" not in nothing_near  # as states written before `near`


def test_r23_near_names_at_most_five_and_keeps_the_reads_kind():
    many = [f"Bright {w}" for w in ("Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta")]
    five, kinded = reads_of(
        [
            start(workflow="free"),
            *taught_turn("t1", *named(*many), *named("Bright Place", kind="place")),
            open_turn("t2"),
            read("t2", "Bright"),
            read("t2", "Bright", kind="place"),
        ]
    )
    assert len(five["near"]) == 5 and [e["name"] for e in five["near"]][:2] == ["Bright Alpha", "Bright Alpha"]
    assert {e["name"] for e in kinded["near"]} == {"Bright Place"}


def _isolation_events(*resolves: Obj) -> list[Obj]:
    """Entities named Bright... in every graph around dana's run r1: hers to see (acme's World, her User
    graph, r1's Flow) and not (globex's World, lee's User graph, r2's Flow)."""
    note = {"name": "Brightflow Draft", "kind": "note"}
    flow_only = {"graph": "flow", "subject": note, "relation": "says", "object": {"value": "x"}}

    def mine(name: str) -> Obj:
        return {
            "graph": "user",
            "subject": {"name": name, "kind": "person"},
            "relation": "likes",
            "object": {"value": "y"},
        }

    return [
        {"do": "start_run", "run": "g1", "org": "globex", "person": "omar"},  # globex has no workflow
        *taught_turn("gt", *named("Brightgear Motors"), run_id="g1"),
        start("r2", person="dana", workflow="free"),
        *taught_turn("t2", web("https://b.example/", flow_only), run_id="r2"),
        start("r3", person="lee", workflow="free"),
        open_turn("t3", "r3", request={"text": "I like it", "claims": [mine("Brightlee Diary")]}),
        end("t3"),
        start("r1", person="dana", workflow="free"),
        open_turn("t0", "r1", request={"text": "I like it", "claims": [mine("Brightdana Notes")]}),
        rec("t0", web("https://c.example/", claim("Brightwater Labs", "located_in", "Springfield"))),
        end("t0"),
        open_turn("t1", "r1"),
        *resolves,
    ]


def test_r20_near_and_words_never_name_what_the_turn_may_not_see():
    state = run(_isolation_events(read("t1", "Bright"), read("t1", "bright", match="words")))
    near, words_read = state["reads"]
    seen = {("Brightwater Labs", "world"), ("Brightwater Labs", "flow"), ("Brightdana Notes", "user")}
    seen.add(("Brightdana Notes", "flow"))  # her words in r1 are in its Flow graph too
    assert set(hits(near, "near")) == seen and near["result"] == []
    assert set(hits(words_read)) == seen
    # each of the others is there, in its own graph: the turn may not see it
    assert "Brightgear Motors" in json.dumps(state["organizations"]["globex"])
    assert "Brightlee Diary" in json.dumps(state["people"]["lee"])
    assert "Brightflow Draft" in json.dumps(state["runs"]["r2"]["flow"])


def test_r21_words_and_near_spend_one_probe_each():
    events = [
        start(),  # research: MemoryProbes 2
        *taught_turn("t1", *named("Brightgear Motors")),
        open_turn("t2"),
        read("t2", "Brightgear"),
        read("t2", "bright", match="words"),
        read("t2", "bright", match="words"),
    ]
    state = run(events)
    near, found, refused = state["reads"]
    assert near["near"] and found["result"] and refused["outcome"] == "budget_exhausted"
    assert state["runs"]["r1"]["turns"]["t2"]["probes_used"] == 2


def test_r23_match_is_exact_or_words():
    with pytest.raises(Exception, match="match"):
        run([start(), open_turn("t1"), read("t1", "x", match="prefix")])


# --- the index ---------------------------------------------------------------------------------------


def _word_rows(svc: MemoryService) -> list[tuple[str, int]]:
    with svc.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text("SELECT word, entity_id FROM word ORDER BY word, entity_id"))]


def test_r29_an_erased_run_takes_its_entities_words_with_it():
    svc = fresh_service()
    run([start(workflow="free"), *taught_turn("t1", *named("Uniqueword Corp"))], service=svc)
    assert any(w == "uniqueword" for w, _ in _word_rows(svc))
    svc.delete_run("r1", by="dana")
    flow = [w for w, e in _word_rows(svc) if w == "uniqueword"]
    assert len(flow) == 1  # the World entity's; the run's Flow entity went with its graph
    with svc.engine.connect() as conn:
        orphans = conn.execute(
            text("SELECT count(*) FROM word w LEFT JOIN entity e ON e.id = w.entity_id WHERE e.id IS NULL")
        )
        assert orphans.scalar() == 0
        astray = "SELECT count(*) FROM word w JOIN entity e ON e.id = w.entity_id WHERE w.graph <> e.graph OR w.owner <> e.owner"
        assert conn.execute(text(astray)).scalar() == 0


def test_the_index_proposes_and_the_rule_decides_on_every_name():
    """A differential check: what the index finds is what rules.words.matches says of every entity."""
    many = " ".join(f"Word{i:02d}" for i in range(20))
    names = ["Zürich Öl AG", "Zurich Insurance", "Öl Trading", "A" * 150 + " Long", "A" * 150 + "B Long", "Bright_Line"]
    names.append(many)
    tries = ["zur", "ol", "ÖL ag", "A" * 120, "A" * 150 + "b", "bright_l", "bright", "line", "x"]
    svc = fresh_service()
    run([start(workflow="free"), *taught_turn("t1", *named(*names))], service=svc)
    seen = owners(run_id="r1", org_id="acme", person_id="dana")
    with driver_connection(svc.engine) as dbapi:
        db = Driver(dbapi, dialect_of(svc.engine))
        for asked in [*tries, many, many + " zzz"]:  # past INDEXED_WORDS the rule decides alone
            got = {e["name"] for e in word_index.find(db, seen, asked)}
            assert got == {n for n in names if matches(asked, [n])}, asked
        dbapi.rollback()


def test_the_generator_indexes_what_it_writes(tmp_path):
    url = database_url("memory_words_gen") if SERVER else f"sqlite:///{tmp_path / 'g.db'}"
    engine = make_engine(url)
    if SERVER:
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        engine = make_engine(url)
    generate(engine, supports=300, seed=3)
    with engine.connect() as conn:
        name = conn.execute(text("SELECT name FROM entity WHERE graph = 'world' AND active_facts > 0")).first()[0]
    with driver_connection(engine) as dbapi:
        found = word_index.find(Driver(dbapi, dialect_of(engine)), {"world": "bench"}, name.split()[0][:3])
        dbapi.rollback()
    assert name in {e["name"] for e in found}
    engine.dispose()


def test_migration_0013_indexes_the_entities_already_there(tmp_path):
    from memory_core.store.database import upgrade

    url = database_url("memory_migrations") if SERVER else f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url, create=False)
    if SERVER:
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    upgrade(engine, "0012")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO entity (id, graph, owner, kind, key, name, aliases, active_facts, since, alias_since) "
            """VALUES (7, 'world', 'acme', 'place', 'zürich öl', 'Zürich Öl', '["ZH Oil-Co"]', 1, 0, '[0]')"""
        )
    upgrade(engine)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT word, entity_id FROM word ORDER BY word")).all()
    assert [tuple(r) for r in rows] == [("co", 7), ("oil", 7), ("ol", 7), ("zh", 7), ("zurich", 7)]
    engine.dispose()


# --- the SDK's client over stdio ------------------------------------------------------------------


def test_mcp_graphresolve_by_words_and_near_over_stdio(agent_db):
    url, svc = agent_db  # the tests' organizations, people and workflows are there already
    for e in _isolation_events():
        apply(svc, checked("", e))
    token = svc.issue_token("dana", org="acme")

    async def main() -> tuple[Obj, Obj, Obj, Obj, Obj, str]:
        async with Client(stdio(url, token)) as c:
            tool = next(t for t in (await c.list_tools()).tools if t.name == "GraphResolve")
            r = await call(c, "start_run", {"workflow": "research"})  # MemoryProbes 2
            turn = (await call(c, "open_turn", {"run": r["run"], "request": "Bright what?"}))["turn"]
            near = await call(c, "GraphResolve", {"turn": turn, "name": "Brightwater"})
            words_read = await call(c, "GraphResolve", {"turn": turn, "name": "BRIGHTWÄTER la", "match": "words"})
            spent = await c.call_tool("GraphResolve", {"turn": turn, "name": "x"})
            r = await call(c, "start_run", {"workflow": "free"})  # no cap
            turn = (await call(c, "open_turn", {"run": r["run"], "request": "Bright what?"}))["turn"]
            mine = await call(c, "GraphResolve", {"turn": turn, "name": "Bright"})
            return tool.input_schema, near, words_read, spent.structured_content or {}, mine, tool.description or ""

    schema, near, words_read, spent, mine, description = anyio.run(main)
    # never globex's Brightgear Motors, lee's Brightlee Diary, nor r2's Brightflow Draft (R20)
    assert {(e["name"], e["graph"]) for e in mine["near"]} == {
        ("Brightwater Labs", "world"),
        ("Brightdana Notes", "user"),
    }
    assert schema["properties"]["match"]["enum"] == ["exact", "words"] and "partial" in description
    assert near["result"] == [] and {(e["name"], e["graph"]) for e in near["near"]} == {("Brightwater Labs", "world")}
    assert [(e["name"], e["graph"]) for e in words_read["result"]] == [("Brightwater Labs", "world")]
    assert "near" not in words_read
    assert spent["reason"] == "budget_exhausted"  # two reads spent two probes, `near` none of its own
