"""Engines and schema (Alembic's migrations). `MEMORY_DATABASE_URL` picks the database; by default a SQLite file."""

from __future__ import annotations

import os
import threading
import uuid
import weakref
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError
from sqlalchemy.pool import StaticPool
from sqlmodel import SQLModel, create_engine

from . import models, retry, template  # noqa: F401  (models: registers every table; retry: psycopg's noise dropped)
from .dialect import Dialect, dialect_of
from .driver import Driver

DEFAULT_URL = "sqlite:///.memory/memory.db"
#: The database URLs this product runs on: SQLite (a file, or private in memory) and PostgreSQL through psycopg 3.
SUPPORTED = "sqlite:///PATH (a file), sqlite:// (in memory), postgresql+psycopg://USER@HOST:PORT/NAME"
#: What SQLAlchemy raises for a URL it cannot use or a database it cannot reach (the CLI says so).
CONNECTION_ERRORS = (ArgumentError, NoSuchModuleError, OperationalError)
#: What a command that only reads says of a database that is not there (`existing`): it made none.
NOTHING_MADE = "nothing was created (`db upgrade --db URL` creates one)"


def database_url() -> str:
    """The configured database: `MEMORY_DATABASE_URL`, else `.memory/memory.db`."""
    return os.environ.get("MEMORY_DATABASE_URL") or DEFAULT_URL


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
    """An engine for `url` (default: `database_url()`), with `create` its schema migrated; `existing`: must be there."""
    url = url or database_url()
    path = sqlite_file(url)  # checks the scheme
    in_memory = path is None and url.startswith("sqlite")
    if path is not None:
        engine = _sqlite_file_engine(url, path, create=create, existing=existing)
    elif in_memory:
        engine = create_engine("sqlite://", connect_args={"check_same_thread": False}, poolclass=OneConnection)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    dialect = dialect_of(engine)
    dialect.set_up(engine)
    if dialect.keeps_connections:
        KEPT[engine] = Kept(dialect)
        event.listen(engine, "engine_disposed", lambda e: KEPT[e].close() if e in KEPT else None)
    if create:
        if in_memory:
            template.new_memory(engine, SQLModel.metadata.create_all)
        else:
            if existing and current(engine) is None:  # a command that only reads creates no schema
                engine.dispose()
                raise DatabaseUnusable(shown(url), f"holds no memory schema; {NOTHING_MADE}")
            upgrade(engine)
    return engine


SCRIPTS = Path(__file__).resolve().parent / "migrations"
#: Alembic runs migrations through process-wide proxies (`alembic.context`, `alembic.op`): two
#: threads migrating at once, even two databases, would run one's DDL on the other's connection.
_ONE_IN_THIS_PROCESS = threading.Lock()


