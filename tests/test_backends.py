"""Both backends: migrations match the models, samples give the same bytes, concurrent teachers
lose nothing, and a fault in the middle of teaching leaves nothing behind."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from backend import SERVER, database_url, empty, fresh_service
from helpers import CEO, FOUNDED, HQ, LIVES, end, open_turn, rec, scenario, start, taught_turn, world
from sqlalchemy import inspect, text
from sqlmodel import SQLModel

from memory_core import MemoryService, ReadResult, load, make_engine, parse, replay
from memory_core.errors import Refusal
from memory_core.rules.visibility import owners
from memory_core.store import database as db_module
from memory_core.store import probes
from memory_core.store import turns as teaching_module
from memory_core.store.database import current, driver_connection, head, statement_driver
from memory_core.store.dialect import WAL_PAGES, dialect_of

ROOT = Path(__file__).resolve().parent.parent
needs_server = pytest.mark.skipif(not SERVER, reason="needs PostgreSQL (make test runs the suite on it too)")


def _schema_diff(engine):
    with engine.connect() as conn:
        return compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)


def test_migrated_sqlite_schema_matches_models(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'm.db'}")
    assert current(engine) == head()
    assert _schema_diff(engine) == []


@needs_server
def test_migrated_postgresql_schema_matches_models():
    url = database_url("memory_migrations")
    engine = make_engine(url, create=False)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    engine = make_engine(url)
    assert current(engine) == head()
    assert _schema_diff(engine) == []


def _empty_database(tmp_path, backend: str) -> str:
    """A database holding no schema at all, for a migration test on either backend."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'old.db'}"
    url = database_url("memory_migrations")
    with make_engine(url, create=False).begin() as conn:
        conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    return url


def _upgraded_from_0009(url: str) -> MemoryService:
    """A memory made at revision 0009 (ids kept as they were), upgraded to the newest."""
    from memory_core.store.database import upgrade

    engine = make_engine(url, create=False)
    upgrade(engine, "0009")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO organization (id, seq, name, allow_ephemeral_runs, learn_from_ephemeral_runs, "
            "learn_from_users, no_memory_shortcuts, since) VALUES ('acme', 0, 'Acme', false, true, true, false, 0)"
        )
        conn.exec_driver_sql("INSERT INTO person (id, seq, name, since) VALUES ('dana', 0, 'Dana', 0)")
        conn.exec_driver_sql("INSERT INTO membership (person_id, org_id, role) VALUES ('dana', 'acme', 'owner')")
        conn.exec_driver_sql("INSERT INTO usedid (kind, id) VALUES ('run', 'run-Erased-Long-Ago')")
    upgrade(engine)
    return MemoryService(engine)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=needs_server)])
def test_upgrading_keeps_used_ids_as_digests_that_still_refuse(tmp_path, backend):
    """#26, point 6 (migration 0010): the ids kept before become keyed digests; the id is refused still."""
    url = _empty_database(tmp_path, backend)
    svc = _upgraded_from_0009(url)
    with svc.engine.connect() as conn:
        kept = [r[0] for r in conn.exec_driver_sql("SELECT id FROM usedid")]
    assert len(kept) == 1 and "Erased" not in kept[0] and len(kept[0]) == 64
    with pytest.raises(Refusal) as refused:
        svc.start_run("run-Erased-Long-Ago", org="acme", person="dana")
    assert refused.value.reason == "duplicate_id"
    svc.start_run("run-new", org="acme", person="dana")


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=needs_server)])
def test_a_memory_made_before_history_shows_its_turns_as_they_were_at_moment_0(tmp_path, backend):
    """#26, point 7 (migration 0011): turns opened before history was kept have no line in
    turnlog; moment 0 shows them as they stand (completed, what they taught), not open."""
    from memory_core.store.database import upgrade

    url = _empty_database(tmp_path, backend)
    engine = make_engine(url, create=False)
    upgrade(engine, "0010")
    old = set(inspect(engine).get_table_names())
    SQLModel.metadata.create_all(engine)  # the tables of later revisions that today's replay writes (words, ...)
    later = [  # and their columns of older tables (the turn's reads' range, 0015)
        (t.name, c.name)
        for t in SQLModel.metadata.sorted_tables
        if t.name in old
        for c in t.columns
        if c.name not in {x["name"] for x in inspect(engine).get_columns(t.name)}
    ]
    with engine.begin() as conn:
        for table, column in later:
            conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {column} INTEGER")
    replay(load(str(ROOT / "sample_data" / "completed_failed_cancelled.json")), MemoryService(engine))
    with engine.begin() as conn:  # as a memory made before history holds them
        conn.exec_driver_sql("DELETE FROM turnlog")
        conn.exec_driver_sql("UPDATE turn SET opened_at = 0")
        conn.exec_driver_sql("UPDATE run SET started_at = 0")
        for table, column in later:
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")
    for table in reversed(SQLModel.metadata.sorted_tables):
        if table.name not in old:
            table.drop(engine)
    upgrade(engine)
    svc = MemoryService(engine)
    now, then = svc.export_state()["runs"], svc.state_at(0)["runs"]
    assert then and {r: {t: x["status"] for t, x in v["turns"].items()} for r, v in then.items()} == {
        r: {t: x["status"] for t, x in v["turns"].items()} for r, v in now.items()
    }
    assert any(x["taught"]["world"] for v in then.values() for x in v["turns"].values())


