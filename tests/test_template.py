"""New SQLite memories made by copy (store/template.py): the same schema, revision and rules as a
migrated one, a secret of their own, and never a file written over another process's."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys

import pytest
from sqlalchemy import text

from memory_core import MemoryService, make_engine
from memory_core.store import template
from memory_core.store.database import _migrated, current, head

pytestmark = pytest.mark.backend_free  # SQLite by design: PostgreSQL databases are made by the server


def _schema(conn) -> list[tuple[str, str]]:
    rows = conn.execute(text("SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"))
    return [(name, sql) for name, sql in rows]


def test_files_made_by_copy_are_migrated_files_each_with_its_own_key(tmp_path):
    _migrated(tmp_path / "migrated.db")  # the usual way, every migration run
    made = [make_engine(f"sqlite:///{tmp_path / f'm{i}.db'}") for i in range(3)]  # the 2nd on: copies
    assert template._FILE, "no template was made"
    migrated = make_engine(f"sqlite:///{tmp_path / 'migrated.db'}")
    with migrated.connect() as conn:
        expected = _schema(conn)
    keys = set()
    for engine in made:
        assert current(engine) == head()
        with engine.connect() as conn:
            assert _schema(conn) == expected
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            keys |= {conn.execute(text("SELECT key FROM idkey")).scalar_one()}
    assert len(keys) == 3  # each file its own secret (migration 0010 draws one per database)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".new")]  # no copy left behind


def _set_up(svc: MemoryService) -> MemoryService:
    svc.load_setup(
        organizations=[{"id": "acme", "name": "Acme", "owner": "dana"}],
        people=[{"id": "dana", "name": "Dana", "memberships": {"acme": "owner"}}],
        workflows=[],
    )
    return svc


def test_a_copy_refuses_a_used_id_as_a_migrated_file_does(tmp_path):
    for i in range(3):  # the first made the usual way (if this process made none before), then copies
        svc = _set_up(MemoryService.at(f"sqlite:///{tmp_path / f'm{i}.db'}"))
        svc.start_run("r1", org="acme", person="dana")
        with pytest.raises(Exception, match="duplicate_id"):
            svc.start_run("r1", org="acme", person="dana")


def test_a_name_taken_meanwhile_is_never_written_over(tmp_path):
    """Another process made the file between this one's look and its copy: the copy is not linked
    there, and the file keeps what the other wrote."""
    template.new_file(tmp_path / "first.db", _migrated)  # a template, whatever this process made before
    template.new_file(tmp_path / "second.db", _migrated)
    taken = tmp_path / "taken.db"
    conn = sqlite3.connect(taken)
    conn.execute("CREATE TABLE theirs (x)")
    conn.commit()
    conn.close()
    assert template.new_file(taken, _migrated) is False
    assert sqlite3.connect(taken).execute("SELECT name FROM sqlite_master").fetchall() == [("theirs",)]
    assert not [p.name for p in tmp_path.iterdir() if ".new" in p.name]


def test_in_memory_copies_hold_the_models_tables_and_are_private():
    engines = [make_engine("sqlite://") for _ in range(3)]
    _set_up(MemoryService(engines[0]))
    expected = None
    for engine in engines:
        with engine.connect() as conn:
            schema = _schema(conn)
            assert expected is None or schema == expected
            expected = schema
    with engines[1].connect() as conn:  # one memory's rows are its own
        assert conn.execute(text("SELECT count(*) FROM organization")).scalar() == 0
    assert {name for name, _ in expected or []} >= {"organization", "fact", "support", "idkey"}


def test_threads_making_databases_at_once_each_get_a_whole_one(tmp_path):
    """Alembic's proxies are the process's: a fresh process whose threads make one new file at once
    (one migrating it in place, another the template) or several files, migrated one at a time."""
    script = f"""
import sys, threading
from memory_core import MemoryService
from memory_core.store.database import current, head
made, failed = [], []
def make(url):
    try:
        svc = MemoryService.at(url); svc.organizations(); made.append(current(svc.engine) == head())
    except Exception as exc:
        failed.append(repr(exc))
urls = [f"sqlite:///{tmp_path}/same.db"] * 8 + [f"sqlite:///{tmp_path}/t{{i}}.db" for i in range(8)]
threads = [threading.Thread(target=make, args=(u,)) for u in urls]
[t.start() for t in threads]; [t.join() for t in threads]
print(len(made), all(made), failed[:2])
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.stdout.split("\n")[0] == "16 True []", out.stdout + out.stderr


def test_what_a_killed_process_left_is_cleared_by_the_next_copy(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process that no longer is, as one killed mid-copy
    left = [tmp_path / f".m.db.{gone.pid}.ab12.new", tmp_path / f".m.db.{gone.pid}.ab12.new-wal"]
    ours = tmp_path / f".m.db.{os.getpid()}.cd34.new"  # a live process's copy in the making: left alone
    for path in (*left, ours):
        path.write_bytes(b"x")
    template.new_file(tmp_path / "first.db", _migrated)  # whatever this process made before: then a copy
    template.new_file(tmp_path / "m.db", _migrated)
    assert [p.exists() for p in left] == [False, False] and ours.exists()


def test_a_forked_child_makes_its_own_templates(tmp_path):
    """A child forked after its parent made templates uses none of them (a SQLite connection must
    not cross a fork; the parent's folder goes with the parent): its memories are whole."""
    for i in range(2):
        make_engine(f"sqlite:///{tmp_path / f'parent{i}.db'}")
        make_engine("sqlite://")
    pid = os.fork()
    if pid == 0:  # the child: three files and three memories of its own, then out without cleanup
        ok = not template._FILE and not template._MEMORY
        for i in range(3):
            engine = make_engine(f"sqlite:///{tmp_path / f'child{i}.db'}")
            ok = ok and current(engine) == head()
            with make_engine("sqlite://").connect() as conn:
                ok = ok and conn.execute(text("SELECT count(*) FROM organization")).scalar() == 0
        ok = ok and bool(template._FILE) and str(os.getpid()) in str(template._FILE[0])
        shutil.rmtree(template._FILE[0].parent, ignore_errors=True)  # os._exit runs no atexit
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
