"""SQLite and PostgreSQL: everything the two backends do differently, one object each."""

from __future__ import annotations

import json
import select
import sqlite3
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager, suppress
from typing import Any

from pydantic_core import to_json
from sqlalchemy import event, text
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, OperationalError, ProgrammingError

from ..plain import Obj
from . import pg_scrub

#: SQLite folds its write-ahead log into the file every WAL_PAGES pages, not 1,000: a turn rewrites the same hot
#: pages in each use case and a checkpoint copies a page once (issue #8, B1: end_turn 2.9 -> 2.2 ms). R31 empties it.
WAL_PAGES = 10_000
CHECKPOINT_WAIT_MS = 10_000  # how long a checkpoint waits for older readers before it says the log is not folded
LOAD_LOCK = 0x6D6C6F64  # PostgreSQL advisory lock keys: a load into a database,
MIGRATION_LOCK = 0x6D6D6967  # and its migrations, one at a time each (the scrub's: store/pg_scrub.py)

#: A fact of a probe's (subject id, relation, object key) triple `w`, in the graph :g of :o.
_SAME_FACT = "f.graph = :g AND f.owner = :o AND f.subject_id = w.s AND f.relation = w.r AND f.object_key = w.x"

#: A driver's query (Driver.rows): the rows a statement with `:name` parameters reads.
Rows = Callable[[str, Obj], list[tuple[Any, ...]]]


class Locked(str):
    """A SELECT locking the rows of table alias `of` until commit, as each dialect writes the lock (`for_update`)."""

    of: str

    def __new__(cls, sql: str, *, of: str) -> Locked:
        out = super().__new__(cls, sql)
        out.of = of
        return out


for_update = Locked  # `for_update(sql, of="t")`: `sql`, locking the rows it reads of alias t until commit


def in_list(prefix: str, values: Iterable[Any], params: Obj) -> str:
    """`:p0, :p1, …` for an IN list, the values added to `params`."""
    named = {f"{prefix}{i}": v for i, v in enumerate(values)}
    params.update(named)
    return ", ".join(f":{name}" for name in named)


