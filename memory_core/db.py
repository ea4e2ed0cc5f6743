"""Engines and schema. `MEMORY_DATABASE_URL` picks the database; by default a SQLite file."""

from __future__ import annotations

import os
import select
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import StaticPool
from sqlmodel import SQLModel, create_engine

from . import models  # noqa: F401  (registers every table)
from .driver import Driver

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


#: The database URLs this product runs on: SQLite (a file, or private in memory) and PostgreSQL
#: through psycopg 3.
SCHEMES = ("sqlite", "postgresql+psycopg")
SUPPORTED = "sqlite:///PATH (a file), sqlite:// (in memory), postgresql+psycopg://USER@HOST:PORT/NAME"


class DatabaseUnusable(Exception):
    """A database URL names no database this product can use; `shown` is the URL without its password."""

    def __init__(self, shown: str, problem: str) -> None:
        super().__init__(f"{shown}: {problem}")
        self.shown, self.problem = shown, problem


def shown(url: str) -> str:
    """A URL fit for a message: its password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL, None for an in-memory database (or another backend)."""
    parsed = _parse(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def _parse(url: str) -> URL:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise DatabaseUnusable(url, f"not a database URL; supported: {SUPPORTED}") from None
    name = parsed.drivername
    if name not in ("sqlite", "sqlite+pysqlite", "postgresql+psycopg"):
        hint = " (write postgresql+psycopg://, the driver installed)" if name.startswith("postgresql") else ""
        raise DatabaseUnusable(shown(url), f"the scheme {name!r} is not supported{hint}; supported: {SUPPORTED}")
    return parsed


def make_engine(url: str | None = None, *, create: bool = True, existing: bool = False) -> Engine:
    """An engine for `url` (default: `database_url()`); with `create`, its schema is brought up to
    date by the migrations (a private in-memory database gets the models' tables directly). With
    `existing`, a SQLite file must be there already: nothing is created, no directory made (the
    commands that only read or manage a database refuse a mistyped path). An unsupported scheme,
    a missing file or a path that cannot be made raise DatabaseUnusable."""
    url = url or database_url()
    path = sqlite_file(url)  # checks the scheme
    if url.startswith("sqlite"):
        if path is not None:
            if existing and not path.is_file():
                raise DatabaseUnusable(
                    shown(url), f"no database file at {path}; nothing was created (`db upgrade --db URL` creates one)"
                )
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise DatabaseUnusable(shown(url), f"cannot create {path.parent}: {exc.strerror}") from None
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        else:
            engine = create_engine("sqlite://", connect_args={"check_same_thread": False}, poolclass=StaticPool)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _begin)
        if path is not None:
            _keep_connections(engine)
    else:
        engine = create_engine(url, pool_pre_ping=True)
        if engine.dialect.driver == "psycopg":  # the kept connections' checks are psycopg 3's
            _keep_connections(engine)
    if create:
        if url.startswith("sqlite") and path is None:
            SQLModel.metadata.create_all(engine)
        else:
            from .migrate import upgrade

            upgrade(engine)
    return engine


#: Engines whose driver use cases keep their DB-API connections between calls (see below).
_KEPT: weakref.WeakKeyDictionary[Engine, Kept] = weakref.WeakKeyDictionary()
KEEP = 8
_LEFT_IN_PARENT: list[Any] = []  # a forked child never closes its parent's connections


class Kept:
    """An engine's kept connections, and how many of them are out (at most KEEP: beyond that a
    use case checks one out of the pool, whose size and timeout then bound the total)."""

    def __init__(self) -> None:
        self.idle: list[Any] = []
        self.out = 0
        self.lock = threading.Lock()

    def take(self) -> Any | None:
        """An idle kept connection the server has not closed; `_NEW` when there is none and one
        may be made (counted out already); None at the cap (nothing counted: the pool serves)."""
        with self.lock:
            while self.idle:
                dbapi = self.idle.pop()
                if _alive(dbapi):
                    self.out += 1
                    return dbapi
                _close_quietly(dbapi)
            if self.out >= KEEP:
                return None
            self.out += 1
            return _NEW

    def give_back(self, dbapi: Any) -> None:
        """A connection taken is back: kept if clean, else closed (None: making one failed)."""
        with self.lock:
            self.out -= 1
            if dbapi is None:
                return
            if _idle(dbapi) and len(self.idle) < KEEP:
                self.idle.append(dbapi)
                return
        _close_quietly(dbapi)

    def close(self) -> None:
        with self.lock:
            idle = self.idle[:]
            self.idle.clear()
        for dbapi in idle:
            _close_quietly(dbapi)


