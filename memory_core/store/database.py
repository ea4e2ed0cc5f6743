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
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError
from sqlalchemy.pool import StaticPool
from sqlmodel import SQLModel, create_engine

from . import models  # noqa: F401  (registers every table)
from .driver import Driver

DEFAULT_URL = "sqlite:///.memory/memory.db"
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


#: What SQLAlchemy raises for a URL it cannot use or a database it cannot reach (the CLI says so).
CONNECTION_ERRORS = (ArgumentError, NoSuchModuleError, OperationalError)


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
    `existing`, the database must be there already with a schema: nothing is created, no file,
    directory or table (the commands that only read or manage a database refuse a mistyped path
    or an empty database). An unsupported scheme,
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
            from .migrate import current, upgrade

            if existing and current(engine) is None:  # a command that only reads creates no schema
                engine.dispose()
                raise DatabaseUnusable(
                    shown(url), "holds no memory schema; nothing was created (`db upgrade --db URL` creates one)"
                )
            upgrade(engine)
    return engine


#: Engines whose driver use cases keep their DB-API connections between calls (see below).
_KEPT: weakref.WeakKeyDictionary[Engine, Kept] = weakref.WeakKeyDictionary()
KEEP = 8
_LEFT_IN_PARENT: list[Any] = []  # a forked child never closes its parent's connections


def kept_connections(engine: Engine) -> Kept:
    """The engine's kept connections (tests and operators read `idle` and `out`)."""
    return _KEPT[engine]


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
                if alive(dbapi):
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


def alive(dbapi: Any) -> bool:
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


#: How long a checkpoint waits for readers of an older snapshot before it says the log is not folded
#: yet (SQLite's busy handler; the connections' own busy_timeout). Tests shorten it.
CHECKPOINT_WAIT_MS = 10_000


def checkpoint(engine: Engine) -> bool:
    """Fold SQLite's write-ahead log into the database file and empty it (R31). True when done;
    False when a reader of an older snapshot kept it busy past CHECKPOINT_WAIT_MS: the log, and
    the pages it has not copied, still hold what the last transactions overwrote. Other backends
    and an in-memory SQLite database have no such log: True."""
    if engine.dialect.name != "sqlite" or _in_memory(engine):
        return True
    proxy = engine.raw_connection()  # autocommit (isolation_level None): no transaction around the PRAGMA
    try:
        cur = proxy.dbapi_connection.cursor()  # type: ignore[union-attr]
        cur.execute(f"PRAGMA busy_timeout={int(CHECKPOINT_WAIT_MS)}")
        try:
            busy, _log, _copied = cur.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            cur.execute("PRAGMA busy_timeout=10000")
            cur.close()
    finally:
        proxy.close()
    return busy == 0


def _in_memory(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite" and engine.url.database in (None, "", ":memory:")


def scrub_due(engine: Engine) -> int:
    """How many deletions may still have erased text in the database files (R31): the markers
    their transactions wrote (models.ScrubDue). 0 for a database without the table (not migrated)."""
    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError, ProgrammingError

    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM scrubdue")).scalar() or 0)
    except (OperationalError, ProgrammingError):
        return 0


#: Every table of memory, for `scrub` (R31): whatever a deletion touched, all of them are rewritten.
def all_tables() -> list[str]:
    return [t.name for t in SQLModel.metadata.sorted_tables]


#: Kept for callers that named the tables holding text; every table is scrubbed now.
TEXT_TABLES = tuple(all_tables())
_SCRUB_LOCK = 7_310_031  # pg_advisory_lock key: one scrub of a database at a time


def scrub(engine: Engine) -> bool:
    """Make erased text leave the database files now (R31) and clear the markers of the deletions
    it covers. True when the bytes are gone; False when SQLite's log could not be folded yet (a
    long reader; `checkpoint`), the markers then stay for the next chance.

    SQLite: secure_delete has overwritten the rows in the deleting transaction; the checkpoint folds
    the log into the file and empties it. PostgreSQL: every table is rewritten (VACUUM FULL: table,
    TOAST and index files are new, the old ones unlinked), then analyzed, so the planner's samples
    (`pg_statistic`, read through `pg_stats`) are taken from the remaining rows only; a table left
    empty keeps its old samples through ANALYZE, so its columns' samples are dropped (an ALTER
    COLUMN to the same type, which removes them without rewriting); then a CHECKPOINT."""
    from sqlalchemy import text

    if engine.dialect.name == "sqlite":
        if _in_memory(engine):
            _clear_markers(engine, None)
            return True
        top = _top_marker(engine) if scrub_due(engine) else 0  # 0 also for a database not migrated yet
        if not checkpoint(engine):
            return False
        if top:
            _clear_markers(engine, top)
            checkpoint(engine)  # the markers' own removal: no erased text, but leave the log empty
        return True
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _SCRUB_LOCK})
        try:
            migrated = conn.execute(text("SELECT to_regclass('scrubdue') IS NOT NULL")).scalar()
            covered = conn.execute(text("SELECT coalesce(max(id), 0) FROM scrubdue")).scalar() if migrated else 0
            exists = text("SELECT to_regclass(:t) IS NOT NULL")
            tables = [t for t in all_tables() if conn.execute(exists, {"t": f'"{t}"'}).scalar()]
            for table in tables:
                conn.exec_driver_sql(f'VACUUM FULL "{table}"')
            for table in tables:
                conn.exec_driver_sql(f'ANALYZE "{table}"')
                if conn.exec_driver_sql(f'SELECT NOT EXISTS (SELECT 1 FROM "{table}")').scalar():
                    _drop_samples(conn, table)
            if migrated:
                conn.execute(text("DELETE FROM scrubdue WHERE id <= :top"), {"top": covered})
            try:
                conn.exec_driver_sql("CHECKPOINT")  # superuser or pg_checkpoint: else the server's own comes
            except Exception:  # noqa: BLE001
                conn.rollback()
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _SCRUB_LOCK})
    return True


def _drop_samples(conn: Any, table: str) -> None:
    """PostgreSQL: remove a table's column statistics (ANALYZE of an empty table keeps old ones)."""
    from sqlalchemy import text

    rows = conn.execute(
        text(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
            "WHERE a.attrelid = CAST(:t AS regclass) AND a.attnum > 0 AND NOT a.attisdropped "
            "AND EXISTS (SELECT 1 FROM pg_statistic s WHERE s.starelid = a.attrelid AND s.staattnum = a.attnum)"
        ),
        {"t": f'"{table}"'},
    ).all()
    for column, typ in rows:
        conn.exec_driver_sql(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE {typ}')


def _top_marker(engine: Engine) -> int:
    from sqlalchemy import text

    with engine.connect() as conn:
        return int(conn.execute(text("SELECT coalesce(max(id), 0) FROM scrubdue")).scalar() or 0)


def _clear_markers(engine: Engine, top: int | None) -> None:
    from sqlalchemy import text

    with writer(engine).begin() as conn:
        if top is None:
            conn.execute(text("DELETE FROM scrubdue"))
        else:
            conn.execute(text("DELETE FROM scrubdue WHERE id <= :top"), {"top": top})