class Dialect:
    """What the store asks of a backend, answered as SQLite does; PostgreSQL answers otherwise where it differs."""

    name = ""
    AMONG = "{column} IN (SELECT value FROM json_each(:{name}))"  # among(): SQLite's JSON table function
    #: The driver's use cases keep their DB-API connections between calls (database.driver_connection).
    keeps_connections = False
    #: A turn-level graph read is one autocommitted statement (probes.counted_read, usecases/reads.py).
    one_statement_reads = False
    #: R31: after_erasure scrubs within the deleting call (cheap), or leaves it to the background.
    scrubs_inline = False
    #: A kept read's id, taken before its row is written (probes.count_read, reads.keep): after the largest, as SQLite
    #: numbers rows itself (the write lock is held since BEGIN IMMEDIATE).
    next_read_id = "SELECT coalesce(max(id), 0) + 1 AS rid FROM turnread"
    #: R31: how long the command line waits for the background scrub (None: until it is done).
    finish_timeout: float | None = None
    #: The memory's version (database.memory_version), read on a connection that never writes; None: no page keeps answers.
    version_sql: str | None = None
    #: A hot standby's reads (standby.py): the primary's WAL position, how far a standby replayed it. None: no standby.
    wal_position_sql: str | None = None
    replayed_sql: str | None = None

    def set_up(self, engine: Engine) -> None:
        """What every connection of a new engine needs (make_engine)."""

    def writer(self, engine: Engine) -> Engine:
        """The engine for the ORM's use cases that write: they take the write lock at BEGIN (SQLite._begin), and queue."""
        return engine.execution_options(writer=True)

    def idle(self, dbapi: Any) -> bool:
        """A DB-API connection outside any transaction, as the pool made it: fit to be kept."""
        return not dbapi.in_transaction

    def alive(self, dbapi: Any) -> bool:
        """A kept connection may serve the next use case (a file has no other end to close it)."""
        return True

    def for_driver(self, sql: str) -> str:
        """SQL written with `:name` parameters (driver.py), ready for this driver."""
        return sql

    def positional(self, sql: str) -> str:
        """SQL written with `?` parameters, bound by position (a tuple: the cheapest to bind, reads.keep), for this driver."""
        return sql

    def begin(self, cur: Any, *, serializable: bool) -> None:
        """Begin a driver use case's transaction on a kept connection (Database.driver)."""
        # The write lock up front: the checks stay true until commit, as a row lock makes them (Locked adds nothing).
        cur.execute("BEGIN IMMEDIATE")

    def json(self, obj: Any) -> Any:
        """A JSON column's parameter on the driver: the text json.dumps(obj) gives by default, as the ORM stores it."""
        return json.dumps(obj)

    def trace_json(self, obj: Any) -> Any:
        """A kept read's JSON (#38): as pydantic writes it, a third of json.dumps's time (B10); json.loads reads both."""
        return to_json(obj, inf_nan_mode="constants").decode()

    def new_ids(self, rows: Rows, table: str, n: int) -> list[int]:
        """Ids for `n` (> 0) new rows of `table`, in order, inside the driver's transaction (`rows`: Driver.rows)."""
        # Numbered after the largest id, as SQLite would itself (the write lock is held since BEGIN IMMEDIATE).
        start = int(rows(f"SELECT coalesce(max(id), 0) FROM {table}", {})[0][0]) + 1
        return list(range(start, start + n))

    def entities_named(self, cols: str, graph: str, owner: str, keys: list[str]) -> tuple[str, Obj]:
        """A graph's entities (`cols` of alias e) with these name keys: one index probe per key."""
        params: Obj = {"g": graph, "o": owner}
        where = f'e.graph = :g AND e.owner = :o AND e."key" IN ({in_list("k", keys, params)})'
        return f"SELECT {cols} FROM entity e WHERE {where}", params

    def among(self, column: str, name: str, values: list[int]) -> tuple[str, Any]:
        """`column` is one of many ids, one JSON parameter `:name` (thousands of IN parameters: slow to compile, B9)."""
        return self.AMONG.format(column=column, name=name), self.json(values)

    def facts_named(self, cols: str, graph: str, owner: str, triples: list[tuple[int, str, str]]) -> tuple[str, Obj]:
        """A graph's facts (`cols` of alias f) of these (subject id, relation, object key): one index probe each."""
        # A VALUES list as the outer loop (CROSS JOIN): IN lists probed their cross product, a row-value IN the graph.
        params: Obj = {"g": graph, "o": owner}
        values = []
        for i, (sid, rel, okey) in enumerate(triples):
            params.update({f"s{i}": sid, f"r{i}": rel, f"x{i}": okey})
            values.append(f"(:s{i}, :r{i}, :x{i})")
        sql = f"WITH w(s, r, x) AS (VALUES {', '.join(values)}) SELECT {cols} FROM w CROSS JOIN fact f"
        return f"{sql} WHERE {_SAME_FACT}", params

    def checkpoint(self, engine: Engine) -> bool:
        """Whatever log the backend keeps of the last transactions is in the database files (R31)."""
        return True

    def small_page_cache(self, engine: Engine, *, kib: int) -> None:
        """Each connection's page cache at `kib` where the backend keeps one per connection (SQLite); else nothing."""

    def scrub(self, engine: Engine) -> bool:
        """R31: secure_delete overwrote the rows; a checkpoint empties the log into the file (False: a reader held it)."""
        top = scrub_due(engine, top=True)  # the newest marker (0: none, or a database not migrated yet)
        if not self.checkpoint(engine):
            return False
        if top:  # the markers it covered go
            with self.writer(engine).begin() as conn:
                conn.execute(text("DELETE FROM scrubdue WHERE id <= :top"), {"top": top})
            self.checkpoint(engine)  # the markers' own removal: no erased text, but leave the log empty
        return True

    @contextmanager
    def one_load_at_a_time(self, engine: Engine) -> Iterator[None]:
        """Around a load into an empty database, so two loads into one run one after the other."""
        yield

    @contextmanager
    def migrating(self, engine: Engine) -> Iterator[Connection]:
        """One transaction for the migrations, one migrator at a time (database.upgrade): the writer's lock first."""
        with self.writer(engine).begin() as conn:
            yield conn

    def after_bulk_load(self, engine: Engine) -> None:
        """After rows were written with ids of their own (bulk.py, the generator)."""

    @staticmethod
    def lost(exc: BaseException) -> bool | None:
        """Whether a driver's error says its server is unreachable or gone (standby.lost). None: not this driver's."""


