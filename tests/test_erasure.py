"""Erasure, R17 and R29 to R31: runs and accounts go, their contributions to weights stay."""

import json
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from backend import SERVER, database_url, fresh_service
from helpers import BASE, HQ, claim, end, open_turn, rec, run, scenario, start, taught_turn, web, weights, world
from sqlalchemy import create_engine, select
from sqlmodel import SQLModel

from memory_core import MemoryService, make_engine, parse, replay
from memory_core.store import dialect as dialect_module
from memory_core.store import pg_scrub
from memory_core.store import transactions as store_transactions
from memory_core.store.database import scrub
from memory_core.store.pg_scrub import all_tables

BASE_PEOPLE = BASE["people"]
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
    svc = fresh_service(files=True)
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
@pytest.mark.alone  # the files of the server: no other test writes meanwhile (.ci/test-both)
def test_r31_postgresql_db_scrub_by_hand_leaves_erased_text_in_no_file_or_statistics(monkeypatch):
    """`db scrub` (store.database.scrub) alone, the product's own scrub after the deletion switched off."""
    svc = _pg_taught_and_analyzed()
    monkeypatch.setattr(store_transactions, "after_erasure", lambda engine: False)
    svc.delete_run("r1", by="dana")
    stats, files = _pg_dump_everything(svc)
    assert SECRET in stats and svc.erasure_status()["pending"] == 1  # control: nothing scrubbed yet
    assert scrub(svc.engine) is True
    stats, files = _pg_dump_everything(svc)
    assert SECRET not in stats and SECRET.encode() not in files
    assert svc.erasure_status()["pending"] == 0


# --- R30: nothing of a deleted person's id is kept ------------------------------------------------

ZED = "zed-7q3x"  # an id found nowhere else, so a scan for it finds only what R30 must erase
YAN = "yan-5k2w"


def _two_erased_people() -> tuple[list, dict]:
    """Two members who state facts in their own words, are disputed by and dispute, then go."""
    people = [
        {"id": ZED, "name": "Zed Quorum", "memberships": {"acme": "member"}},
        {"id": YAN, "name": "Yan Velour", "memberships": {"acme": "member"}},
    ]
    said = {"origin": "person", "excerpt": "I heard it", "claims": [HQ]}
    events = [
        start("r1", person=YAN, workflow="free"),
        *taught_turn("t1", said, run_id="r1"),
        start("r2", person=ZED, workflow="free"),
        *taught_turn("t2", said, {**said, "excerpt": "twice"}, run_id="r2"),
        *taught_turn("t3", {"origin": "person", "source": ZED, "claims": [FOUNDED_IN]}, run_id="r1"),
        {"do": "dispute", "org": "acme", "by": ZED, "fact": FOUNDED_IN_REF},
        {"do": "delete_account", "person": ZED},
        {"do": "delete_account", "person": YAN},
    ]
    return events, {"people": [*BASE_PEOPLE, *people]}


FOUNDED_IN = {"graph": "world", "subject": {"name": "Globex", "kind": "organization"}, "relation": "founded",
              "object": {"value": "1989"}}  # fmt: skip
FOUNDED_IN_REF = {k: FOUNDED_IN[k] for k in ("subject", "relation", "object")}


def _replay_doc(events, extra, svc):
    doc = scenario(events)
    doc.update(extra)
    engine, _ = replay(parse(json.dumps(doc)), svc)
    return engine.state()


def test_r30_a_deleted_persons_supports_take_one_erased_key_each_and_weights_stay():
    events, extra = _two_erased_people()
    before = _replay_doc(events[:-2], extra, fresh_service(files=True))
    after = _replay_doc(events, extra, fresh_service(files=True))
    assert weights(world(before)) == weights(world(after))
    keys = {(f["relation"], tuple(sp["key"] for sp in f["supports"])) for f in world(after)}
    # Zed was deleted first: person:erased:1 for all of Zed's supports (R25: still one source),
    # person:erased:2 for Yan's; Zed's dispute keeps its contribution without its author.
    assert keys == {
        ("headquartered_in", ("person:erased:2", "person:erased:1", "person:erased:1")),
        ("founded", ("person:erased:1",)),
    }
    [hq] = [f for f in world(after) if f["relation"] == "headquartered_in"]
    assert hq["sources"] == 2
    [founded] = [f for f in world(after) if f["relation"] == "founded"]
    assert founded["disputes"] == [{"by": None, "contribution": founded["disputes"][0]["contribution"]}]
    assert founded["disputes"][0]["contribution"] > 0
    assert ZED not in json.dumps(after) and YAN not in json.dumps(after)