#: Two runs whose turns read in turn, so each turn's range of read ids holds the other's reads too (#38, B10).
_INTERLEAVED = [
    {"do": "start_run", "run": "r1", "org": "acme", "person": "dana", "workflow": "free"},
    {"do": "open_turn", "run": "r1", "turn": "t1", "request": "One"},
    {"do": "start_run", "run": "r2", "org": "acme", "person": "lee", "workflow": "free"},
    {"do": "open_turn", "run": "r2", "turn": "t2", "request": "Two"},
    *(
        {"do": "read", "turn": t, "call": "GraphResolve", "args": {"name": f"{t} asks {i}"}}
        for i in range(3)
        for t in ("t1", "t2")
    ),
    {"do": "call", "turn": "t1", "work": "agent:checker"},  # refused (R4): kept in a transaction of its own
    {"do": "read", "turn": "t1", "within": "agent:checker", "call": "GraphResolve", "args": {"name": "x"}},
    {"do": "return", "turn": "t1", "work": "agent:checker", "status": "completed"},
    {"do": "read", "turn": "t2", "call": "GraphResolve", "args": {"name": "last"}},
]


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=needs_server)])
def test_0015_a_turns_reads_are_found_by_its_range_and_keeping_one_writes_no_index(tmp_path, backend):
    """#38, B10 (migration 0015): each turn keeps the ids of its first and last read, and its reads are that range's
    rows of its own; turnread has no index nor foreign key to write. Downgraded to 0014 the index is back, and upgraded
    again each turn gets its range from the reads kept: the same reads, in the same order."""
    from alembic import command

    from memory_core.store.database import config, upgrade
    from memory_core.store.dialect import dialect_of

    url = _empty_database(tmp_path, backend)
    engine = make_engine(url, create=False)
    upgrade(engine)
    svc = MemoryService(engine)
    replay(parse(json.dumps(scenario(_INTERLEAVED))), svc)
    made = {t: [(r["call"], r["args"], r["outcome"]) for r in svc.turn_reads(t)] for t in ("t1", "t2")}
    assert [a["name"] for _, a, _ in made["t1"]] == ["t1 asks 0", "t1 asks 1", "t1 asks 2", "x"]
    assert made["t1"][-1][2] == "not_offered" and made["t2"][-1][1] == {"name": "last"} and len(made["t2"]) == 4
    with engine.connect() as conn:
        got = conn.exec_driver_sql("SELECT id, first_read, last_read FROM turn WHERE id IN ('t1', 't2')").all()
        ids = {t: [i for (i,) in conn.exec_driver_sql(f"SELECT id FROM turnread WHERE turn_id = '{t}'")] for t in made}
    assert {t: (min(ids[t]), max(ids[t])) for t in ids} == {t: (first, last) for t, first, last in got}
    assert ids["t1"][0] < ids["t2"][0] < ids["t1"][1]  # the ranges overlap: each turn's own rows are told apart
    look = inspect(engine)
    assert look.get_indexes("turnread") == [] and look.get_foreign_keys("turnread") == []

    cfg = config()
    with dialect_of(engine).migrating(engine) as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0014")
    look = inspect(engine)
    assert [i["name"] for i in look.get_indexes("turnread")] == ["ix_turnread_turn_id"]
    assert "first_read" not in {c["name"] for c in look.get_columns("turn")}
    upgrade(engine)
    again = {t: [(r["call"], r["args"], r["outcome"]) for r in MemoryService(engine).turn_reads(t)] for t in made}
    assert again == made