class SQLite(Dialect):
    """A file (or a private memory) that one writer at a time holds."""

    name = "sqlite"
    scrubs_inline = True  # R31: its scrub is a checkpoint, cheap enough to run right after the commit
    finish_timeout = 30.0  # a checkpoint a reader holds up: say so rather than wait for the reader
    version_sql = "PRAGMA data_version"  # changes with every commit of *another* connection

    def __init__(self, *, in_memory: bool) -> None:
        self.in_memory = in_memory
        self.keeps_connections = not in_memory  # in memory: one shared connection (StaticPool), the pool serves it

    def set_up(self, engine: Engine) -> None:
        event.listen(engine, "connect", self._pragmas)
        event.listen(engine, "begin", self._begin)

    @staticmethod
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy, not sqlite3, begins transactions: SAVEPOINTs work
        cur = dbapi_connection.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA secure_delete=ON")  # R31: deleted text is overwritten, not left in free pages
        cur.execute("PRAGMA busy_timeout=10000")
        if cur.execute("PRAGMA journal_mode").fetchone()[0] != "memory":
            for _ in range(200):  # WAL: a new file's first two openers race; the loser hears "locked" at once: again
                try:
                    cur.execute("PRAGMA journal_mode=WAL")
                    break
                except sqlite3.OperationalError as exc:  # SQLITE_BUSY (5) only: the other opener holds the file
                    if getattr(exc, "sqlite_errorcode", 0) & 0xFF != 5:
                        raise
                    time.sleep(0.05)
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute(f"PRAGMA wal_autocheckpoint={WAL_PAGES}")
        cur.close()

    @staticmethod
    def _begin(conn: Any) -> None:
        # Writers BEGIN IMMEDIATE: two queue on the lock rather than fail when a reader upgrades; readers never block.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("writer") else "BEGIN")

    def small_page_cache(self, engine: Engine, *, kib: int) -> None:
        # Its default is 2,000 KiB a connection; the OS caches the file too (#38.10: a long stdio session).
        event.listen(engine, "connect", lambda dbapi, _: dbapi.execute(f"PRAGMA cache_size=-{int(kib)}"))
        engine.dispose()  # its connections made again, with that cache

    def checkpoint(self, engine: Engine) -> bool:
        """Fold the write-ahead log into the file and empty it (R31); False when a reader kept it busy past the wait."""
        if self.in_memory:
            return True
        with closing(engine.raw_connection()) as proxy:  # autocommit (isolation_level None): no transaction around it
            cur = proxy.dbapi_connection.cursor()  # type: ignore[union-attr]
            cur.execute(f"PRAGMA busy_timeout={int(CHECKPOINT_WAIT_MS)}")
            try:
                busy, _log, _copied = cur.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                cur.execute("PRAGMA busy_timeout=10000")
                cur.close()
        return busy == 0

    @staticmethod
    def conflict(exc: BaseException) -> bool | None:
        """SQLITE_BUSY (5, extended forms too) or SQLITE_LOCKED (6); None: not sqlite3's (retry.py)."""
        if not isinstance(exc, sqlite3.Error):
            return None
        code = getattr(exc, "sqlite_errorcode", None)
        return isinstance(code, int) and (code & 0xFF) in (5, 6)  # extended codes keep them in the low byte


