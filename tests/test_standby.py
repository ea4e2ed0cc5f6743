"""Reads from a hot standby (docs/scaling.md), against a real primary and a real streaming standby.

`.ci/with-standby` starts the pair (`pg_basebackup -R`, both on loopback); `make test` runs these in
its PostgreSQL pass. Elsewhere (the SQLite pass, a run without the pair) they skip. Nothing here
asserts on time: where a test waits for the standby, it waits for a WAL position.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest
from backend import empty
from fastapi.testclient import TestClient
from helpers import HQ, PAGES, scenario, start, taught_turn, web
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from memory_core import MemoryService, make_engine, parse, replay
from memory_core.api import create_app
from memory_core.errors import PrimaryUnreachable

PRIMARY = os.environ.get("MEMORY_TEST_PRIMARY_URL", "").rstrip("/")
STANDBY = os.environ.get("MEMORY_TEST_STANDBY_URL", "").rstrip("/")
PRIMARY_CTL = os.environ.get("MEMORY_TEST_PRIMARY_CTL", "")
ROOT = Path(__file__).resolve().parent.parent
NAME = "memory_standby"
SECRET = "Globex quietly moved to Shelbyville in 2031"
T = TypeVar("T")

pytestmark = [
    pytest.mark.skipif(
        not (PRIMARY and STANDBY), reason="needs a primary and its hot standby (.ci/with-standby, as make test runs it)"
    ),
]


def _admin(server: str, db: str = "postgres") -> Engine:
    return create_engine(f"{server}/{db}", isolation_level="AUTOCOMMIT")


def _lsn(engine: Engine, sql: str) -> int | None:
    with engine.connect() as conn:
        value = conn.execute(text(sql)).scalar()
    if value is None:
        return None
    high, low = str(value).split("/")
    return (int(high, 16) << 32) | int(low, 16)


def replayed(deadline: float = 120.0) -> None:
    """Wait until the standby has replayed everything the primary holds now (a WAL position, not a time)."""
    primary, standby = _admin(PRIMARY), _admin(STANDBY)
    try:
        target = _lsn(primary, "SELECT pg_current_wal_insert_lsn()")
        assert target is not None
        end = time.monotonic() + deadline
        while True:
            try:
                at = _lsn(standby, "SELECT pg_last_wal_replay_lsn()")
            except Exception:  # noqa: BLE001  (the standby restarting its connection: ask again)
                at = None
            if at is not None and at >= target:
                return
            assert time.monotonic() < end, "the standby did not replay the primary's WAL"
            time.sleep(0.05)
    finally:
        primary.dispose()
        standby.dispose()


@contextmanager
def replay_paused() -> Iterator[None]:
    """The standby stops replaying: it keeps what it had, however much the primary writes."""
    standby = _admin(STANDBY)
    with standby.connect() as conn:
        conn.execute(text("SELECT pg_wal_replay_pause()"))
    try:
        yield
    finally:
        with standby.connect() as conn:
            conn.execute(text("SELECT pg_wal_replay_resume()"))
        standby.dispose()


def on_standby(sql: str, **params: object) -> object:
    """What the standby itself holds (SQL straight to it): the control of a test."""
    engine = _admin(STANDBY, NAME)
    try:
        with engine.connect() as conn:
            return conn.execute(text(sql), params).scalar()
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def database() -> str:
    """The test database on the primary (the standby gets it by replaying)."""
    admin = _admin(PRIMARY)
    with admin.connect() as conn:
        if not conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": NAME}).first():
            conn.execute(text(f'CREATE DATABASE "{NAME}"'))
    admin.dispose()
    make_engine(f"{PRIMARY}/{NAME}").dispose()  # migrated once
    return NAME


_OPEN: list[MemoryService] = []


def service() -> MemoryService:
    """A service over the test database that reads from its standby: a new database object, so a new mark."""
    svc = MemoryService.at(f"{PRIMARY}/{NAME}", read=f"{STANDBY}/{NAME}")
    _OPEN.append(svc)
    return svc


@pytest.fixture
def memory(database) -> Iterator[None]:
    """An empty memory on the primary, replayed on the standby; every service made is closed after."""
    engine = make_engine(f"{PRIMARY}/{NAME}", create=False)
    empty(engine, files=True)
    engine.dispose()
    replayed()
    yield
    while _OPEN:
        svc = _OPEN.pop()
        svc.engine.dispose()
        if svc.database.standby is not None:
            svc.database.standby.close()
            svc.database.standby.engine.dispose()


def loaded(svc: MemoryService) -> None:
    events = [start(), *taught_turn("t1", web("https://a.example/", HQ, excerpt=SECRET))]
    replay(parse(json.dumps(scenario(events))), svc)


def served(svc: MemoryService) -> dict[str, int]:
    return dict(svc.read_servers()["served"])


def from_standby(svc: MemoryService, read: Callable[[], T]) -> T:
    """A read made once the standby has replayed all the primary holds, and served by the standby.
    The primary writes a little WAL of its own now and then (a running-transactions record, an
    autovacuum), which may land between the wait and the read: then that read went to the primary,
    as it should, and it is made again."""
    for _ in range(10):
        replayed()
        before = served(svc)["standby"]
        answer = read()
        if served(svc)["standby"] == before + 1:
            return answer
    raise AssertionError("no read came from the standby")


def test_reads_outside_a_turn_come_from_the_standby_once_it_has_replayed(memory):
    svc = service()
    loaded(svc)
    orgs = from_standby(svc, svc.organizations)
    graph = from_standby(svc, lambda: svc.graph("world", "acme"))
    primary_only = MemoryService.at(f"{PRIMARY}/{NAME}")  # the same answers as the primary's
    _OPEN.append(primary_only)
    assert orgs == primary_only.organizations() and graph == primary_only.graph("world", "acme")
    assert [f["subject"]["name"] for f in graph["facts"]] == ["Globex"]


def test_a_person_sees_their_own_change_at_once_while_the_standby_lags(memory):
    """Read-your-writes by WAL position: with the standby's replay paused, the change is read from
    the primary (the standby itself still holds the old value), by this process and by another one
    (its mark is the primary's position now); replayed, the standby serves it again."""
    svc = service()
    loaded(svc)
    replayed()
    with replay_paused():
        svc.set_settings("acme", by="dana", settings={"LearnFromUsers": False})
        before = served(svc)
        assert svc.get_settings("acme", by="dana")["LearnFromUsers"] is False
        assert served(svc)["primary"] == before["primary"] + 1
        assert on_standby("SELECT learn_from_users FROM organization WHERE id = 'acme'") is True  # control
        another = service()  # another process: it wrote nothing, its first mark is the primary's now
        assert another.get_settings("acme", by="dana")["LearnFromUsers"] is False
        assert served(another)["standby"] == 0
    assert from_standby(svc, lambda: svc.get_settings("acme", by="dana"))["LearnFromUsers"] is False


def test_a_change_made_by_another_process_is_read_within_the_one_second_bound(memory):
    """The decision in d-standby: a process that wrote nothing holds its mark at most FRESH seconds, so
    a change another process made (an agent, then the dashboard) is read at most that late, even while
    the standby has not replayed it."""
    from memory_core.store.standby import FRESH

    svc = service()
    loaded(svc)
    replayed()
    assert from_standby(svc, lambda: svc.get_settings("acme", by="dana"))["LearnFromUsers"] is True
    with replay_paused():
        service().set_settings("acme", by="dana", settings={"LearnFromUsers": False})  # another process
        time.sleep(FRESH)  # this process's mark, taken by its read above, is now older than the bound
        assert svc.get_settings("acme", by="dana")["LearnFromUsers"] is False  # the bound: read from the primary
        assert on_standby("SELECT learn_from_users FROM organization WHERE id = 'acme'") is True  # control


def test_the_token_check_reads_the_standby_and_finds_a_token_issued_a_moment_ago_on_the_primary(memory):
    """The API's and the MCP server's read outside a turn: the token check. Served by the standby;
    with its replay paused, a token issued by another process is still found (asked of the
    primary when the standby does not know it), and a revocation by this process holds at once."""
    svc = service()
    loaded(svc)
    token = svc.issue_token("dana", org="acme")
    assert from_standby(svc, lambda: svc.token_caller(token)) == ("dana", "acme")
    another = service()
    assert another.token_caller(token) == ("dana", "acme")
    with replay_paused():
        fresh = svc.issue_token("lee", org="acme")
        assert another.token_caller(fresh) == ("lee", "acme")
        assert svc.revoke_token(token) is True
        assert svc.token_caller(token) is None
        assert on_standby("SELECT count(*) FROM apitoken WHERE revoked") == 0  # control: not replayed


def test_a_turn_reads_on_the_primary_and_counts_while_the_standby_has_not_even_seen_the_turn(memory):
    svc = service()
    loaded(svc)
    replayed()
    with replay_paused():
        svc.start_run("r2", org="acme", person="dana", workflow="free")
        svc.open_turn("t2", run="r2", request={"text": "Where is Globex?", "claims": []})
        before = served(svc)
        first = svc.read("t2", call="GraphResolve", args={"name": "Globex"})
        second = svc.read("t2", call="GraphExpand", args={"entity": {"name": "Globex", "kind": "organization"}})
        assert (first.probes_used, second.probes_used) == (1, 2) and first.result
        assert served(svc)["standby"] == before["standby"]  # a turn's reads are writes: never the standby's
        assert on_standby("SELECT count(*) FROM turn WHERE id = 't2'") == 0  # control: the standby lags behind


def test_a_standby_that_cannot_be_reached_leaves_reads_to_the_primary(memory):
    nowhere = "postgresql+psycopg://postgres@127.0.0.1:9"  # nothing listens on the discard port
    svc = MemoryService.at(f"{PRIMARY}/{NAME}", read=f"{nowhere}/{NAME}")
    _OPEN.append(svc)
    loaded(svc)
    assert [o["id"] for o in svc.organizations()] == ["acme", "globex"]
    servers = svc.read_servers()
    assert servers["standby_down"] is True and servers["served"]["standby"] == 0
    assert svc.version() is not None


def test_a_standby_lost_in_the_middle_of_a_read_leaves_that_read_to_the_primary(memory):
    """The standby's session ends after a read has begun on it (its first statement finds the
    connection gone, as when the standby restarts): the read runs again, on the primary, and
    answers; the standby is left alone for a moment (DOWN_FOR). Nothing is said to the caller."""
    svc = service()
    loaded(svc)
    replayed()
    engine = svc.database.standby.engines["standby"]
    killed: list[int] = []

    def end_this_session(conn, cursor, statement, parameters, context, executemany):  # noqa: ARG001
        if not killed and "pg_" not in statement:  # the read's first statement, not a bookkeeping one
            pid = cursor.connection.info.backend_pid
            killed.append(pid)
            admin = _admin(STANDBY, NAME)
            with admin.connect() as c:
                assert c.execute(text("SELECT pg_terminate_backend(:p, 5000)"), {"p": pid}).scalar()
            admin.dispose()

    event.listen(engine, "before_cursor_execute", end_this_session)
    try:
        before = served(svc)
        assert [o["id"] for o in svc.organizations()] == ["acme", "globex"]
    finally:
        event.remove(engine, "before_cursor_execute", end_this_session)
    after = served(svc)
    assert killed, "no read reached the standby"
    assert after["standby"] == before["standby"] + 1 and after["primary"] == before["primary"] + 1
    assert svc.read_servers()["standby_down"] is True


def _files(server: str) -> tuple[str, bytes]:
    """A server's planner samples (pg_stats) and the bytes of every file of the test database there
    (base/OID: memory's tables, their TOAST tables and indexes, the catalogs, old files not yet
    removed), after a checkpoint (on the standby, a restartpoint: its buffers written to its files)."""
    engine = _admin(server, NAME)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("CHECKPOINT")
            stats = str(conn.exec_driver_sql("SELECT * FROM pg_stats WHERE schemaname = 'public'").all())
            data = conn.exec_driver_sql("SHOW data_directory").scalar()
            oid = conn.exec_driver_sql("SELECT oid FROM pg_database WHERE datname = current_database()").scalar()
    finally:
        engine.dispose()
    folder = Path(str(data)) / "base" / str(oid)
    return stats, b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())


