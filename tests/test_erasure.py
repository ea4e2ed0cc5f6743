"""Erasure, R17 and R29 to R31: runs and accounts go, their contributions to weights stay."""

import json
from pathlib import Path

import pytest
from backend import SERVER, fresh_service
from helpers import HQ, claim, end, open_turn, rec, run, scenario, start, taught_turn, web, world
from sqlalchemy import select
from sqlmodel import SQLModel

from memory_core import MemoryService, make_engine, parse, replay
from memory_core.db import TEXT_TABLES, scrub

SECRET = "Globex quietly moved to Shelbyville in 2031"
PREF = claim("Dana", "prefers", "Oolong tea", graph="user", skind="person", okind="preference")


def taught(run_id="r1", turn="t1", person="dana", **extra):
    return [
        start(run_id, person=person, **extra),
        *taught_turn(turn, web("https://a.example/", HQ, excerpt=SECRET), run_id=run_id),
    ]


def test_r29_delete_run_erases_flow_and_records_keeps_weights():
    before = run(taught())
    after = run([*taught(), {"do": "delete_run", "run": "r1", "by": "dana"}])
    assert "r1" not in after["runs"]
    [b], [a] = world(before), world(after)
    assert a["weight"] == b["weight"] and a["log_odds"] == b["log_odds"]
    assert a["supports"] == [{**b["supports"][0], "run": None, "turn": None, "record": None}]


def test_r17_an_ended_run_refuses_deletion_as_written():
    state = run([*taught(), {"do": "end_run", "run": "r1"}, {"do": "delete_run", "run": "r1", "by": "dana"}])
    assert [r["reason"] for r in state["refused"]] == ["run_ended"] and "r1" in state["runs"]


def test_r29_only_person_or_owner_deletes_run():
    state = run(
        [
            *taught(person="lee"),
            {"do": "delete_run", "run": "r1", "by": "omar"},
            {"do": "delete_run", "run": "r1", "by": "dana"},
            {"do": "delete_run", "run": "r1", "by": "dana"},
        ]
    )
    assert [r["reason"] for r in state["refused"]] == ["not_allowed", "unknown_run"]


def test_r17_ending_ephemeral_run_is_the_same_as_deleting_it():
    settings = {"AllowEphemeralRuns": True}
    ended = run([*taught(ephemeral=True), {"do": "end_run", "run": "r1"}], settings=settings)
    deleted = run([*taught(ephemeral=True), {"do": "delete_run", "run": "r1", "by": "dana"}], settings=settings)
    for s in (ended, deleted):
        s.pop("reads"), s.pop("refused")
    assert ended == deleted and "r1" not in ended["runs"] and len(world(ended)) == 1


def test_r30_delete_account_erases_user_graph_and_person_from_runs():
    events = [
        start(person="lee"),
        *taught_turn("t1", web("https://a.example/", HQ, {**PREF, "subject": {"name": "Lee", "kind": "person"}})),
        open_turn("t2"),
        {"do": "delete_account", "person": "lee"},
        open_turn("t3"),
        rec("t2", {"origin": "person", "claims": []}),
        end("t2"),
    ]
    state = run(events)
    assert "lee" not in state["people"] and state["runs"]["r1"]["person"] is None
    assert [r["reason"] for r in state["refused"]] == ["unknown_person", "unknown_person"]
    assert len(world(state)) == 1


def test_r10_user_claim_of_erased_person_reported_r30():
    events = [
        start(person="lee"),
        open_turn("t1"),
        rec("t1", web("https://a.example/", PREF)),
        {"do": "delete_account", "person": "lee"},
        end("t1"),
    ]
    state = run(events)
    assert state["runs"]["r1"]["turns"]["t1"]["skipped"] == [{"record": "t1#1", "claim": 0, "rule": "R30"}]