class PostgreSQL(Dialect):
    """A server through psycopg 3: every statement a round trip, writers concurrent."""

    name = "postgresql"
    AMONG = "{column} IN (SELECT CAST(value AS bigint) FROM json_array_elements_text(:{name}))"
    keeps_connections = True  # the pool's pre-ping is a round trip before every use case (issue #8, B2)
    one_statement_reads = True  # a read's five round trips cost five times its query (issue #8, B2)
    next_read_id = "SELECT nextval(pg_get_serial_sequence('turnread', 'id')) AS rid"  # concurrent writers: a sequence
    finish_timeout = 600.0  # R31: the rewrite runs in the background; a transaction older than it can hold it back
    version_sql = "SELECT CAST(pg_current_snapshot() AS text)"  # the same xmin:xmax:xip, the same data
    #: WAL positions as byte offsets (`pg_lsn - '0/0'`): the insert position is at or past every commit before it;
    #: the replayed one is NULL on a server that is no standby (not read).
    wal_position_sql = "SELECT CAST(pg_current_wal_insert_lsn() - CAST('0/0' AS pg_lsn) AS bigint)"
    replayed_sql = "SELECT CAST(pg_last_wal_replay_lsn() - CAST('0/0' AS pg_lsn) AS bigint)"

    _SQL: dict[str, str] = {}  # for_driver's, shared by every PostgreSQL engine
    _psycopg = PGDialect_psycopg()  # renders `:name` parameters as psycopg takes them

    def writer(self, engine: Engine) -> Engine:
        """SERIALIZABLE, so concurrent teachers never lose an update (retry.py runs the loser again)."""
        return engine.execution_options(isolation_level="SERIALIZABLE")

    def idle(self, dbapi: Any) -> bool:
        """Outside any transaction, in the state the pool made it (not autocommit), still open."""
        from psycopg.pq import TransactionStatus

        usable = not (dbapi.closed or dbapi.broken or dbapi.autocommit)
        return usable and dbapi.info.transaction_status == TransactionStatus.IDLE

    def alive(self, dbapi: Any) -> bool:
        """Alive if the server said nothing since (a closed one has its end of file to read): a poll, no round trip."""
        if not self.idle(dbapi):
            return False
        try:
            poller = select.poll()
            poller.register(dbapi.fileno(), select.POLLIN)
            return not poller.poll(0)
        except (OSError, ValueError):
            return False

    def for_driver(self, sql: str) -> str:
        """psycopg wants `%(name)s`; made once a statement (a dictionary look-up after)."""
        out = self._SQL.get(sql)
        if out is None:
            # A Locked read locks the turn's row from the first statement: the use case's checks hold until commit.
            written = f"{sql} FOR NO KEY UPDATE OF {sql.of}" if isinstance(sql, Locked) else sql
            out = self._SQL[sql] = str(text(written).compile(dialect=self._psycopg))  # `%(name)s`, `%` as `%%`
        return out

    def positional(self, sql: str) -> str:
        return sql.replace("?", "%s")  # psycopg's mark (the SQL has no `%`)

    def begin(self, cur: Any, *, serializable: bool) -> None:
        # READ COMMITTED (guarded UPDATEs keep counts right), or as the ORM's writers where teachers must lose nothing.
        if serializable:
            cur.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")

    def json(self, obj: Any) -> Any:
        from psycopg.types.json import Json

        return Json(obj)  # sent as json: dumped by json.dumps, as the base's text

    trace_json = json  # the driver's (a turn's graph reads keep theirs inside their one statement)

    def new_ids(self, rows: Rows, table: str, n: int) -> list[int]:
        # From the table's sequence: concurrent writers each take their own.
        seq = f"pg_get_serial_sequence('{table}', 'id')"
        return [r[0] for r in rows(f"SELECT nextval({seq}) FROM generate_series(1, :n)", {"n": n})]

    def entities_named(self, cols: str, graph: str, owner: str, keys: list[str]) -> tuple[str, Obj]:
        # A LATERAL subquery the planner may not flatten (OFFSET 0): given IN or a join, it read the whole graph (#8).
        sql = (
            f"SELECT {cols} FROM unnest(CAST(:k AS text[])) AS w(k) CROSS JOIN LATERAL "
            '(SELECT * FROM entity WHERE graph = :g AND owner = :o AND "key" = w.k OFFSET 0) e'
        )
        return sql, {"g": graph, "o": owner, "k": keys}

    def facts_named(self, cols: str, graph: str, owner: str, triples: list[tuple[int, str, str]]) -> tuple[str, Obj]:
        # Three arrays unnested into a LATERAL subquery, as for entities.
        sql = (
            f"SELECT {cols} FROM unnest(CAST(:s AS bigint[]), CAST(:r AS text[]), CAST(:x AS text[])) "
            f"AS w(s, r, x) CROSS JOIN LATERAL (SELECT * FROM fact f WHERE {_SAME_FACT} OFFSET 0) f"
        )
        params: Obj = {"g": graph, "o": owner}
        params.update(s=[t[0] for t in triples], r=[t[1] for t in triples], x=[t[2] for t in triples])
        return sql, params

    def scrub(self, engine: Engine) -> bool:
        """Every table rewritten, analyzed, `pg_statistic` rewritten, a CHECKPOINT (store/pg_scrub.py)."""
        return pg_scrub.scrub(engine, scrub_due(engine, top=True))  # the markers it covers: those there now

    @contextmanager
    def one_load_at_a_time(self, engine: Engine) -> Iterator[None]:
        """A session advisory lock on a connection of its own, taken before the load's transaction."""
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql(f"SELECT pg_advisory_lock({LOAD_LOCK})")
            try:
                yield
            finally:
                with suppress(Exception):  # a lost connection has released its lock already
                    conn.exec_driver_sql(f"SELECT pg_advisory_unlock({LOAD_LOCK})")

    @contextmanager
    def migrating(self, engine: Engine) -> Iterator[Connection]:
        # Writers run concurrently here: an advisory lock, so two commands creating one database migrate it once.
        with engine.begin() as conn:
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            yield conn

    def after_bulk_load(self, engine: Engine) -> None:
        """The id sequences go on after the ids written; ANALYZE now, not at the next autovacuum (issue #8, B1)."""
        with engine.begin() as conn:
            for table in ("entity", "fact", "support", "dispute"):
                conn.exec_driver_sql(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE((SELECT MAX(id) FROM {table}), 1))"
                )
            conn.exec_driver_sql("ANALYZE")

    @staticmethod
    def conflict(exc: BaseException) -> bool | None:
        """SQLSTATE 40001, 40P01, or 23505 (two racing inserts of one new row); None: not psycopg's (retry.py)."""
        if not type(exc).__module__.startswith("psycopg"):
            return None
        code = getattr(exc, "sqlstate", None) or getattr(exc, "pgcode", None)
        return code in ("40001", "40P01", "23505")

    @staticmethod
    def lost(exc: BaseException) -> bool | None:
        """The server gone, not a statement refused: OperationalError with no SQLSTATE, class 08, or 57P01 to 57P03."""
        if not type(exc).__module__.startswith("psycopg"):
            return None
        code = getattr(exc, "sqlstate", None)
        gone = code is None or code.startswith(("08", "57P01", "57P02", "57P03"))
        return gone and any(c.__name__ == "OperationalError" for c in type(exc).__mro__)


