"""The memory's version (MemoryService.version, issue #16): a token that stays while memory does and
changes with every change that commits, whoever makes it, so the dashboard may keep answers under it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from backend import SERVER, fresh_service
from helpers import HQ, open_turn, scenario, start, taught_turn, web

from memory_core import MemoryService, make_engine, parse, replay

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["sqlite-file", "backend"])
def svc(request, tmp_path):
    """A memory holding one taught turn and one open turn: a SQLite file, and the backend under test
    (PostgreSQL when a server is given; in-memory SQLite, which has no version, is tested apart)."""
    if request.param == "sqlite-file":
        service = MemoryService(make_engine(f"sqlite:///{tmp_path / 'memory.db'}"))
    elif SERVER:
        service = fresh_service()
    else:
        pytest.skip("the backend under test is in-memory SQLite (no version: see below)")
    events = [start(), *taught_turn("t1", web("https://a.example/", HQ)), open_turn("t2")]
    replay(parse(json.dumps(scenario(events))), service)
    yield service
    service.engine.dispose()


@pytest.mark.alone  # on PostgreSQL the version is the server's: after the others (.ci/test-both), no worker commits
def test_version_stays_while_memory_does(svc):
    """Reads leave the version as it was. On PostgreSQL the version is the server's snapshot, which
    any database's commit moves (another test worker's, an autovacuum): a change there only costs a
    page its kept answers, so the reads are tried again until no one else committed meanwhile; reads
    that moved it themselves would move it every time."""
    for _ in range(20):
        first = svc.version()
        assert first is not None
        svc.organizations()
        svc.runs("acme")
        svc.graph("world", "acme", limit=10)
        svc.facts_table("acme")
        svc.export_state()
        if svc.version() == first:
            return
    raise AssertionError("the version moved on every one of 20 tries of reads alone")


def test_every_change_that_commits_changes_the_version(svc):
    seen = [svc.version()]

    def changed() -> None:
        now = svc.version()
        assert now not in seen, "a change kept the version"
        seen.append(now)

    svc.read("t2", call="GraphResolve", args={"name": "Globex"})  # a probe counted (R21)
    changed()
    svc.set_settings("acme", by="dana", settings={"NoMemoryShortcuts": True})
    changed()
    svc.record("t2", record=web("https://b.example/", HQ))
    changed()
    svc.end_turn("t2", status="failed")  # teaches nothing (R2): only the turn's status changes
    changed()
    svc.dispute(org="acme", by="lee", fact={k: HQ[k] for k in ("subject", "relation", "object")})
    changed()
    svc.delete_run("r1", by="dana")
    changed()


def test_a_change_by_another_engine_or_process_changes_the_version(svc):
    before = svc.version()
    other = make_engine(str(svc.engine.url.render_as_string(hide_password=False)))
    MemoryService(other).set_settings("acme", by="dana", settings={"LearnFromUsers": False})
    other.dispose()
    after = svc.version()
    assert after != before
    code = (
        "import sys; from memory_core import MemoryService, make_engine; "
        "MemoryService(make_engine(sys.argv[1])).set_settings('acme', by='dana', settings={'LearnFromUsers': True})"
    )
    url = svc.engine.url.render_as_string(hide_password=False)
    subprocess.run([sys.executable, "-c", code, url], cwd=ROOT, check=True, capture_output=True)
    assert svc.version() not in (before, after)


def test_no_version_where_nothing_may_be_kept(tmp_path):
    memory = MemoryService(make_engine("sqlite://"))  # one shared connection, which writes too
    assert memory.version() is None
    on_file = MemoryService(make_engine(f"sqlite:///{tmp_path / 'memory.db'}"))
    with on_file.sandbox() as sandbox:  # one transaction, rolled back: what it shows never commits
        assert sandbox.version() is None
    on_file.engine.dispose()