def test_r30_owner_account_cannot_be_deleted():
    state = run([{"do": "delete_account", "person": "dana"}])
    assert state["refused"][0]["reason"] == "not_allowed" and "dana" in state["people"]


def _db_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def test_r31_erased_text_is_nowhere_in_the_database_files(tmp_path):
    db = tmp_path / "memory.db"
    svc = MemoryService(make_engine(f"sqlite:///{db}"))
    events = [
        *taught(),
        open_turn("t9", request=SECRET + " (request)"),
        {
            "do": "record",
            "turn": "t9",
            "origin": "model",
            "source": "planner",
            "excerpt": SECRET + " (model)",
            "claims": [PREF],
        },
        end("t9"),
    ]
    engine, _ = replay(parse(json.dumps(scenario(events))), svc)
    svc.engine.dispose()
    assert SECRET.encode() in _db_bytes(db)  # control: the text is there before deletion
    engine.apply(100, {"do": "delete_run", "run": "r1", "by": "dana"})
    engine.apply(101, {"do": "delete_account", "person": "lee"})
    svc.engine.dispose()
    assert SECRET.encode() not in _db_bytes(db)
    assert b"Oolong" in _db_bytes(db)  # Dana's own user graph stays


def test_r31_deleted_account_name_gone(tmp_path):
    db = tmp_path / "memory.db"
    svc = MemoryService(make_engine(f"sqlite:///{db}"))
    doc = scenario(
        [
            start(person="lee"),
            *taught_turn(
                "t1", web("https://a.example/", {**PREF, "subject": {"name": "Leopold Quixotic", "kind": "person"}})
            ),
        ]
    )
    doc["people"][1]["name"] = "Leopold Quixotic"
    engine, _ = replay(parse(json.dumps(doc)), svc)
    engine.apply(10, {"do": "delete_run", "run": "r1", "by": "lee"})
    svc.engine.dispose()
    assert b"Leopold Quixotic" in _db_bytes(db)
    engine.apply(11, {"do": "delete_account", "person": "lee"})
    svc.engine.dispose()
    assert b"Leopold Quixotic" not in _db_bytes(db)


def test_r31_erased_text_is_in_no_table_on_this_backend():
    """Every text column of every table, read back through SQL, on SQLite or PostgreSQL."""
    svc = fresh_service()
    events = [
        *taught(),
        open_turn("t9", request=SECRET + " (request)"),
        end("t9"),
        {"do": "delete_run", "run": "r1", "by": "dana"},
    ]
    replay(parse(json.dumps(scenario(events))), svc)
    with svc.engine.connect() as conn:
        dump = "".join(str(row) for t in SQLModel.metadata.sorted_tables for row in conn.execute(select(t)))
    assert SECRET not in dump and "Springfield" in dump


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
def test_r31_postgresql_scrub_leaves_erased_text_in_no_table_file():
    svc = fresh_service()
    events = [*taught(), {"do": "delete_run", "run": "r1", "by": "dana"}]
    replay(parse(json.dumps(scenario(events))), svc)
    with svc.engine.connect() as conn:
        data = conn.exec_driver_sql("SHOW data_directory").scalar()
        files = [conn.exec_driver_sql(f"SELECT pg_relation_filepath('{t}')").scalar() for t in TEXT_TABLES]

    def table_bytes() -> bytes:
        with svc.engine.connect() as conn:
            paths = [conn.exec_driver_sql(f"SELECT pg_relation_filepath('{t}')").scalar() for t in TEXT_TABLES]
        conn.close()
        return b"".join(p.read_bytes() for f in paths for p in Path(data).glob(f + "*"))

    assert files and data
    svc.engine.dispose()
    with svc.engine.connect() as conn:
        conn.exec_driver_sql("CHECKPOINT")
        conn.commit()
    if SECRET.encode() not in table_bytes():
        pytest.skip("PostgreSQL already reclaimed the space; the control below cannot show anything")
    scrub(svc.engine)
    assert SECRET.encode() not in table_bytes()
