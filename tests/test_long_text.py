"""Long texts run alike on both backends (issue #13): a pasted page as a literal value, an entity
name or an alias is stored as given and found again, though PostgreSQL's btree holds at most about
2,700 bytes an index row: what is indexed is a bounded key (rules.name_key, rules.value_key)."""

import json

import pytest
from backend import SERVER, database_url
from helpers import end, entity, open_turn, rec, run, scenario, start, taught_turn, web, world
from sqlalchemy import text

from memory_core import FormatError, make_engine, parse
from memory_core.format.fields import MAX_NAME
from memory_core.rules.keys import KEY_BYTES, name_key, value_key
from memory_core.store.database import upgrade

LONG_VALUE = "Globex annual report. " * 500  # 11 KB, far past one index row
LONG_NAME = "The Globex Corporation of " + "Springfield and Shelbyville " * 120  # 3.4 KB
LONG_ALIAS = "GX " + "holding " * 400


def read(turn, call, args):
    return {"do": "read", "turn": turn, "call": call, "args": args}


def test_keys_are_bounded_and_distinct():
    assert name_key("  Globex   Corp ") == "globex corp"
    assert value_key("1989") == "v:1989"
    long_key = name_key(LONG_NAME)
    assert len(long_key.encode()) < KEY_BYTES and "  sha256:" in long_key
    # spacing and case still do not matter for a long name; one more character does
    assert name_key(LONG_NAME.upper().replace(" ", "  ")) == long_key
    assert name_key(LONG_NAME + "x") != long_key
    assert value_key(LONG_VALUE).startswith("h:") and value_key(LONG_VALUE) != value_key(LONG_VALUE + " ")
    # a short name never folds to two spaces in a row, so it cannot take a long name's key
    assert name_key(long_key) != long_key


def test_long_value_name_and_alias_are_taught_and_read_back():
    value_claim = {
        "graph": "world",
        "subject": entity("Globex"),
        "relation": "described_as",
        "object": {"value": LONG_VALUE},
    }
    name_claim = {
        "graph": "world",
        "subject": {"name": LONG_NAME, "kind": "organization", "aliases": [LONG_ALIAS]},
        "relation": "located_in",
        "object": entity("Springfield", "place"),
    }
    state = run(
        [
            start(),
            *taught_turn("t1", web("https://a.example/", value_claim, name_claim)),
            # the same texts again from another host: the same facts, a second source each
            *taught_turn("t2", web("https://b.example/", value_claim, name_claim)),
            open_turn("t3"),
            read("t3", "GraphResolve", {"name": LONG_ALIAS.lower()}),
            read(
                "t3",
                "GraphSource",
                {"fact": {"subject": entity("Globex"), "relation": "described_as", "object": {"value": LONG_VALUE}}},
            ),
            end("t3"),
            {
                "do": "dispute",
                "org": "acme",
                "by": "lee",
                "fact": {
                    "subject": entity(LONG_NAME),
                    "relation": "located_in",
                    "object": entity("Springfield", "place"),
                },
            },
        ]
    )
    assert state["refused"] == []
    facts = {f["relation"]: f for f in world(state)}
    assert facts["described_as"]["object"] == {"value": LONG_VALUE}
    assert facts["described_as"]["sources"] == 2
    assert facts["located_in"]["subject"]["name"] == LONG_NAME.strip()
    assert facts["located_in"]["sources"] == 2 and len(facts["located_in"]["disputes"]) == 1
    resolved, source = state["reads"]
    assert [e["name"] for e in resolved["result"]] == [LONG_NAME.strip(), LONG_NAME.strip()]  # World and Flow
    assert [s["record"] for s in source["result"]] == ["t1#1", "t2#1"]


def test_long_value_in_a_request_claim_and_a_failed_turn():
    """A failed turn with long text keeps it as evidence and teaches nothing (R2)."""
    claim = {"graph": "world", "subject": entity("Globex"), "relation": "notes", "object": {"value": LONG_VALUE}}
    state = run([start(), open_turn("t1"), rec("t1", web("https://a.example/", claim)), end("t1", "failed")])
    assert world(state) == [] and state["refused"] == []


def test_ids_kinds_and_relations_have_one_documented_limit_on_both_backends():
    """Ids, kinds, relations and work names are indexed as given: at most MAX_NAME characters,
    refused by the file check at its path on both backends alike; at the limit they run."""
    long_id, kind, relation = "r" * MAX_NAME, "k" * MAX_NAME, "é" * MAX_NAME  # 400 bytes of UTF-8
    user_claim = {"graph": "user", "subject": entity("Me", kind), "relation": relation, "object": {"value": "x"}}
    doc = {"origin": "document", "source": "doc:" + "d" * 5000, "excerpt": "e", "claims": [user_claim]}
    state = run([start(long_id), *taught_turn("t" * MAX_NAME, doc, run_id=long_id)])
    assert state["refused"] == []
    (fact,) = state["people"]["dana"]["user"]["facts"]
    assert fact["relation"] == relation and fact["supports"][0]["key"] == "doc:" + "d" * 5000
    for bad, path in (
        (start("r" * (MAX_NAME + 1)), "events[0].run"),
        ({**user_claim, "relation": relation + "x"}, "events[1].claims[0].relation"),
    ):
        events = (
            [bad]
            if path.startswith("events[0]")
            else [start(), {"do": "record", "turn": "t1", **{**doc, "claims": [bad]}}]
        )
        with pytest.raises(FormatError) as err:
            parse(json.dumps(scenario(events)))
        assert str(err.value).startswith(path) and f"at most {MAX_NAME} characters" in str(err.value)


def test_migration_0007_rewrites_long_keys_an_older_database_holds(tmp_path):
    """An older database may hold a name key or value key past KEY_BYTES (SQLite took them; on
    PostgreSQL up to the btree's limit): after `db upgrade` the same look-ups find them."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    if SERVER:
        url = database_url("memory_migrate_keys")
        with make_engine(url, create=False).begin() as conn:
            conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    engine = make_engine(url, create=False)
    upgrade(engine, "0006")
    name, value = "Globex " * 150, "v" * 1500  # 1 KB and 1.5 KB: past KEY_BYTES, under the btree's limit
    old_key = " ".join(name.split()).casefold()
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO entity (id, graph, owner, kind, key, name, aliases, active_facts) "
                "VALUES (1, 'world', 'acme', 'organization', :k, :n, '[]', 1)"
            ),
            {"k": old_key, "n": name.strip()},
        )
        conn.execute(text("INSERT INTO alias (entity_id, key) VALUES (1, :k)"), {"k": old_key})
        conn.execute(
            text(
                "INSERT INTO fact (id, graph, owner, subject_id, relation, value, object_key, retracted, status,"
                " log_odds, weight, sources) VALUES (1, 'world', 'acme', 1, 'says', :v, :ok, false, 'active', 0, 0.5, 0)"
            ),
            {"v": value, "ok": "v:" + value},
        )
    upgrade(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT key FROM entity")).scalar_one() == name_key(name)
        assert conn.execute(text("SELECT key FROM alias")).scalar_one() == name_key(name)
        assert conn.execute(text("SELECT object_key FROM fact")).scalar_one() == value_key(value)
    engine.dispose()