def _all_text(svc: MemoryService) -> str:
    with svc.engine.connect() as conn:
        return "".join(str(row) for t in SQLModel.metadata.sorted_tables for row in conn.execute(select(t)))


def test_r30_a_deleted_persons_id_is_in_no_table_on_this_backend():
    """Every column of every table read back through SQL, on SQLite or PostgreSQL; tokens too."""
    events, extra = _two_erased_people()
    svc = fresh_service(files=True)
    _replay_doc(events[:-2], extra, svc)
    svc.issue_token(ZED, org="acme")
    assert ZED in _all_text(svc)  # control
    svc.delete_account(ZED)
    assert ZED not in _all_text(svc)


def test_r30_a_deleted_persons_id_is_nowhere_in_the_sqlite_files(tmp_path):
    db = tmp_path / "memory.db"
    svc = MemoryService(make_engine(f"sqlite:///{db}"))
    events, extra = _two_erased_people()
    _replay_doc(events[:-2], extra, svc)
    svc.issue_token(ZED, org="acme")
    assert ZED.encode() in _db_bytes(db)
    deleted = svc.delete_account(ZED)
    assert deleted.bytes_gone is True and deleted.erased_key == "person:erased:1"
    assert ZED.encode() not in _db_bytes(db)  # the service still open: its own checkpoint did it


# --- R31: db scrub covers every table; the bytes go without a manual step -------------------------


def test_r31_scrub_covers_every_table():
    assert set(all_tables()) == {t.name for t in SQLModel.metadata.sorted_tables}
    assert {"dispute", "apitoken"} <= set(all_tables())


def test_r31_sqlite_a_long_reader_delays_the_bytes_and_the_deletion_says_so(tmp_path, monkeypatch):
    """A reader of an older snapshot keeps the log from folding: the deletion says the bytes are
    not gone yet, and they go by themselves once the reader is done (the finisher's retries)."""
    monkeypatch.setattr(dialect_module, "CHECKPOINT_WAIT_MS", 100)  # the wait before saying "busy"
    db = tmp_path / "memory.db"
    svc = MemoryService(make_engine(f"sqlite:///{db}"))
    replay(parse(json.dumps(scenario(taught()))), svc)
    reader = sqlite3.connect(db)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM record").fetchone()[0] > 0  # a snapshot before the deletion
    try:
        deleted = svc.delete_run("r1", by="dana")
        assert SECRET.encode() in _db_bytes(db)
        assert deleted.bytes_gone is False  # it used to report success
        status = svc.erasure_status()
        assert status["bytes_gone"] is False and status["pending"] == 1
        assert SECRET.encode() in _db_bytes(db)
    finally:
        reader.rollback()
        reader.close()
    status = svc.finish_erasure(timeout=120)
    assert status["bytes_gone"] is True and status["pending"] == 0
    assert SECRET.encode() not in _db_bytes(db)


_REC3 = web("https://a.example/", HQ, excerpt=SECRET)
#: The secret in three records and a request, so that ANALYZE samples it as a common value.
_REPEATED = [start(), open_turn("t1", request=SECRET), rec("t1", _REC3), rec("t1", _REC3), rec("t1", _REC3), end("t1")]

_KILLED_DELETION = """
import json, os, signal, sys
import memory_core.store.dialect as D
import memory_core.store.transactions as T
from memory_core import MemoryService, make_engine, parse, replay

def die(*_a, **_k):
    os.kill(os.getpid(), signal.SIGKILL)  # between the deletion's commit and its scrub

svc = MemoryService(make_engine(sys.argv[1]))
replay(parse(sys.argv[2]), svc)
if svc.engine.dialect.name == "postgresql":
    with svc.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("ANALYZE")  # what autovacuum does by itself
T.after_erasure = die  # the database's scrub right after a deletion commits
D.SQLite.checkpoint = die
svc.delete_run("r1", by="dana")
print("not killed")
"""


