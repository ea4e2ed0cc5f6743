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


def database_url(name: str) -> str:
    """The URL of a test database on the server, created on first use."""
    admin = create_engine(f"{SERVER}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if not conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first():
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return f"{SERVER}/{name}"


@cache
def _engine(name: str) -> Engine:
    return make_engine(database_url(name))  # migrated once per process


def empty(engine: Engine) -> None:
    """Empty every table of a PostgreSQL test database, once the scrub that follows an earlier
    test's deletion is done (R31: it rewrites every table, and TRUNCATE locks them in another order;
    a deadlock with a scrub of another process is retried)."""
    finisher(engine).wait(300)
    tables = ", ".join(f'"{t.name}"' for t in SQLModel.metadata.sorted_tables)

    def truncate() -> None:
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))

    run_retrying(truncate)


def fresh_url(name: str = "memory_test") -> str:
    """A URL to an empty memory: a private in-memory SQLite one, or an emptied PostgreSQL database."""
    if not SERVER:
        return "sqlite://"
    empty(_engine(name))
    return database_url(name)


def fresh_service(name: str = "memory_test") -> MemoryService:
    """A service over an empty memory on the backend under test."""
    if not SERVER:
        return MemoryService(make_engine("sqlite://"))
    engine = _engine(name)
    empty(engine)
    return MemoryService(engine)