def config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(SCRIPTS))
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` (the newest), in one transaction, one migrator at a time (Dialect.migrating)."""
    cfg = config()
    with _ONE_IN_THIS_PROCESS, dialect_of(engine).migrating(engine) as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def current(engine: Engine) -> str | None:
    """The revision the database is at, or None for a database never migrated."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head() -> str | None:
    return ScriptDirectory.from_config(config()).get_current_head()


class OneConnection(StaticPool):
    """In memory, the one connection is held by one thread at a time, from checkout to checkin (re-entrant) (#38)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._free = threading.Condition()
        self._holder: int | None = None
        self._depth = 0

    def _do_get(self) -> Any:
        me = threading.get_ident()
        with self._free:
            self._free.wait_for(lambda: self._holder in (None, me))
            self._holder, self._depth = me, self._depth + 1
        return super()._do_get()

    def _do_return_conn(self, record: Any) -> None:
        super()._do_return_conn(record)
        with self._free:
            self._depth -= 1
            if self._depth <= 0:
                self._holder, self._depth = None, 0
                self._free.notify_all()


def _sqlite_file_engine(url: str, path: Path, *, create: bool, existing: bool) -> Engine:
    """An engine on a SQLite file, its folder made; with `create`, a new file is a copy of this process's template."""
    if existing and not path.is_file():
        raise DatabaseUnusable(shown(url), f"no database file at {path}; {NOTHING_MADE}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseUnusable(shown(url), f"cannot create {path.parent}: {exc.strerror}") from None
    if create and not path.exists():
        template.new_file(path, _migrated)
    return create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})


def _migrated(file: Path) -> None:
    """A new SQLite file brought to the newest schema, its log folded in: the template (store/template.py)."""
    engine = make_engine(f"sqlite:///{file}", create=False)  # no schema yet: no template asked for
    upgrade(engine)
    dialect_of(engine).checkpoint(engine)
    engine.dispose()


#: Engines whose driver use cases keep their DB-API connections between calls (tests read `idle` and `out`).
KEPT: weakref.WeakKeyDictionary[Engine, Kept] = weakref.WeakKeyDictionary()
KEEP = 8
_LEFT_IN_PARENT: list[Any] = []  # a forked child never closes its parent's connections


class Kept:
    """An engine's kept connections, and how many are out (at most KEEP; beyond that the pool serves)."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.idle: list[Any] = []
        self.out = 0
        self.lock = threading.Lock()

    def take(self, engine: Engine) -> Any | None:
        """An idle kept connection, else a new one; None at the cap (the pool serves)."""
        with self.lock:
            while self.idle:
                dbapi = self.idle.pop()
                if self.dialect.alive(dbapi):
                    self.out += 1
                    return dbapi
                _close_quietly(dbapi)
            if self.out >= KEEP:
                return None
            self.out += 1
        try:
            return _detached(engine)
        except BaseException:
            self.give_back(None)
            raise

    def give_back(self, dbapi: Any) -> None:
        """A connection taken is back: kept if clean, else closed (None: making one failed)."""
        with self.lock:
            self.out -= 1
            if dbapi is None:
                return
            if self.dialect.idle(dbapi) and len(self.idle) < KEEP:
                self.idle.append(dbapi)
                return
        _close_quietly(dbapi)

    def close(self) -> None:
        with self.lock:
            idle = self.idle[:]
            self.idle.clear()
        for dbapi in idle:
            _close_quietly(dbapi)


def _forget_kept_in_child() -> None:
    for kept in KEPT.values():
        _LEFT_IN_PARENT.extend(kept.idle)
        kept.idle, kept.out, kept.lock = [], 0, threading.Lock()


os.register_at_fork(after_in_child=_forget_kept_in_child)


def _close_quietly(dbapi: Any) -> None:
    with suppress(Exception):  # a broken connection may fail to close; it is dropped either way
        dbapi.close()


def _detached(engine: Engine) -> Any:
    """A DB-API connection the pool made (every setting the engine gives), no longer the pool's."""
    proxy = engine.raw_connection()
    proxy.detach()
    return proxy.dbapi_connection


@contextmanager
def driver_connection(engine: Engine) -> Iterator[Any]:
    """A DB-API connection for one driver use case (a read, a record, teaching), outside any transaction."""
    kept = KEPT.get(engine)
    dbapi = kept.take(engine) if kept is not None else None
    if kept is None or dbapi is None:  # the pool's connection, back to the pool after
        with closing(engine.raw_connection()) as proxy:
            yield proxy.dbapi_connection
        return
    try:
        yield dbapi
    finally:
        kept.give_back(dbapi)


@contextmanager
def statement_driver(engine: Engine) -> Iterator[Driver]:
    """The driver on a kept connection in autocommit: each statement its own transaction (probes.counted_read)."""
    with driver_connection(engine) as dbapi:
        dbapi.autocommit = True
        try:
            with closing(Driver(dbapi, dialect_of(engine))) as db:
                yield db
        finally:
            dbapi.autocommit = False


class Detached:
    """A connection the pool made (every setting the engine gives), detached, this process's, used under `lock`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.lock = threading.Lock()
        self.dbapi: Any = None
        self.pid = 0
        self.name = ""

    def ask(self, sql: str) -> Any:
        """The one value `sql` reads; a connection the server closed meanwhile (a restart) is made again, once."""
        again = self.dbapi is not None and self.pid == os.getpid()
        while True:
            try:
                return self._one(sql)
            except Exception:
                self.drop()
                if not again:
                    raise
                again = False

    def _one(self, sql: str) -> Any:
        if self.dbapi is None or self.pid != os.getpid():
            self.dbapi, self.pid, self.name = _detached(self.engine), os.getpid(), uuid.uuid4().hex[:12]
        with closing(self.dbapi.cursor()) as cur:
            try:
                cur.execute(sql)
                return cur.fetchone()[0]
            finally:
                self.dbapi.rollback()  # no transaction left open (a server would hold its snapshot)

    def drop(self) -> None:
        dbapi, self.dbapi = self.dbapi, None
        if dbapi is not None and self.pid == os.getpid():
            _close_quietly(dbapi)

    def close(self) -> None:
        with self.lock:
            self.drop()


_WATCH: weakref.WeakKeyDictionary[Engine, Detached] = weakref.WeakKeyDictionary()
_WATCH_LOCK = threading.Lock()


def memory_version(engine: Engine) -> str | None:
    """A token of what the database holds, new at every commit of any process (Dialect.version_sql; None: in memory)."""
    sql = dialect_of(engine).version_sql
    if sql is None or isinstance(engine.pool, StaticPool):
        return None
    with _WATCH_LOCK:
        watch = _WATCH.get(engine)
        if watch is None:  # never writing: SQLite's data_version counts the commits of other connections only
            watch = _WATCH[engine] = Detached(engine)
            event.listen(engine, "engine_disposed", lambda _engine: watch.close())
    with watch.lock:
        value = watch.ask(sql)
        return f"{watch.name}:{value}"  # a new connection counts anew: its name tells them apart


def checkpoint(engine: Engine) -> bool:
    """The backend's log of the last transactions is in the database files now (R31, Dialect.checkpoint)."""
    return dialect_of(engine).checkpoint(engine)


def scrub(engine: Engine) -> bool:
    """Make erased text leave the database files now and clear the markers it covers (R31, Dialect.scrub)."""
    return dialect_of(engine).scrub(engine)


def warm_driver(url: str) -> None:
    """Import the URL's SQLAlchemy dialect and driver now, as the server starts; a bad URL is the page's to report."""
    with suppress(Exception):  # the page reports it, with where and what
        _parse(url).get_dialect().import_dbapi()