def _killed_deletion(url: str) -> None:
    doc = json.dumps(scenario(_REPEATED))
    out = subprocess.run(
        [sys.executable, "-c", _KILLED_DELETION, url, doc],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
        timeout=300,
    )
    assert out.returncode == -signal.SIGKILL, out.stderr


def test_r31_sqlite_a_kill_between_commit_and_checkpoint_is_healed_when_next_opened(tmp_path):
    db = tmp_path / "memory.db"
    _killed_deletion(f"sqlite:///{db}")
    assert SECRET.encode() in _db_bytes(db)  # control: the killed process folded nothing
    svc = MemoryService(make_engine(f"sqlite:///{db}"))  # opening heals, the service stays open
    assert SECRET.encode() not in _db_bytes(db)
    assert svc.erasure_status()["bytes_gone"] is True
    assert "r1" not in svc.export_state()["runs"]


def _pg_dump_everything(svc: MemoryService) -> tuple[str, bytes]:
    """PostgreSQL: the planner's samples of every column (pg_stats), and the bytes of every file of
    every table, its TOAST table and its indexes, and of pg_statistic itself (its dead row versions
    kept old samples), after a CHECKPOINT."""
    with svc.engine.connect() as conn:
        conn.exec_driver_sql("CHECKPOINT")
        stats = str(conn.exec_driver_sql("SELECT * FROM pg_stats WHERE schemaname = 'public'").all())
        data = conn.exec_driver_sql("SHOW data_directory").scalar()
        paths = (
            conn.exec_driver_sql(
                "SELECT pg_relation_filepath(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE (n.nspname IN ('public', 'pg_toast') OR c.oid = 'pg_statistic'::regclass) "
                "AND c.relkind IN ('r', 't', 'i') "
                "AND pg_relation_filepath(c.oid) IS NOT NULL"
            )
            .scalars()
            .all()
        )
    files = b"".join(p.read_bytes() for f in paths for p in _forks(Path(data) / f))
    return stats, files


def _forks(main: Path) -> list[Path]:
    """A relation's files: its main fork and its free-space, visibility and init forks, each with its
    1 GB segments (`16384`, `16384.1`, `16384_fsm`), and not another relation's whose number merely
    starts with the same digits (`163840`)."""
    shape = re.compile(rf"{re.escape(main.name)}(_(fsm|vm|init))?(\.\d+)?")
    return [p for p in main.parent.glob(main.name + "*") if shape.fullmatch(p.name) and p.is_file()]


def _pg_taught_and_analyzed() -> MemoryService:
    svc = fresh_service(files=True)
    replay(parse(json.dumps(scenario(_REPEATED))), svc)
    with svc.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("ANALYZE")  # what autovacuum does by itself
    stats, files = _pg_dump_everything(svc)
    assert SECRET in stats and SECRET.encode() in files  # control
    return svc


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
@pytest.mark.alone  # the files of the server: no other test writes meanwhile (.ci/test-both)
def test_r31_postgresql_a_deletion_leaves_no_text_in_files_or_statistics_by_itself():
    svc = _pg_taught_and_analyzed()
    deleted = svc.delete_run("r1", by="dana")
    assert deleted.bytes_gone is False  # the rewrite runs right after, in the background
    status = svc.finish_erasure(timeout=300)  # waiting for the product, not scrubbing by hand
    assert status == {"bytes_gone": True, "pending": 0, "scrubbing": False, "last_error": None}
    stats, files = _pg_dump_everything(svc)
    assert SECRET not in stats and SECRET.encode() not in files
    assert SECRET not in _all_text(svc)


def _reader_of_this_database(svc: MemoryService) -> Any:
    """A snapshot from before the deletion, held by a session of this database that locks no table of ours."""
    reader = svc.engine.connect().execution_options(isolation_level="REPEATABLE READ")
    reader.exec_driver_sql("SELECT 1").scalar()
    return reader