def test_db_upgrade_command(tmp_path):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    out = subprocess.run(
        [sys.executable, "-m", "memory_core", "db", "upgrade", "--db", url], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0 and f"schema at revision {head()}" in out.stdout


@needs_server
@pytest.mark.parametrize("sample", sorted(p.name for p in (ROOT / "sample_data").glob("*.json")))
def test_samples_give_the_same_state_byte_for_byte_on_both_backends(sample):
    states = []
    for svc in (MemoryService(make_engine("sqlite://")), fresh_service("memory_samples")):
        engine, _ = replay(load(str(ROOT / "sample_data" / sample)), svc)
        states.append(json.dumps(engine.state(), indent=2, ensure_ascii=False))
    assert states[0] == states[1]


# --- concurrency ------------------------------------------------------------------------------

CLAIMS = [HQ, CEO, LIVES, FOUNDED]
WORKERS, TURNS_EACH = 8, 5  # eight writers on the same facts (issue #13: one used up its 40 retries)


def _concurrent_events() -> tuple[list[dict], list[list[str]]]:
    """Open turns, each recording claims on the same facts from shared and own sources."""
    events, groups = [], []
    for w in range(WORKERS):
        events.append(start(f"r{w}", person="dana" if w % 2 else "lee"))
        group = []
        for t in range(TURNS_EACH):
            tid = f"w{w}t{t}"
            group.append(tid)
            events.append(open_turn(tid, f"r{w}"))
            for k, c in enumerate(CLAIMS):
                host = "shared.example" if (t + k) % 3 == 0 else f"w{w}-t{t}-{k}.example"
                events.append(rec(tid, {"origin": "web", "source": f"https://{host}/p", "claims": [c, CLAIMS[0]]}))
            events.append(rec(tid, {"origin": "tool", "source": f"tool-{t % 2}", "claims": CLAIMS}))
        groups.append(group)
    return events, groups


def _world_summary(state: dict) -> list[tuple]:
    return [
        (
            f["subject"]["name"],
            f["relation"],
            f["object"].get("name", f["object"].get("value")),
            f["weight"],
            f["sources"],
            len(f["supports"]),
        )
        for f in world(state)
    ]


def _shared_url(tmp_path: Path) -> str:
    if SERVER:
        url = database_url("memory_concurrency")
        empty(make_engine(url))
        return url
    return f"sqlite:///{tmp_path / 'concurrent.db'}"


def test_eight_concurrent_teachers_lose_nothing_and_match_sequential(tmp_path):
    events, groups = _concurrent_events()
    url = _shared_url(tmp_path)
    svc = MemoryService(make_engine(url))
    replay(parse(json.dumps(scenario(events))), svc)
    start_at = time.time() + 2.0
    procs = [
        subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "concurrency_worker.py"), url, str(start_at), *g],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            text=True,
            cwd=ROOT,
        )
        for g in groups
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * WORKERS, [o[1][-2000:] for o in outs]
    assert not any("error ignored" in err for _, err in outs)  # #26: a retried conflict is said by no one
    concurrent = svc.export_state()

    seq_events = events + [end(t) for g in groups for t in g]
    sequential, _ = replay(parse(json.dumps(scenario(seq_events))), MemoryService(make_engine("sqlite://")))
    seq_state = sequential.state()
    assert _world_summary(concurrent) == _world_summary(seq_state)
    # a web record claims its fact and HQ (one support where they are the same), the tool record all four
    expected_supports = WORKERS * TURNS_EACH * ((1 + 2 * (len(CLAIMS) - 1)) + len(CLAIMS))
    assert sum(len(f["supports"]) for f in world(concurrent)) == expected_supports
    names = [(e["name"], e["kind"]) for e in concurrent["organizations"]["acme"]["world"]["entities"]]
    assert len(names) == len(set(names)) == 3
    assert concurrent["organizations"]["acme"]["map"] == seq_state["organizations"]["acme"]["map"]
    retries = sum(json.loads(o[0].strip().splitlines()[-1])["retries"] for o in outs)
    print(f"conflicts retried: {retries}")