_NEW = object()


def _keep_connections(engine: Engine) -> None:
    _KEPT[engine] = Kept()
    event.listen(engine, "engine_disposed", lambda e: _KEPT[e].close() if e in _KEPT else None)


def _forget_kept_in_child() -> None:
    for kept in _KEPT.values():
        _LEFT_IN_PARENT.extend(kept.idle)
        kept.idle, kept.out, kept.lock = [], 0, threading.Lock()


os.register_at_fork(after_in_child=_forget_kept_in_child)


def _close_quietly(dbapi: Any) -> None:
    try:
        dbapi.close()
    except Exception:  # noqa: BLE001  (a broken connection may fail to close; it is dropped either way)
        pass


def _idle(dbapi: Any) -> bool:
    """Outside any transaction, in the state the pool made it (not autocommit), still open."""
    if isinstance(dbapi, sqlite3.Connection):
        return not dbapi.in_transaction
    from psycopg.pq import TransactionStatus

    return (
        not dbapi.closed
        and not dbapi.broken
        and not dbapi.autocommit
        and dbapi.info.transaction_status == TransactionStatus.IDLE
    )


def _alive(dbapi: Any) -> bool:
    """A kept server connection is alive if the server has said nothing since: one it closed has
    its end of file to read. A socket poll, not a round trip (the pool's pre-ping is one)."""
    if isinstance(dbapi, sqlite3.Connection):
        return True
    if not _idle(dbapi):
        return False
    try:
        poller = select.poll()
        poller.register(dbapi.fileno(), select.POLLIN)
        return not poller.poll(0)
    except (OSError, ValueError):
        return False


@contextmanager
def driver_connection(engine: Engine) -> Iterator[Any]:
    """A DB-API connection for one driver use case (a read, a record, teaching), outside any
    transaction. On a SQLite file or a PostgreSQL server (psycopg) the connection is kept for the
    next use case: SQLAlchemy's pool checkout and check-in cost about 10 µs in Python, a third of a
    graph read on SQLite, and its pre-ping is a round trip to the server before every use case
    (issue #8, B2, profiled). A kept connection was made by the pool (so it has every setting the
    engine gives) and detached from it. One left inside a transaction, in autocommit, or closed by
    a failure is closed, never kept; a kept server connection the server has closed meanwhile is
    dropped unused (`_alive`). At most KEEP are out at once; beyond that, and for the in-memory
    SQLite memory (one shared connection), the pool serves."""
    kept = _KEPT.get(engine)
    dbapi = kept.take() if kept is not None else None
    if dbapi is None:  # the pool's connection, back to the pool after
        proxy = engine.raw_connection()
        try:
            yield proxy.dbapi_connection
        finally:
            proxy.close()
        return
    assert kept is not None
    try:
        if dbapi is _NEW:
            dbapi = None
            proxy = engine.raw_connection()
            proxy.detach()
            dbapi = proxy.dbapi_connection
        yield dbapi
    finally:
        kept.give_back(dbapi)


@contextmanager
def statement_driver(engine: Engine) -> Iterator[Driver]:
    """PostgreSQL: the driver on a kept connection in autocommit, so each statement is its own
    transaction (probes.counted_read). The connection leaves autocommit after; one that could not
    is not kept (`_idle`)."""
    with driver_connection(engine) as dbapi:
        dbapi.autocommit = True
        try:
            db = Driver(dbapi, True)
            try:
                yield db
            finally:
                db.close()
        finally:
            dbapi.autocommit = False


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