def _transaction_of_another_database(svc: MemoryService) -> Any:  # noqa: ARG001
    """A transaction with an id, begun before the deletion, in another database of the same server."""
    other = create_engine(database_url("memory_elsewhere")).connect()
    other.exec_driver_sql("SELECT txid_current()").scalar()
    return other


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
@pytest.mark.alone  # the files of the server: no other test writes meanwhile (.ci/test-both)
@pytest.mark.parametrize("holder", [_reader_of_this_database, _transaction_of_another_database])
def test_r31_postgresql_what_began_before_the_deletion_holds_the_scrub_back_and_it_says_so(monkeypatch, holder):
    """VACUUM FULL keeps a row deleted after a snapshot still held in this database, or a transaction still
    running anywhere on the server: while one is, the scrub does not claim the bytes gone; once it ends, it does."""
    monkeypatch.setattr(pg_scrub, "SNAPSHOT_WAIT_S", 0.3)
    svc = _pg_taught_and_analyzed()
    held = holder(svc)
    try:
        svc.delete_run("r1", by="dana")
        assert scrub(svc.engine) is False  # held back, and says so (the marker stays)
        assert svc.erasure_status()["bytes_gone"] is False
    finally:
        held.rollback()
        held.close()
    assert svc.finish_erasure(timeout=300)["bytes_gone"] is True
    stats, files = _pg_dump_everything(svc)
    assert SECRET not in stats and SECRET.encode() not in files


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
@pytest.mark.alone  # the files of the server: no other test writes meanwhile (.ci/test-both)
def test_r31_postgresql_a_kill_before_the_scrub_is_healed_when_next_opened():
    svc = fresh_service(files=True)
    _killed_deletion(svc.engine.url.render_as_string(hide_password=False))
    stats, files = _pg_dump_everything(svc)
    assert SECRET in stats and "r1" not in svc.export_state()["runs"]  # control: committed, not scrubbed
    healed = MemoryService(svc.engine)  # opening finds the marker and scrubs
    assert healed.finish_erasure(timeout=300)["bytes_gone"] is True
    stats, files = _pg_dump_everything(healed)
    assert SECRET not in stats and SECRET.encode() not in files


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
@pytest.mark.alone  # the files of the server: no other test writes meanwhile (.ci/test-both)
@pytest.mark.parametrize(
    "command",
    [["state"], ["token", "issue", "dana", "--org", "acme"], ["load", "sample_data/erasure.json", "--if-empty"]],
)
def test_r31_postgresql_a_kill_before_the_scrub_is_healed_by_the_next_command(command):
    """A command that opens the database finds the killed deletion's marker and does not exit
    before the scrub it starts is done (a daemon thread dies with its process)."""
    svc = fresh_service(files=True)
    url = svc.engine.url.render_as_string(hide_password=False)
    _killed_deletion(url)
    stats, _ = _pg_dump_everything(svc)
    assert SECRET in stats  # control: committed, not scrubbed
    _command_ends_with_the_text_out_of_the_files(svc, *command, "--db", url)


def _command_ends_with_the_text_out_of_the_files(svc: MemoryService, *args: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "memory_core", *args],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "R31: the erased text is out of the database files" in out.stderr
    status = svc.erasure_status()
    assert status["bytes_gone"] is True and status["pending"] == 0
    stats, files = _pg_dump_everything(svc)
    assert SECRET not in stats and SECRET.encode() not in files


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
@pytest.mark.alone  # the files of the server: no other test writes meanwhile (.ci/test-both)
def test_r31_postgresql_replay_into_a_database_ends_when_the_deleted_text_is_out_of_the_files(tmp_path):
    """The CLI waits for the scrub that follows a deletion and says so (R31)."""
    svc = fresh_service(files=True)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario([*_REPEATED, {"do": "delete_run", "run": "r1", "by": "dana"}])))
    url = svc.engine.url.render_as_string(hide_password=False)
    _command_ends_with_the_text_out_of_the_files(svc, "replay", str(path), "--json", "--db", url)
