"""The replay command: exit codes, output streams, --strict and --db."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from backend import SERVER, fresh_url
from helpers import HQ, end, scenario, start, taught_turn, web
from helpers import memory_cli as cli
from sqlalchemy import text

from memory_core import make_engine


def replay(tmp_path, doc, *args):
    path = tmp_path / "s.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return cli("replay", str(path), "--json", *args)


GOOD = scenario([start(), *taught_turn("t1", web("https://a.example/", HQ)), end("t1"), end("t1")])


def test_replay_prints_state_and_refusals_on_stderr(tmp_path):
    p = replay(tmp_path, GOOD)
    assert p.returncode == 0
    state = json.loads(p.stdout)
    assert state["format"] == "memory-state/1" and len(state["refused"]) == 2
    assert "events[4] (end_turn) refused, turn_not_open" in p.stderr


def test_strict_stops_at_first_refusal(tmp_path):
    p = replay(tmp_path, GOOD, "--strict")
    assert p.returncode == 1
    assert len(json.loads(p.stdout)["refused"]) == 1


def test_format_error_exits_2_with_path(tmp_path):
    doc = scenario([{"do": "end_turn", "turn": "t1", "status": "done"}])
    p = replay(tmp_path, doc)
    assert p.returncode == 2 and p.stdout == ""
    assert "events[0].status: expected one of completed, failed, cancelled" in p.stderr


def test_bad_json_exits_2(tmp_path):
    p = replay(tmp_path, "{ nope")
    assert p.returncode == 2 and "line 1, column 3" in p.stderr


def test_db_keeps_memory_and_refuses_non_empty(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    first = replay(tmp_path, GOOD, "--db", url)
    assert first.returncode == 0
    size = (tmp_path / "m.db").stat().st_size
    second = replay(tmp_path, GOOD, "--db", url)
    assert second.returncode == 2 and "already holds memory" in second.stderr
    assert (tmp_path / "m.db").stat().st_size == size
    state = cli("state", "--db", url)
    assert json.loads(state.stdout)["organizations"]["acme"]["map"]["facts"] == 1


def test_generate_refuses_a_database_that_holds_memory_in_one_sentence(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    assert replay(tmp_path, GOOD, "--db", url).returncode == 0
    p = cli("generate", "--supports", "10", "--db", url)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip().endswith("already holds memory; generate into an empty database"), p.stderr
    assert p.stderr.count("already holds memory") == 1 and "replay" not in p.stderr


def test_bad_file_touches_no_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    p = replay(tmp_path, scenario([{"do": "nope"}]), "--db", url)
    assert p.returncode == 2 and not (tmp_path / "m.db").exists()


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
def test_db_on_postgresql(tmp_path):
    url = fresh_url("memory_cli")
    assert replay(tmp_path, GOOD, "--db", url).returncode == 0
    again = replay(tmp_path, GOOD, "--db", url)
    assert again.returncode == 2 and "already holds memory" in again.stderr
    state = cli("state", "--db", url)
    assert json.loads(state.stdout)["organizations"]["acme"]["map"]["facts"] == 1


def test_unusable_database_url_is_exit_2(tmp_path):
    for url in ("notaurl://x", "postgresql+psycopg://nobody@127.0.0.1:1/none"):
        p = replay(tmp_path, GOOD, "--db", url)
        assert p.returncode == 2 and "cannot use the database" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (json.dumps(GOOD).replace('"Globex"', '"Glo\\u0000bex"', 1), "holds a NUL character"),
        (json.dumps(GOOD).replace('"Globex"', '"Glo\\ud800bex"', 1), "holds a lone surrogate"),
        (
            json.dumps(
                scenario([start(), {"do": "set_settings", "org": "acme", "by": "dana", "settings": {}}])
            ).replace('"settings": {}}', '"settings": {"LearnFromUsers": NaN}}'),
            "NaN is not a number in JSON",
        ),
        (json.dumps(GOOD).replace('"MemoryProbes": 2', '"MemoryProbes": 9223372036854775808'), "MemoryProbes"),
        (json.dumps(GOOD).replace('"MemoryProbes": 2', '"MemoryProbes": 1' + "0" * 400), "too large"),
        (json.dumps(GOOD).replace('"events": [', '"events": [' + "[" * 1000 + "]" * 1000 + ", ", 1), "nested more"),
    ],
)
def test_input_no_database_holds_alike_exits_2_before_anything_runs(tmp_path, text, message):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    p = replay(tmp_path, text, "--db", url)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "m.db").exists()


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
def test_nul_text_on_postgresql_exits_2_and_leaves_the_database_empty(tmp_path):
    url = fresh_url("memory_cli_nul")
    bad = replay(tmp_path, json.dumps(GOOD).replace('"Globex"', '"Glo\\u0000bex"', 1), "--db", url)
    assert bad.returncode == 2 and "holds a NUL character" in bad.stderr and "DataError" not in bad.stderr
    assert replay(tmp_path, GOOD, "--db", url).returncode == 0  # nothing of the bad file was kept


# --- --db: only replay, load and db upgrade create a database (issue #13, 6) --------------------


@pytest.mark.parametrize(
    "command",
    [
        ["state"],
        ["token", "issue", "dana", "--org", "acme"],
        ["token", "revoke", "mem_x"],
        ["db", "current"],
        ["db", "scrub"],
    ],
)
def test_a_mistyped_db_path_creates_nothing_and_exits_2(tmp_path, command):
    url = f"sqlite:///{tmp_path / 'tpyo' / 'deeper' / 'm.db'}"
    p = cli(*command, "--db", url)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"cannot use the database {url}: no database file at" in p.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["state"], ["token", "issue", "dana", "--org", "acme"]])
def test_a_database_without_schema_is_refused_by_the_reading_commands_and_left_empty(tmp_path, command):
    """An existing but empty database (a 0-byte SQLite file, a new PostgreSQL database): exit 2,
    no table made; only `db upgrade`, `replay` and `load` create a schema."""
    if SERVER:
        from backend import database_url

        url = database_url("memory_no_schema")
        with make_engine(url, create=False).begin() as conn:
            conn.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    else:
        (tmp_path / "empty.db").write_bytes(b"")
        url = f"sqlite:///{tmp_path / 'empty.db'}"
    p = cli(*command, "--db", url)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "holds no memory schema; nothing was created" in p.stderr
    engine = make_engine(url, create=False)
    with engine.connect() as conn:
        tables = conn.execute(
            text("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
            if not SERVER
            else text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        ).scalar_one()
    engine.dispose()
    assert tables == 0


def test_db_upgrade_creates_and_then_the_others_use_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'new' / 'm.db'}"
    assert cli("db", "upgrade", "--db", url).returncode == 0
    assert cli("db", "current", "--db", url).returncode == 0
    assert json.loads(cli("state", "--db", url).stdout)["organizations"] == {}


@pytest.mark.parametrize(
    "url, says",
    [
        ("mysql://u@127.0.0.1/x", "the scheme 'mysql' is not supported"),
        ("postgresql://u:secret@127.0.0.1/x", "the scheme 'postgresql' is not supported (write postgresql+psycopg://"),
        ("nonsense", "not a database URL"),
    ],
)
def test_an_unsupported_database_is_named_with_the_schemes_supported(tmp_path, url, says):
    for command in (["state"], ["replay", str(tmp_path / "s.json")]):
        (tmp_path / "s.json").write_text(json.dumps(GOOD))
        p = cli(*command, "--db", url)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert says in p.stderr and "sqlite:///PATH" in p.stderr and "postgresql+psycopg://" in p.stderr
        assert "secret" not in p.stderr  # a password is never printed
        assert "cannot read" not in p.stderr


def test_a_db_path_that_cannot_be_made_blames_the_database_not_the_scenario(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    url = f"sqlite:///{blocker / 'sub' / 'm.db'}"
    p = replay(tmp_path, GOOD, "--db", url)
    assert p.returncode == 2 and p.stdout == ""
    assert f"cannot use the database {url}: cannot create {blocker / 'sub'}" in p.stderr
    assert "cannot read" not in p.stderr


# --- two replays into one empty database at once (issue #13, 2) ----------------------------------


def _empty_db(tmp_path, name):
    """A URL of a database that holds no memory (a SQLite file not made yet, or an emptied database)."""
    if SERVER:
        return fresh_url(name)
    return f"sqlite:///{tmp_path / f'{name}.db'}"


def test_two_replays_into_one_empty_database_at_once_one_wins(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps(GOOD))
    single = json.loads(replay(tmp_path, GOOD).stdout)
    for attempt in range(4):
        url = _empty_db(tmp_path, f"memory_twice{attempt}" if not SERVER else "memory_twice")
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "memory_core", "replay", str(tmp_path / "s.json"), "--json", "--db", url],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=120) for p in procs]
        codes = sorted(p.returncode for p in procs)
        assert codes == [0, 2], outs
        loser = outs[[p.returncode for p in procs].index(2)]
        assert "already holds memory" in loser[1] and loser[0] == ""
        state = json.loads(cli("state", "--db", url).stdout)
        assert state["organizations"] == single["organizations"] and state["runs"] == single["runs"]


# --- a replay into --db is all or nothing (issue #13, 1) ----------------------------------------

MARK = "quagga-marker"


def _long(turns, size=2000):
    """A scenario of many turns whose records carry a recognizable text."""
    events = [start()]
    for t in range(turns):
        events += taught_turn(f"t{t}", web(f"https://h{t}.example/", HQ, excerpt=f"{MARK} {t} " + "x" * size))
    return scenario(events)


def _holds_nothing(url):
    state = json.loads(cli("state", "--db", url).stdout)
    return state["organizations"] == {} and state["people"] == {} and state["runs"] == {}


def _fault_trigger(url):
    """A trigger that fails the first teaching, as a disk full would: a real error from the database."""
    engine = make_engine(url)
    with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql(
                "CREATE TRIGGER fault BEFORE INSERT ON support BEGIN SELECT RAISE(ABORT, 'simulated fault'); END"
            )
        else:
            conn.exec_driver_sql(
                "CREATE OR REPLACE FUNCTION fault() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'simulated fault'; END $$"
            )
            conn.exec_driver_sql("DROP TRIGGER IF EXISTS fault ON support")
            conn.exec_driver_sql("CREATE TRIGGER fault BEFORE INSERT ON support FOR EACH ROW EXECUTE FUNCTION fault()")
    return engine


@pytest.mark.parametrize("command", ["replay", "load"])
def test_an_error_while_events_run_leaves_the_database_as_it_was(tmp_path, command):
    url = fresh_url("memory_fault") if SERVER else f"sqlite:///{tmp_path / 'fault.db'}"
    engine = _fault_trigger(url)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_long(3)))
    try:
        p = cli(command, str(path), "--db", url)
        assert p.returncode == 1 and p.stdout == "", p.stderr
        assert "events[3] (end_turn) failed: " in p.stderr and "simulated fault" in p.stderr
        assert "Traceback" not in p.stderr and f"nothing of {path} was kept" in p.stderr
        assert _holds_nothing(url)
        if not SERVER:
            for f in tmp_path.glob("fault.db*"):
                assert MARK.encode() not in f.read_bytes(), f
    finally:
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP TRIGGER fault" if not SERVER else "DROP TRIGGER fault ON support")
        engine.dispose()
    again = cli(command, str(path), "--db", url)  # the fault gone, the same command runs in full
    assert again.returncode == 0, again.stderr
    assert len(json.loads(cli("state", "--db", url).stdout)["runs"]["r1"]["turns"]) == 3


@pytest.mark.skipif(bool(SERVER), reason="a SQLite file")
def test_a_disk_full_mid_replay_removes_the_file_the_command_created(tmp_path):
    """A real disk full: the command may write files of at most 1 MB (RLIMIT_FSIZE), and its
    scenario needs more. It exits 1 naming the event, and takes away the file and the directories
    it made."""
    import resource

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    path = tmp_path / "s.json"
    path.write_text(json.dumps(_long(300, 8000)))
    url = f"sqlite:///{tmp_path / 'new' / 'dir' / 'm.db'}"
    p = subprocess.run(
        [sys.executable, "-m", "memory_core", "replay", str(path), "--db", url],
        capture_output=True,
        text=True,
        preexec_fn=small_disk,
    )
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert re.search(r"events\[\d+\] \(\w+\) failed: (disk I/O error|database or disk is full)", p.stderr), p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["s.json"]


@pytest.mark.skipif(bool(SERVER), reason="a SQLite file")
def test_a_disk_full_at_the_final_commit_exits_1_and_keeps_the_database_as_it_was(tmp_path):
    """#26 item 13: every event ran in the transaction's pages, and the disk fills when the commit
    writes them (the log may grow 20 kB past the file the command found: RLIMIT_FSIZE). The command
    exits 1 as documented, naming the commit, not 2 ("cannot use the database"); the database is
    as it was: empty, and usable by the next replay."""
    import resource

    url = f"sqlite:///{tmp_path / 'm.db'}"
    assert cli("db", "upgrade", "--db", url).returncode == 0
    size = (tmp_path / "m.db").stat().st_size

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 20_000, size + 20_000))

    demo = str(Path(__file__).resolve().parent.parent / "sample_data" / "demo.json")
    p = subprocess.run(
        [sys.executable, "-m", "memory_core", "replay", demo, "--db", url],
        capture_output=True,
        text=True,
        preexec_fn=small_disk,
    )
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "the commit after the last event failed" in p.stderr and "nothing of" in p.stderr, p.stderr
    assert json.loads(cli("state", "--db", url).stdout)["runs"] == {}
    assert cli("replay", demo, "--db", url).returncode == 0


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
def test_a_lost_server_connection_mid_replay_keeps_nothing(tmp_path):
    """The replay's server process is terminated (pg_terminate_backend) once its events teach."""
    url = fresh_url("memory_lost")
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_long(400, 200)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "memory_core", "replay", str(path), "--db", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    admin = make_engine(url, create=False)
    killed = 0
    try:
        with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            while proc.poll() is None and not killed:
                killed = conn.execute(
                    text(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL "
                        "AND query ILIKE '%support%'"  # teaching: events are running
                    )
                ).scalar_one()
        out, err = proc.communicate(timeout=120)
    finally:
        admin.dispose()
    assert killed == 1
    assert proc.returncode == 1 and out == "" and "Traceback" not in err, err
    assert re.search(r"events\[\d+\] \(\w+\) failed: ", err), err
    assert _holds_nothing(url)