def test_r31_a_deleted_runs_text_leaves_the_standbys_files_once_it_replays_the_scrub(memory):
    """The scrub (VACUUM FULL of memory's tables and of pg_statistic, whose dead row versions kept
    old samples) is WAL-logged: the standby replays it and unlinks the old files, so once
    finish_erasure says so, neither server's files hold the text (their WAL is the operator's:
    docs/erasure.md)."""
    svc = service()
    loaded(svc)
    with svc.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("ANALYZE")  # what autovacuum does by itself
        conn.exec_driver_sql("CHECKPOINT")  # a checkpoint record, so the standby may make a restartpoint
    replayed()
    for server in (PRIMARY, STANDBY):
        stats, files = _files(server)
        assert SECRET in stats and SECRET.encode() in files, server  # control: both hold the text
    deleted = svc.delete_run("r1", by="dana")
    assert deleted.bytes_gone is False  # the primary's rewrite runs in the background
    status = svc.finish_erasure(timeout=300)
    assert status["bytes_gone"] is True and status["standby_bytes_gone"] is True
    for server in (PRIMARY, STANDBY):
        stats, files = _files(server)
        assert SECRET not in stats and SECRET.encode() not in files, server
    assert on_standby("SELECT count(*) FROM record") == 0


def test_r31_the_standby_is_waited_for_after_a_deletion_and_a_standby_merely_behind_says_nothing(memory):
    svc = service()
    loaded(svc)
    replayed()
    with replay_paused():
        svc.set_settings("acme", by="dana", settings={"LearnFromUsers": False})  # the standby falls behind
        assert svc.erasure_status()["standby_bytes_gone"] is True  # nothing erased: its lag is not erasure's
        svc.delete_run("r1", by="dana")
        status, end = svc.erasure_status(), time.monotonic() + 300
        while not status["bytes_gone"]:  # the primary's scrub, in the background
            assert time.monotonic() < end and status["last_error"] is None, status
            time.sleep(0.05)
            status = svc.erasure_status()
        assert status["standby_bytes_gone"] is False  # the standby has not replayed the deletion
        assert on_standby("SELECT count(*) FROM run WHERE id = 'r1'") == 1  # control
    assert svc.finish_erasure(timeout=300)["standby_bytes_gone"] is True