# --- atomicity ----------------------------------------------------------------------------------


class Fault(RuntimeError):
    pass


def test_fault_in_the_middle_of_teaching_leaves_nothing_then_teaches_once(monkeypatch):
    events = [start(), open_turn("t1")]
    events += [rec("t1", {"origin": "web", "source": f"https://h{i}.example/", "claims": CLAIMS}) for i in range(3)]
    svc = fresh_service()
    engine, _ = replay(parse(json.dumps(scenario(events))), svc)
    before = svc.export_state()
    real = teaching_module.refresh_facts

    def failing(db, facts, changes, **new):
        real(db, facts, changes, **new)  # the turn's facts and weights written, then the fault
        raise Fault("injected in the middle of writing the turn's teaching")

    monkeypatch.setattr(teaching_module, "refresh_facts", failing)
    with pytest.raises(Fault):
        svc.end_turn("t1", status="completed")
    assert svc.export_state() == before
    monkeypatch.setattr(teaching_module, "refresh_facts", real)
    svc.end_turn("t1", status="completed")
    after = svc.export_state()
    assert after["runs"]["r1"]["turns"]["t1"]["taught"] == {"world": 12, "user": 0, "flow": 12}
    assert all(len(f["supports"]) == 3 for f in world(after))


def test_concurrent_reads_of_one_turn_never_pass_its_budget(tmp_path):
    """R21 under concurrency: eight threads read one turn whose workflow allows two probes. Each
    read is checked and counted in one transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: the
    turn's row locked, the count a guarded UPDATE), so exactly two are served."""
    url = _shared_url(tmp_path)
    svc = MemoryService(make_engine(url))
    replay(parse(json.dumps(scenario([start(), open_turn("t1")]))), svc)
    gate = threading.Barrier(8)

    def probe(_: int) -> str:
        gate.wait()
        try:
            svc.read("t1", call="GraphResolve", args={"name": "Globex"})
            return "served"
        except Refusal as refusal:
            return refusal.reason

    with ThreadPoolExecutor(8) as pool:
        answers = sorted(pool.map(probe, range(8)))
    assert answers == ["budget_exhausted"] * 6 + ["served"] * 2
    assert svc.export_state()["runs"]["r1"]["turns"]["t1"]["probes_used"] == 2


def test_sqlite_keeps_driver_connections_with_the_engines_settings_and_drops_a_broken_one(tmp_path):
    """The driver's use cases keep their SQLite connections between calls (db.driver_connection,
    issue #8): a kept one has every setting the engine gives (R31's secure_delete, foreign keys,
    the log), and one left inside a transaction is closed, never handed to the next use case."""
    engine = make_engine(f"sqlite:///{tmp_path / 'kept.db'}")
    with driver_connection(engine) as first:
        assert first.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert first.execute("PRAGMA secure_delete").fetchone()[0] == 1
        assert first.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert first.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == WAL_PAGES
    with driver_connection(engine) as again:
        assert again is first
        again.execute("BEGIN IMMEDIATE")  # as a commit that failed would leave it
    with driver_connection(engine) as fresh:
        assert fresh is not first
        assert not fresh.in_transaction
    with pytest.raises(sqlite3.ProgrammingError):
        first.execute("SELECT 1")  # closed, not kept


