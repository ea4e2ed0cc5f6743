"""The database the tests run on: SQLite by default, PostgreSQL when MEMORY_TEST_DATABASE_URL names a
server (`make test` runs the suite both ways). Each fresh memory is an empty schema, never a mock."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache

import pytest
from sqlalchemy import create_engine, func, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, select

from memory_core import MemoryService, make_engine
from memory_core.store.erasure import finisher
from memory_core.store.models import Entity, Fact
from memory_core.store.retry import run_use_case

SERVER = os.environ.get("MEMORY_TEST_DATABASE_URL", "").rstrip("/")
BACKEND = "postgresql" if SERVER else "sqlite"
#: pytest-xdist's name for this worker (gw0, gw1, ...), empty when the suite runs in one process:
#: each worker has its own databases on the server, so two workers never empty each other's.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


#: A test of the notebook alone: its memory is a SQLite file of its own on every backend, so it runs
#: in the SQLite pass only (`backend_free`): the dashboard's notebook tests..
NOTEBOOK_ONLY = pytest.mark.backend_free
#: A test of what lies above the store (a transport, a token's check, a process's signals): the
#: use cases it calls are held on both backends by their own tests (test_mcp.py through the SDK's
#: client, test_turns.py, test_races.py), so it runs in the SQLite pass only (`backend_free`).
ABOVE_THE_STORE = pytest.mark.backend_free
#: A test of how a page lays out what it read (words, links, escaping, rule numbers, a time control's
#: steps): the reads it lays out are held to their shapes on both backends (test_shapes.py,
#: test_reads.py), and every page renders on both (test_dashboard.py's `test_page_renders_on_demo`,
#: and the pages' changes, permissions, time travel and ids), so it runs in the SQLite pass only.
PAGE_LAYOUT = pytest.mark.backend_free


def examples(n: int) -> int:
    """How many random histories a property test tries here: all `n` on SQLite, a third (at least 8)
    on PostgreSQL. Each history runs the same statements of the rule under test on either backend;
    the long search through many histories is the faster backend's work (#24: the suite in under
    10 minutes; the PostgreSQL pass's property tests were 150 s of it)."""
    return n if BACKEND == "sqlite" else max(8, n // 3)


def database_url(name: str) -> str:
    """The URL of a test database on the server, this worker's own, created on first use."""
    name = f"{name}_{WORKER}" if WORKER else name
    admin = create_engine(f"{SERVER}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if not conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first():
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return f"{SERVER}/{name}"


@cache
def _engine(name: str) -> Engine:
    return make_engine(database_url(name))  # migrated once per process


def empty(engine: Engine, *, files: bool = False) -> None:
    """Empty every table of a PostgreSQL test database and restart its ids, once the scrub that
    follows an earlier test's deletion is done (R31: it rewrites every table; a deadlock with a
    scrub of another process is retried).

    Rows are deleted (7 ms on this schema, against 47 ms for TRUNCATE's new files), which leaves
    them dead in the files until a vacuum: a test that reads the files for erased text asks for
    `files=True`, a TRUNCATE, so the files hold nothing of an earlier test."""
    finisher(engine).wait(300)
    tables = [f'"{t.name}"' for t in SQLModel.metadata.sorted_tables]

    def clear() -> None:
        with engine.begin() as conn:
            if files:
                conn.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"))
                return
            for table in reversed(tables):  # those that point at others first
                conn.execute(text(f"DELETE FROM {table}"))
            for (seq,) in conn.execute(text("SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'")):
                conn.execute(text(f'ALTER SEQUENCE "{seq}" RESTART'))

    run_use_case(None, clear)


def fresh_url(name: str = "memory_test", *, files: bool = False) -> str:
    """A URL to an empty memory: a private in-memory SQLite one, or an emptied PostgreSQL database
    (`files`: emptied down to its files, for tests that read them; see `empty`)."""
    if not SERVER:
        return "sqlite://"
    empty(_engine(name), files=files)
    return database_url(name)


def fresh_service(name: str = "memory_test", *, files: bool = False) -> MemoryService:
    """A service over an empty memory on the backend under test (`files`: see `empty`)."""
    if not SERVER:
        return MemoryService(make_engine("sqlite://"))
    engine = _engine(name)
    empty(engine, files=files)
    return MemoryService(engine)


#: Per process: the rows (COPY, binary) and sequence values a built memory held, by its key.
_KEPT: dict[str, tuple[list[tuple[str, bytes]], list[tuple[str, int]]]] = {}


def _keep(engine: Engine) -> tuple[list[tuple[str, bytes]], list[tuple[str, int]]]:
    conn = engine.raw_connection()
    try:
        cur = conn.cursor()
        rows = []
        for table in SQLModel.metadata.sorted_tables:
            with cur.copy(f'COPY "{table.name}" TO STDOUT (FORMAT binary)') as copy:  # type: ignore[attr-defined]
                rows.append((table.name, b"".join(bytes(block) for block in copy)))
        cur.execute("SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'public'")
        seqs = [(name, value) for name, value in cur.fetchall() if value is not None]
        conn.commit()
    finally:
        conn.close()
    return rows, seqs


def _put_back(engine: Engine, kept: tuple[list[tuple[str, bytes]], list[tuple[str, int]]]) -> None:
    rows, seqs = kept
    conn = engine.raw_connection()
    try:
        cur = conn.cursor()
        for table, data in rows:  # those others point at first
            with cur.copy(f'COPY "{table}" FROM STDIN (FORMAT binary)') as copy:  # type: ignore[attr-defined]
                copy.write(data)
        for name, value in seqs:
            cur.execute("SELECT setval(%s, %s)", (f'"{name}"', value))
        conn.commit()
    finally:
        conn.close()


def built_url(name: str, key: str, build: Callable[[MemoryService], object]) -> str:
    """A URL to a PostgreSQL memory holding what `build` writes into an empty one (on SQLite a
    private file is the caller's). The first call of a process builds it in database `name` and
    keeps its rows; each later call empties `name` and copies the rows back (COPY): the same rows
    and ids `build` wrote, in a fraction of the time a replay takes."""
    url = fresh_url(name)
    engine = _engine(name)
    if key in _KEPT:
        _put_back(engine, _KEPT[key])
    else:
        build(MemoryService(engine))
        finisher(engine).wait(300)  # a scrub that followed a deletion (R31) is done: the rows are final
        _KEPT[key] = _keep(engine)
    return url


def counted_map(s: Session, org_id: str) -> dict:
    """The map recounted from the graph itself (a grouped query): what store.graph.map_counts must equal (R18)."""
    rows = s.exec(
        select(Entity.kind, func.count())
        .where(Entity.graph == "world", Entity.owner == org_id, Entity.active_facts > 0)
        .group_by(Entity.kind)
    ).all()
    facts = s.exec(
        select(func.count())
        .select_from(Fact)
        .where(Fact.graph == "world", Fact.owner == org_id, Fact.status == "active")
    ).one()
    return {"kinds": {k: n for k, n in sorted(rows)}, "facts": int(facts)}
