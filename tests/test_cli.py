"""The replay command: exit codes, output streams, --strict and --db."""

import json
import subprocess
import sys

import pytest
from backend import SERVER, fresh_url
from helpers import HQ, end, scenario, start, taught_turn, web


def replay(tmp_path, doc, *args):
    path = tmp_path / "s.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return subprocess.run(
        [sys.executable, "-m", "memory_core", "replay", str(path), "--json", *args], capture_output=True, text=True
    )


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
    state = subprocess.run([sys.executable, "-m", "memory_core", "state", "--db", url], capture_output=True, text=True)
    assert json.loads(state.stdout)["organizations"]["acme"]["map"]["facts"] == 1


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
    state = subprocess.run([sys.executable, "-m", "memory_core", "state", "--db", url], capture_output=True, text=True)
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
