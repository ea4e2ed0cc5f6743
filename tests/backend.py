"""The database the tests run on: SQLite by default, PostgreSQL when MEMORY_TEST_DATABASE_URL names a
server (`make test` runs the suite both ways). Each fresh memory is an empty schema, never a mock."""

from __future__ import annotations

import os
from functools import cache

from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from memory_core import MemoryService, make_engine
from memory_core.store.erasure import finisher
from memory_core.store.retry import run_retrying

SERVER = os.environ.get("MEMORY_TEST_DATABASE_URL", "").rstrip("/")
BACKEND = "postgresql" if SERVER else "sqlite"
#: pytest-xdist's name for this worker (gw0, gw1, ...), empty when the suite runs in one process:
#: each worker has its own databases on the server, so two workers never empty each other's.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


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

    run_retrying(clear)


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