# --- the primary down: the last tests, sharing one stop of the primary ---------------------------


@pytest.fixture(scope="module")
def primary_down(database) -> Iterator[dict[str, str]]:
    """A memory with a token, replayed on the standby; then the primary is stopped (and started
    again after the module's last test, the standby streaming from it again)."""
    if not PRIMARY_CTL:
        pytest.skip("needs MEMORY_TEST_PRIMARY_CTL to stop the primary (.ci/with-standby)")
    engine = make_engine(f"{PRIMARY}/{NAME}", create=False)
    empty(engine, files=True)
    engine.dispose()
    svc = MemoryService.at(f"{PRIMARY}/{NAME}")
    loaded(svc)
    token = svc.issue_token("dana", org="acme")
    svc.engine.dispose()
    replayed()
    subprocess.run([PRIMARY_CTL, "stop"], check=True)
    try:
        yield {"token": token}
    finally:
        subprocess.run([PRIMARY_CTL, "start"], check=True)
        replayed()


def test_with_the_primary_down_reads_come_from_the_standby_and_a_write_says_so_in_a_sentence(primary_down):
    svc = service()  # opened with the primary down: its schema is not checked, reads still work
    assert [o["id"] for o in svc.organizations()] == ["acme", "globex"]
    assert svc.get_settings("acme", by="dana")["LearnFromUsers"] is True
    assert svc.token_caller(primary_down["token"]) == ("dana", "acme")
    assert svc.version() is not None and svc.read_servers()["primary_down"] is True
    with pytest.raises(PrimaryUnreachable) as caught:
        svc.set_settings("acme", by="dana", settings={"LearnFromUsers": False})
    message = str(caught.value)
    assert "the primary database" in message and "cannot be reached" in message, message
    assert "nothing was written" in message and "reads still come from the standby" in message, message
    with pytest.raises(PrimaryUnreachable):
        svc.start_run("r9", org="acme", person="dana", workflow="free")
    assert svc.erasure_status()["standby_bytes_gone"] is None  # not known: the primary cannot be asked