DIALECTS = (SQLite, PostgreSQL)
_OF: weakref.WeakKeyDictionary[Any, Dialect] = weakref.WeakKeyDictionary()


def scrub_due(engine: Engine, *, top: bool = False) -> int:
    """R31: how many deletions' text may be in the files, or (`top`) the newest marker a scrub covers; 0: none, or no table."""
    read = "coalesce(max(id), 0)" if top else "count(*)"
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(f"SELECT {read} FROM scrubdue")).scalar() or 0)
    except (OperationalError, ProgrammingError):
        return 0


def driver_error(exc: BaseException) -> BaseException:
    """The driver's own error under SQLAlchemy's (DBAPIError.orig), else `exc`: what Dialect.lost and conflict read."""
    return exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc


def dialect_of(engine: Engine) -> Dialect:
    """The engine's dialect, made once: an engine's option engines (`writer`) share it, as SQLAlchemy's."""
    key = engine.dialect
    if key not in _OF:
        if key.name not in (SQLite.name, PostgreSQL.name):
            raise ValueError(f"no dialect for {key.name!r}")
        in_memory = engine.url.database in (None, "", ":memory:")
        _OF[key] = SQLite(in_memory=in_memory) if key.name == SQLite.name else PostgreSQL()
    return _OF[key]