def test_a_refused_read_leaves_its_connection_clean_for_the_next_use_case(tmp_path):
    """A refusal rolls its use case back (nothing counted, R21) and the kept connection serves the
    next read."""
    svc = MemoryService(make_engine(f"sqlite:///{tmp_path / 'refused.db'}"))
    replay(parse(json.dumps(scenario([start(), open_turn("t1")]))), svc)
    with pytest.raises(Refusal) as refused:
        svc.read("t1", call="GraphExpand", args={"entity": {"name": "Globex", "kind": "organization"}}, within="w9")
    assert refused.value.reason == "nested_not_open"
    kept = db_module.KEPT[svc.engine].idle
    assert len(kept) == 1 and not kept[0].in_transaction  # rolled back, and kept
    connection = kept[0]
    assert svc.read("t1", call="GraphResolve", args={"name": "Globex"}).probes_used == 1
    assert kept == [connection]  # the same connection served the next read
    assert svc.export_state()["runs"]["r1"]["turns"]["t1"]["probes_used"] == 1
    svc.engine.dispose()  # closes kept connections too
    assert kept == []
    with pytest.raises(sqlite3.ProgrammingError):
        connection.execute("SELECT 1")


@needs_server
def test_postgresql_kept_connection_the_server_closed_is_dropped_unused():
    """A kept server connection is checked without a round trip (Dialect.alive): one the server has
    closed since (a restart, an idle timeout) is dropped, and the read runs on a new one, once."""
    svc = fresh_service()
    replay(parse(json.dumps(scenario([start(workflow="free"), open_turn("t1")]))), svc)
    svc.read("t1", call="GraphResolve", args={"name": "Globex"})
    kept = db_module.KEPT[svc.engine].idle
    pids = [c.info.backend_pid for c in kept]
    assert pids
    svc.read("t1", call="GraphResolve", args={"name": "Globex"})
    assert [c.info.backend_pid for c in kept] == pids  # a live kept connection is used again
    with svc.engine.connect() as admin:
        admin.execute(text("SELECT pg_terminate_backend(p) FROM unnest(CAST(:p AS int[])) AS p"), {"p": pids})
    deadline = time.monotonic() + 5
    while any(dialect_of(svc.engine).alive(c) for c in kept) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert svc.read("t1", call="GraphResolve", args={"name": "Globex"}).probes_used == 3
    assert kept and all(c.info.backend_pid not in pids for c in kept)
    assert svc.export_state()["runs"]["r1"]["turns"]["t1"]["probes_used"] == 3