def test_a_primary_down_is_said_until_it_is_reached_again_however_long_a_page_takes(primary_down, monkeypatch):
    """What the pages say (read_servers) is the last try's outcome, not whether it failed in the last
    DOWN_FOR seconds: a page that took longer than that to draw since its last read said nothing
    (seen under load in make test). DOWN_FOR set to 0 stands for that time gone by."""
    from memory_core.store import standby as standby_module

    svc = service()
    assert [o["id"] for o in svc.organizations()] == ["acme", "globex"]
    monkeypatch.setattr(standby_module, "DOWN_FOR", 0.0)
    svc.database.standby.lost("primary")  # the primary's last try failed, and its DOWN_FOR is over at once
    assert not svc.database.standby.down("primary")
    assert svc.read_servers()["primary_down"] is True
    assert [o["id"] for o in svc.organizations()] == ["acme", "globex"]  # tries the primary again: still down
    assert svc.read_servers()["primary_down"] is True and svc.read_servers()["standby_down"] is False


def test_with_the_primary_down_the_api_answers_get_and_refuses_patch_with_503(primary_down):
    client = TestClient(create_app(service()))
    auth = {"Authorization": f"Bearer {primary_down['token']}"}
    got = client.get("/organization/preferences", headers=auth)
    assert got.status_code == 200 and got.json()["workflow"]["LearnFromUsers"] is True
    patched = client.patch("/organization/preferences", headers=auth, json={"workflow": {"LearnFromUsers": False}})
    assert patched.status_code == 503 and patched.headers["retry-after"] == "5"
    assert "cannot be reached" in patched.json()["detail"] and "nothing was written" in patched.json()["detail"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORY_DATABASE_URL": f"{PRIMARY}/{NAME}", "MEMORY_READ_DATABASE_URL": f"{STANDBY}/{NAME}"}
    return subprocess.run(
        [sys.executable, "-m", "memory_core", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )


def test_with_the_primary_down_the_command_line_reads_and_a_change_exits_2_with_a_sentence(primary_down):
    state = _cli("state")
    assert state.returncode == 0, state.stderr
    assert "acme" in json.loads(state.stdout)["organizations"]
    issued = _cli("token", "issue", "dana", "--org", "acme")
    assert issued.returncode == 2 and issued.stdout == "", issued
    assert "Traceback" not in issued.stderr and "cannot be reached" in issued.stderr, issued.stderr
    assert issued.stderr.count("\n") == 1, issued.stderr  # one sentence


def test_with_the_primary_down_every_page_renders_from_the_standby(primary_down, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMORY_DATABASE_URL", f"{PRIMARY}/{NAME}")
    monkeypatch.setenv("MEMORY_READ_DATABASE_URL", f"{STANDBY}/{NAME}")
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path / "notebooks"))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    for name in PAGES:
        at.switch_page(PAGES[name]).run()
        assert not at.exception, (name, [e.value for e in at.exception])
        assert not at.error, (name, [e.value for e in at.error])
        said = " ".join(w.value for w in at.sidebar.warning)
        assert "The primary database cannot be reached" in said, (name, said)
    at.switch_page("pages/overview_page.py").run()
    assert "Acme" in " ".join(str(m.value) for m in at.markdown) + " ".join(str(s.value) for s in at.sidebar.selectbox)
