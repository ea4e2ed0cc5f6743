"""Races lose nothing: every public use case of MemoryService retries its conflicts (classified by
the databases' error codes, bounded by time), and each runs under contention from several
processes on the backend under test (a SQLite file, or the PostgreSQL server)."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest
from backend import SERVER, database_url, empty
from concurrency_worker import CALLS, CONTENTION, FACTS, SETTINGS, WORKERS, contend, own_fact, setup_doc, web_record
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session

from memory_core import MemoryService, make_engine, parse, replay
from memory_core.store import retry as retry_module
from memory_core.store.models import UsedId
from memory_core.store.retry import is_use_case, retryable, use_case

needs_server = pytest.mark.skipif(not SERVER, reason="needs PostgreSQL (make test runs the suite on it too)")

#: Public members of MemoryService that are not use cases, and why: each of these opens no
#: transaction of its own that could lose a race (the use cases run inside them retry as a whole).
NOT_USE_CASES = {
    "sandbox": "a context manager: one transaction for several use cases, always rolled back",
    "all_or_nothing": "a context manager: one transaction for a whole replay, which its caller retries",
    "loading": "all_or_nothing for a load into an empty database, one load at a time; its caller retries",
    "at": "a constructor: the facade over a database's address, no transaction",
    "close": "closes the database's connections at a command's end, no transaction",
}


def public_members() -> set[str]:
    return {n for n in dir(MemoryService) if not n.startswith("_") and callable(getattr(MemoryService, n))}


def test_every_public_method_is_a_use_case_or_a_listed_helper():
    """A use case without @use_case fails at once under contention (start_run did, issue #13)."""
    missing = sorted(n for n in public_members() - set(NOT_USE_CASES) if not is_use_case(getattr(MemoryService, n)))
    assert missing == [], f"public methods without @use_case (retry.py): {missing}"
    assert set(NOT_USE_CASES) <= public_members(), "NOT_USE_CASES lists a method that is gone"


def test_every_use_case_is_run_under_contention():
    """tests/concurrency_worker.CONTENTION has an action for every use case, so a new one is raced too."""
    assert sorted(CONTENTION) == sorted(public_members() - set(NOT_USE_CASES))


# --- every use case under contention ------------------------------------------------------------


def _shared_url(tmp_path: Path) -> str:
    if SERVER:
        url = database_url("memory_races")
        empty(make_engine(url))
        return url
    return f"sqlite:///{tmp_path / 'races.db'}"


def _sequential_world() -> dict:
    """The World graph the event use cases of CONTENTION give when run one after another."""
    doc = setup_doc()
    events = doc["events"]
    for w in range(WORKERS):
        for k in range(CALLS):
            events += [
                {"do": "start_run", "run": f"r{w}_{k}", "org": "acme", "person": f"m{w}", "workflow": "open"},
                {"do": "open_turn", "run": f"r{w}_{k}", "turn": f"t{w}_{k}", "request": "q"},
                web_record(w, k),
                {"do": "record", "turn": f"t{w}_{k}", "origin": "tool", "source": "registry", "claims": FACTS},
                {"do": "end_turn", "turn": f"t{w}_{k}", "status": "completed"},
            ]
    for w in range(WORKERS):
        for k in range(CALLS):
            fact = {key: v for key, v in FACTS[k].items() if key != "graph"}
            events.append({"do": "dispute", "org": "acme", "by": f"m{w}", "fact": fact})
            own = {key: v for key, v in own_fact(w, k).items() if key != "graph"}
            events.append({"do": "retract", "org": "acme", "by": "dana", "fact": own})
    engine, _ = replay(parse(json.dumps(doc)), MemoryService(make_engine("sqlite://")))
    return _summary(engine.state())


def _summary(state: dict) -> dict:
    return {
        (f["relation"], f["object"]["value"]): (
            f["status"],
            round(f["weight"], 12),
            f["sources"],
            len(f["supports"]),
            len(f["disputes"]),
        )
        for f in state["organizations"]["acme"]["world"]["facts"]
    }


def _count(svc: MemoryService, sql: str) -> int:
    with svc.engine.connect() as conn:
        return int(conn.execute(text(sql)).scalar_one())


def test_every_use_case_under_contention_loses_nothing(tmp_path):
    """WORKERS processes run each use case CALLS times at the same moment, phase by phase: every
    call succeeds (no conflict escapes its retries), and the memory holds all of them, as a
    sequential run would: no run, record, step, probe, support, dispute or setting change lost."""
    url = _shared_url(tmp_path)
    svc = MemoryService(make_engine(url))
    replay(parse(json.dumps(setup_doc())), svc)
    before = svc.export_state()
    defaults = before["organizations"]["acme"]["settings"]
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(WORKERS), ctx.Queue()
    procs = [ctx.Process(target=contend, args=(url, w, barrier, out)) for w in range(WORKERS)]
    for p in procs:
        p.start()
    results: dict[str, list] = {}
    retries = 0
    try:
        for _ in range(WORKERS * (len(CONTENTION) + 1)):
            w, name, got = out.get(timeout=600)
            if name == "retries":
                retries += got
            else:
                results.setdefault(name, []).extend(got)
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
    failed = {name: [o for o in got if o[0] != "ok"] for name, got in results.items()}
    assert {name: bad for name, bad in failed.items() if bad} == {}
    assert sorted(results) == sorted(CONTENTION)
    print(f"conflicts retried: {retries}")

    state = svc.export_state()
    n = WORKERS * CALLS
    assert {f"o{w}_{k}" for w in range(WORKERS) for k in range(CALLS)} <= set(state["organizations"])
    assert _count(svc, "SELECT count(DISTINCT seq) FROM organization") == n + 1 + CALLS  # load_setup's, setup's
    assert [v for _, v in results["setup"]].count(True) == CALLS  # each set up once, found by the others
    runs = state["runs"]
    assert all(f"r{w}_{k}" in runs for w in range(WORKERS) for k in range(CALLS))
    assert _count(svc, "SELECT count(DISTINCT seq) FROM run") == _count(svc, "SELECT count(*) FROM run")
    s0 = runs["rs"]["turns"]["s0"]
    assert len(s0["steps"]) == n and s0["probes_used"] == n
    # the request, one record per `record` call and one per step (no memory answers it)
    assert _count(svc, "SELECT count(DISTINCT number) FROM record WHERE turn_id = 's0'") == 1 + 2 * n
    assert _count(svc, "SELECT count(*) FROM nestedwork WHERE turn_id = 's0' AND status = 'completed'") == n
    reads = sum(1 for name, act in CONTENTION.items() if act.__name__ == "act" or name == "token_caller")
    for w in range(WORKERS):
        assert _count(svc, f"SELECT count(*) FROM record WHERE turn_id = 'bt{w}'") == 1 + CALLS * reads
    assert all(runs[f"r{w}_{k}"]["turns"][f"t{w}_{k}"]["status"] == "completed" for w in range(4) for k in range(CALLS))
    assert _summary(state) == _sequential_world()
    assert state["organizations"]["acme"]["settings"] == {**defaults, **{name: False for name in SETTINGS}}
    changes = sum(CALLS - (1 if defaults[name] else 0) for name in SETTINGS)  # from k % 2 == 0, last False
    assert len(svc.audit("acme")) == changes
    assert [v for _, v in results["revoke_token"]].count(True) == 1  # one live token of the pair at a time
    assert _count(svc, "SELECT count(*) FROM apitoken WHERE NOT revoked") == 0
    assert _count(svc, "SELECT count(*) FROM apitoken") == n
    for name in ("link_identity", "unlink_identity"):  # each identity linked once, unlinked once
        assert [v for _, v in results[name]].count(True) == CALLS, name
    assert all(v is True for name in ("identity_links", "identity_callers") for _, v in results[name])
    assert _count(svc, "SELECT count(*) FROM identitylink") == 0
    assert all(runs[f"e{w}_{k}"]["ended"] for w in range(WORKERS) for k in range(CALLS))
    assert not any(f"d{w}_{k}" in runs for w in range(WORKERS) for k in range(CALLS))
    assert not any(f"x{w}_{k}" in state["people"] for w in range(WORKERS) for k in range(CALLS))


# --- what is a conflict: error codes of real databases ----------------------------------------


def _sqlite_errors(tmp_path: Path) -> dict[str, sqlite3.Error]:
    """Real errors from a real SQLite file, by name."""
    path = tmp_path / "errors.db"
    a = sqlite3.connect(path, isolation_level=None, timeout=0)
    b = sqlite3.connect(path, isolation_level=None, timeout=0)
    a.execute("PRAGMA journal_mode=WAL")
    a.execute("CREATE TABLE t (v INTEGER UNIQUE)")
    a.execute("INSERT INTO t VALUES (1), (2)")
    a.execute("CREATE TABLE u (v TEXT)")
    a.execute("CREATE TRIGGER lies BEFORE INSERT ON u BEGIN SELECT RAISE(ABORT, 'database is locked, busy'); END")
    errors: dict[str, sqlite3.Error] = {}

    def catch(name: str, conn: sqlite3.Connection, sql: str) -> None:
        with pytest.raises(sqlite3.Error) as caught:
            conn.execute(sql)
        errors[name] = caught.value

    a.execute("BEGIN IMMEDIATE")
    catch("busy", b, "BEGIN IMMEDIATE")
    a.execute("COMMIT")
    b.execute("BEGIN")
    b.execute("SELECT * FROM t").fetchall()
    a.execute("INSERT INTO t VALUES (3)")
    catch("busy_snapshot", b, "INSERT INTO t VALUES (4)")
    b.execute("ROLLBACK")
    reading = a.execute("SELECT * FROM t")
    reading.fetchone()
    catch("locked", a, "DROP TABLE t")
    reading.close()
    catch("unique", a, "INSERT INTO t VALUES (1)")
    catch("no_table", a, "SELECT * FROM nope")
    catch("trigger_says_locked", a, "INSERT INTO u VALUES ('x')")
    a.close()
    b.close()
    return errors


def test_sqlite_conflicts_are_read_from_result_codes(tmp_path):
    errors = _sqlite_errors(tmp_path)
    codes = {name: e.sqlite_errorname for name, e in errors.items()}
    assert codes == {
        "busy": "SQLITE_BUSY",
        "busy_snapshot": "SQLITE_BUSY_SNAPSHOT",
        "locked": "SQLITE_LOCKED",
        "unique": "SQLITE_CONSTRAINT_UNIQUE",
        "no_table": "SQLITE_ERROR",
        "trigger_says_locked": "SQLITE_CONSTRAINT_TRIGGER",
    }
    verdicts = {name: retryable(e) for name, e in errors.items()}
    assert verdicts == {
        "busy": True,
        "busy_snapshot": True,
        "locked": True,
        "unique": False,  # writers are serialized on SQLite: a UNIQUE violation is a bug, never a race
        "no_table": False,
        "trigger_says_locked": False,  # the text says "locked"; the code says otherwise
    }
    for name, e in errors.items():  # as SQLAlchemy wraps them
        assert retryable(DBAPIError(None, None, e)) is verdicts[name]


@needs_server
def test_postgresql_conflicts_are_read_from_sqlstate():
    url = database_url("memory_races")
    engine = make_engine(url, create=False)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as setup:
        setup.exec_driver_sql("DROP TABLE IF EXISTS race_k; CREATE TABLE race_k (id int PRIMARY KEY, v int)")
        setup.exec_driver_sql("INSERT INTO race_k VALUES (1, 0), (2, 0)")
    errors: dict[str, BaseException] = {}
    one, two = engine.raw_connection(), engine.raw_connection()
    c1, c2 = one.dbapi_connection, two.dbapi_connection
    try:
        # serialization failure: write skew between two SERIALIZABLE transactions
        for c in (c1, c2):
            c.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
            c.execute("SELECT sum(v) FROM race_k").fetchall()
        c1.execute("UPDATE race_k SET v = 1 WHERE id = 1")
        c2.execute("UPDATE race_k SET v = 1 WHERE id = 2")
        c1.commit()
        try:
            c2.commit()
        except Exception as exc:  # noqa: BLE001
            errors["serialization"] = exc
        c2.rollback()
        # deadlock: each holds the row the other wants
        c1.execute("UPDATE race_k SET v = 2 WHERE id = 1")
        c2.execute("UPDATE race_k SET v = 2 WHERE id = 2")
        caught: list[BaseException] = []

        def cross() -> None:
            try:
                c1.execute("UPDATE race_k SET v = 3 WHERE id = 2")
            except Exception as exc:  # noqa: BLE001
                caught.append(exc)

        crossing = threading.Thread(target=cross)
        crossing.start()
        try:
            c2.execute("UPDATE race_k SET v = 3 WHERE id = 1")
        except Exception as exc:  # noqa: BLE001
            caught.append(exc)
        c2.rollback()
        crossing.join()
        c1.rollback()
        errors["deadlock"] = caught[0]
        for name, sql in {
            "unique": "INSERT INTO race_k VALUES (1, 9)",
            "no_table": "SELECT * FROM nope",
            "raised_with_a_conflicts_words": "DO $$ BEGIN RAISE EXCEPTION 'could not serialize access, deadlock'; END $$",
        }.items():
            try:
                c1.execute(sql)
            except Exception as exc:  # noqa: BLE001
                errors[name] = exc
            c1.rollback()
    finally:
        one.close()
        two.close()
    assert {name: e.sqlstate for name, e in errors.items()} == {  # type: ignore[attr-defined]
        "serialization": "40001",
        "deadlock": "40P01",
        "unique": "23505",
        "no_table": "42P01",
        "raised_with_a_conflicts_words": "P0001",
    }
    verdicts = {name: retryable(e) for name, e in errors.items()}
    assert verdicts == {
        "serialization": True,
        "deadlock": True,
        "unique": True,  # two racing inserts of one new row: the loser's next attempt finds the winner's
        "no_table": False,
        "raised_with_a_conflicts_words": False,
    }
    for name, e in errors.items():
        assert retryable(DBAPIError(None, None, e)) is verdicts[name]  # type: ignore[arg-type]


# --- how long a use case keeps trying -----------------------------------------------------------


class Probe(MemoryService):
    """A service with use cases that fail the way a test needs, on real databases."""

    attempts = 0

    @use_case
    def insert_used_id_twice(self) -> None:
        self.attempts += 1
        with Session(self.engine) as s:
            s.add(UsedId(kind="run", id="dup"))
            s.commit()
        with Session(self.engine) as s:
            s.add(UsedId(kind="run", id="dup"))
            s.commit()

    @use_case
    def busy_until(self, blocked: sqlite3.Connection, failures: int | None) -> str:
        """Fails with a real SQLITE_BUSY `failures` times (None: always), then succeeds."""
        self.attempts += 1
        if failures is None or self.attempts <= failures:
            blocked.execute("BEGIN IMMEDIATE")
        return "done"


def _locked(tmp_path: Path) -> tuple[sqlite3.Connection, sqlite3.Connection]:
    """A connection holding the write lock of a SQLite file, and one that cannot take it."""
    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("BEGIN IMMEDIATE")
    return holder, sqlite3.connect(path, isolation_level=None, timeout=0)


def test_a_sqlite_unique_violation_surfaces_at_once_the_first_time(tmp_path):
    svc = Probe(make_engine(f"sqlite:///{tmp_path / 'unique.db'}"))
    with pytest.raises(DBAPIError) as caught:
        svc.insert_used_id_twice()
    assert caught.value.orig.sqlite_errorname == "SQLITE_CONSTRAINT_PRIMARYKEY"  # type: ignore[union-attr]
    assert (svc.attempts, svc.retries) == (1, 0)


def test_retries_are_bounded_by_time_not_by_count(tmp_path, monkeypatch):
    """Sixty conflicts in a row (more than the forty attempts retries used to be bounded by) are
    outlasted while the deadline has not passed."""
    monkeypatch.setattr(retry_module, "FIRST_PAUSE", 0.0001)
    monkeypatch.setattr(retry_module, "LONGEST_PAUSE", 0.0005)
    holder, blocked = _locked(tmp_path)
    svc = Probe(make_engine("sqlite://"))
    assert svc.busy_until(blocked, 60) == "done"
    assert (svc.attempts, svc.retries) == (61, 60)
    holder.close()


def test_retries_stop_at_the_deadline_and_raise_the_conflict(tmp_path, monkeypatch):
    monkeypatch.setattr(retry_module, "DEADLINE", 0.2)
    monkeypatch.setattr(retry_module, "FIRST_PAUSE", 0.001)
    monkeypatch.setattr(retry_module, "LONGEST_PAUSE", 0.01)
    holder, blocked = _locked(tmp_path)
    svc = Probe(make_engine("sqlite://"))
    with pytest.raises(sqlite3.OperationalError) as caught:
        svc.busy_until(blocked, None)
    assert caught.value.sqlite_errorname == "SQLITE_BUSY"
    assert svc.attempts > 1 and svc.retries == svc.attempts - 1
    holder.close()