@needs_server
def test_postgresql_one_statement_read_answers_as_the_general_path_and_counts_only_what_rules_allow():
    """PostgreSQL serves a turn-level GraphResolve or GraphExpand in one statement
    (probes.counted_read). Its answer is the general path's (R20, R23), it counts one probe
    (R21), and where R2, R17 or R21 refuses it counts nothing, leaving the refusal to the
    general path."""
    pref = {**HQ, "graph": "user", "subject": {"name": "Dana", "kind": "person"}}
    lee = {**pref, "subject": {"name": "Lee", "kind": "person"}}
    omar = {**HQ, "graph": "user"}  # Omar's own User graph names Globex
    svc = fresh_service()
    events = [
        start(workflow="free"),  # no budget: every read here is served
        *taught_turn("t1", {"origin": "web", "source": "https://a.example/", "claims": [HQ, pref]}),
        open_turn("t2"),
        start("r2"),  # the research workflow: two probes a turn
        open_turn("u1", run_id="r2"),
        {"do": "read", "turn": "u1", "call": "GraphResolve", "args": {"name": "x"}},
        {"do": "read", "turn": "u1", "call": "GraphResolve", "args": {"name": "x"}},
        start("r3"),
        open_turn("v1", run_id="r3"),
        {"do": "end_run", "run": "r3"},
        # What t2 must not see (R20): another organization's graph, another person's, another run's.
        {"do": "start_run", "run": "g1", "org": "globex", "person": "omar"},
        *taught_turn("g1t", {"origin": "web", "source": "https://g.example/", "claims": [HQ, omar]}, run_id="g1"),
        start("l1", person="lee", workflow="free"),
        *taught_turn("l1t", {"origin": "web", "source": "https://l.example/", "claims": [HQ, lee]}, run_id="l1"),
        open_turn("l2", run_id="l1"),
        {"do": "delete_account", "person": "lee"},  # l2 still reads; its User graph is gone (R30)
    ]
    replay(parse(json.dumps(scenario(events))), svc)
    reads = [
        ("GraphResolve", {"name": "globex"}),
        ("GraphResolve", {"name": "Springfield", "kind": "place"}),
        ("GraphExpand", {"entity": {"name": "Globex", "kind": "organization"}}),
        ("GraphExpand", {"entity": {"name": "Dana", "kind": "person"}, "graph": "user"}),
        (
            "GraphExpand",
            {"entity": {"name": "Globex", "kind": "organization"}, "graph": "flow", "relation": "headquartered_in"},
        ),
    ]
    seen = owners(run_id="r1", org_id="acme", person_id="dana")
    with statement_driver(svc.engine) as one:
        _one_statement_reads(one, reads, seen)
    turns = {t: r["turns"] for t, r in svc.export_state()["runs"].items()}
    assert (turns["r1"]["t2"]["probes_used"], turns["r1"]["t1"]["probes_used"], turns["r2"]["u1"]["probes_used"]) == (
        5,
        0,
        2,
    )
    with pytest.raises(Refusal) as refused:
        svc.read("u1", call="GraphResolve", args={"name": "Globex"})
    assert refused.value.reason == "budget_exhausted"
    # Through the service: an unknown graph is no graph (the general path: counted, nothing found);
    # a turn whose person was erased sees no User graph (R30), on the one statement.
    assert svc.read("t2", call="GraphExpand", args={"entity": pref["subject"], "graph": "nope"}) == ReadResult(
        result=[], probes_used=6, cap=None
    )
    erased = svc.read("l2", call="GraphExpand", args={"entity": lee["subject"], "graph": "user"})
    assert erased == ReadResult(result=[], probes_used=1, cap=None)
    seen_by_l2 = svc.read("l2", call="GraphResolve", args={"name": "globex"}).result
    assert sorted(e["graph"] for e in seen_by_l2) == ["flow", "world"]


def _one_statement_reads(db, reads, seen):
    """probes.counted_read against the general path's queries, on turn t2 (run r1, acme, dana)."""
    for n, (call, args) in enumerate(reads, start=1):
        fast = probes.counted_read(db, "t2", call, args, kept=args)
        if call == "GraphResolve":
            general = probes.resolve(db, seen, args["name"], args.get("kind"))
        else:
            general = probes.expanded(
                probes.expand_rows(db, seen, args["entity"], args.get("graph", "world"), args.get("relation"))
            )
        assert general, f"{call} {args} finds something"
        assert fast == (n, None, general)
        if args.get("name") == "globex":  # Omar's User graph names Globex too; Dana's turn sees none of it
            assert [e["graph"] for e in fast[2]] == ["world", "flow"]
    for turn in ("t1", "u1", "v1", "nope"):  # completed (R2), at its cap (R21), run ended (R17), unknown
        assert probes.counted_read(db, turn, "GraphResolve", {"name": "Globex"}, kept={"name": "Globex"}) is None


def test_driver_connections_out_at_once_are_capped_and_the_pool_serves_the_rest(tmp_path):
    """At most KEEP kept connections are out at once; more use cases at the same moment get the
    pool's (whose size and timeout bound a server's connections), returned to the pool after."""
    engine = make_engine(_shared_url(tmp_path))
    kept = db_module.KEPT[engine]
    with ExitStack() as stack:
        held = [stack.enter_context(driver_connection(engine)) for _ in range(db_module.KEEP + 2)]
        assert kept.out == db_module.KEEP
        assert len({id(c) for c in held}) == db_module.KEEP + 2
    assert kept.out == 0 and len(kept.idle) == db_module.KEEP
    assert engine.pool.checkedout() == 0  # the two beyond the cap went back to the pool
