"""Engines and schema. `MEMORY_DATABASE_URL` picks the database; by default a SQLite file."""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.pool import StaticPool
from sqlmodel import SQLModel, create_engine

from . import models  # noqa: F401  (registers every table)

DEFAULT_URL = "sqlite:///.memory/memory.db"
MEMORY_URL = "sqlite://"
WAL_PAGES = 10_000


def database_url() -> str:
    """The configured database: `MEMORY_DATABASE_URL`, else `.memory/memory.db`."""
    return os.environ.get("MEMORY_DATABASE_URL") or DEFAULT_URL


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy, not the sqlite3 module, begin transactions, so SAVEPOINTs work (sandboxes).
    dbapi_connection.isolation_level = None
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA secure_delete=ON")  # R31: deleted text is overwritten, not left in free pages
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA journal_mode")
    if cur.fetchone()[0] != "memory":
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        # Fold the log into the file every 10,000 pages (40 MB) rather than SQLite's 1,000: a turn
        # rewrites the same hot pages (its turn row, index roots) in each of its use cases, and a
        # checkpoint copies each page once, so a longer log is copied less often per turn (issue #8,
        # B1: end_turn 2.9 -> 2.2 ms at 10k supports). Erasure still empties it at once (R31).
        cur.execute(f"PRAGMA wal_autocheckpoint={WAL_PAGES}")
    cur.close()


def _begin(conn: Any) -> None:
    # Writers say so up front (BEGIN IMMEDIATE), so two writers queue on the lock instead of
    # failing when a reader upgrades; readers begin deferred and never block in WAL mode.
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("writer") else "BEGIN")


def writer(engine: Engine) -> Engine:
    """The same engine, for use cases that write: SQLite takes the write lock at BEGIN, and
    PostgreSQL runs them SERIALIZABLE, so concurrent teachers never lose an update."""
    if engine.dialect.name == "sqlite":
        return engine.execution_options(writer=True)
    return engine.execution_options(isolation_level="SERIALIZABLE")


def make_engine(url: str | None = None, *, create: bool = True) -> Engine:
    """An engine for `url` (default: `database_url()`); with `create`, its schema is brought up to
    date by the migrations (a private in-memory database gets the models' tables directly)."""
    url = url or database_url()
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        else:
            engine = create_engine("sqlite://", connect_args={"check_same_thread": False}, poolclass=StaticPool)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _begin)
        if path and path != ":memory:":
            _KEPT[engine] = []
    else:
        engine = create_engine(url, pool_pre_ping=True)
    if create:
        if url.startswith("sqlite") and ("///" not in url or url.endswith(":memory:")):
            SQLModel.metadata.create_all(engine)
        else:
            from .migrate import upgrade

            upgrade(engine)
    return engine


#: SQLite file engines: DB-API connections the driver's use cases keep between calls (see below).
_KEPT: weakref.WeakKeyDictionary[Engine, list[Any]] = weakref.WeakKeyDictionary()
KEEP = 8


@contextmanager
def driver_connection(engine: Engine) -> Iterator[Any]:
    """A DB-API connection for one driver use case (a read, a record, teaching), outside any
    transaction. On a SQLite file the connection is kept for the next use case: checking one out
    of SQLAlchemy's pool and back costs about 10 µs, a third of a whole graph read (issue #8,
    B2, profiled). Kept connections have the engine's settings (made by the pool, then detached
    from it); one left inside a transaction by a failure is closed, not kept. Other engines (an
    in-memory SQLite memory, PostgreSQL with its pre-ping) use the pool."""
    kept = _KEPT.get(engine)
    if kept is None:
        proxy = engine.raw_connection()
        try:
            yield proxy.dbapi_connection
        finally:
            proxy.close()
        return
    try:
        dbapi = kept.pop()
    except IndexError:
        proxy = engine.raw_connection()
        dbapi = proxy.dbapi_connection
        proxy.detach()
    try:
        yield dbapi
    finally:
        if dbapi.in_transaction or len(kept) >= KEEP:
            dbapi.close()
        else:
            kept.append(dbapi)


def checkpoint(engine: Engine) -> None:
    """Fold SQLite's write-ahead log into the database file and empty it (R31)."""
    if engine.dialect.name != "sqlite":
        return
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


#: Tables whose rows hold people's text (R31); `scrub` rewrites them on PostgreSQL.
TEXT_TABLES = ("record", "entity", "alias", "fact", "person", "membership", "run", "turn", "nestedwork", "support")


def scrub(engine: Engine) -> None:
    """Make erased text leave the database files now (R31): SQLite checkpoints its write-ahead log
    (secure_delete has already overwritten the rows); PostgreSQL rewrites the tables that hold text
    (VACUUM FULL), so deleted rows' bytes are in no table file, then checkpoints."""
    if engine.dialect.name == "sqlite":
        checkpoint(engine)
        return
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in TEXT_TABLES:
            conn.exec_driver_sql(f'VACUUM FULL "{table}"')
        conn.exec_driver_sql("CHECKPOINT")
