"""One database as the use cases share it, and the one way into a transaction for a use case (R21, R31)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, closing, contextmanager, nullcontext
from typing import TypeVar

from sqlmodel import Session

from .. import errors as E
from ..plain import Obj
from .database import (
    DatabaseUnusable,
    Engine,
    database_url,
    driver_connection,
    make_engine,
    memory_version,
    shown,
    statement_driver,
)
from .dialect import dialect_of
from .driver import Driver, driver_of
from .erasure import after_erasure, erasure_status, finisher, heal
from .standby import PRIMARY, STANDBY, ServerLost, Standby, lost, why

__all__ = ["Database", "Db", "Engine", "Tx"]

#: The unit of work a use case's transaction hands it: the use case passes it to the store's functions.
Tx = Session
#: The same for a use case on the driver (driver.py).
Db = Driver

T = TypeVar("T")


class Database:
    """One database's transactions for use cases, the one transaction several may share, and erasure after (R31)."""

    def __init__(
        self, engine: Engine | None = None, *, outer: Tx | None = None, standby: Standby | None = None
    ) -> None:
        if engine is None:
            engine, standby = _opened(None, existing=False, read=None)
        self.engine = engine
        self.dialect = dialect_of(engine)  # where the backends differ (dialect.py)
        self._writer = self.dialect.writer(engine)
        self.outer = outer
        self.standby = standby if outer is None else None  # inside one transaction, reads are that one's
        self.erased = False  # inside one transaction: something was erased, to scrub after it commits
        self._server = self.dialect.wal_position_sql is not None  # a server, which may be unreachable
        if outer is None:  # once, not again for each box inside: inside its open transaction, a scrub waits on it
            heal(self.engine)  # R31: a deletion whose scrub a killed process never finished

    def close(self) -> None:
        """The database's connections closed (a SQLite log checkpointed): for a command that ends."""
        if self.standby is not None:
            self.standby.close()
        self.engine.dispose()

    @classmethod
    def at(cls, url: str | None = None, *, existing: bool = False, read: str | None = None) -> Database:
        """The database at `url` (default: the configured one), its schema brought up to date (database.make_engine)."""
        engine, standby = _opened(url, existing=existing, read=read)
        return cls(engine, standby=standby)

    # One transaction for several use cases

    @property
    def in_one_transaction(self) -> bool:
        """Whether every use case joins one transaction (a sandbox or all_or_nothing)."""
        return self.outer is not None

    @contextmanager
    def one_transaction(self, *, commit: bool) -> Iterator[Database]:
        """A database whose use cases all run in one transaction, rolled back or (`commit`) committed (R31)."""
        with self._placed(lambda _: _own_session(self._writer, commit=commit), write=True, fresh=False) as s:
            inner = Database(self.engine, outer=s)
            yield inner
        if commit and inner.erased:
            self._scrub()

    def one_load_at_a_time(self) -> AbstractContextManager[None]:
        """Around a load into an empty database, so two loads into one run one after the other."""
        return self.dialect.one_load_at_a_time(self.engine)

    # The one way into a use case's transaction

    def transaction(self, *, write: bool = True, fresh: bool = False) -> AbstractContextManager[Tx]:
        """A use case's transaction on the ORM."""
        return self._placed(lambda engine: self._session(engine, write=write), write=write, fresh=fresh)

    def driver(
        self, *, write: bool = True, fresh: bool = False, serializable: bool = False, one_statement: bool = False
    ) -> AbstractContextManager[Db]:
        """A use case's transaction on the driver (the turn path, driver.py), as `transaction`."""
        if one_statement:  # a turn's read counts against its budget (R21) and keeps its trace: a write, on the primary
            return self._placed(statement_driver, write=True, fresh=False)
        return self._placed(
            lambda engine: self._driver(engine, write=write, serializable=serializable), write=write, fresh=fresh
        )

    @property
    def one_statement_reads(self) -> bool:
        """Whether a turn-level read may be one autocommitted statement here (PostgreSQL, outside one transaction)."""
        return self.outer is None and self.dialect.one_statement_reads

    @contextmanager
    def _session(self, engine: Engine, *, write: bool) -> Iterator[Session]:
        if self.outer is not None:
            with self.outer.begin_nested() if write else nullcontext():  # a refusal rolls back this use case only
                yield self.outer
            return
        with _own_session(self._writer if write else engine, commit=write) as s:
            yield s

    @contextmanager
    def _driver(self, engine: Engine, *, write: bool, serializable: bool) -> Iterator[Driver]:
        if self.outer is not None:
            with self.outer.begin_nested() if write else nullcontext(), driver_of(self.outer) as db:
                yield db
            if write:
                self.outer.expire_all()  # rows changed under the session's objects
            return
        with driver_connection(engine) as dbapi, closing(Driver(dbapi, self.dialect)) as db:
            try:
                if write:
                    self.dialect.begin(db.cur, serializable=serializable)
                yield db
                if write:
                    dbapi.commit()
            finally:
                dbapi.rollback()  # a read's, or what failed: no transaction left open (after a commit, nothing)

    # Where a transaction runs: the primary for writes, a standby's reads routed (standby.py)

    def _placed(
        self, opening: Callable[[Engine], AbstractContextManager[T]], *, write: bool, fresh: bool
    ) -> AbstractContextManager[T]:
        """A write on the primary (`_on_primary`); a read on the primary, or routed to the standby (`_routed`)."""
        if write:
            return self._on_primary(opening(self.engine)) if self._server else opening(self.engine)
        if self.standby is None:
            return opening(self.engine)
        return self._routed(opening, fresh=fresh)

    @contextmanager
    def _on_primary(self, opened: AbstractContextManager[T]) -> Iterator[T]:
        """A transaction on the primary."""
        ran = False
        try:
            with opened as got:
                if isinstance(got, Session):
                    got.connection()  # connect now: what fails here wrote nothing
                ran = True
                yield got
        except Exception as exc:
            if not lost(exc):
                raise
            if self.standby is not None:
                self.standby.lost(PRIMARY)
            raise E.PrimaryUnreachable(self.shown(), why(exc), cut=ran, standby=self._standby_shown()) from exc
        if self.standby is not None:
            self.standby.wrote()

    @contextmanager
    def _routed(
        self, opening: Callable[[Engine], AbstractContextManager[T]], *, fresh: bool, count: bool = True
    ) -> Iterator[T]:
        """A read on the server Standby.order names, else the other; one lost mid-read raises ServerLost."""
        standby = self.standby
        assert standby is not None
        failed: BaseException | None = None
        for which in standby.order(fresh=fresh):
            stack = ExitStack()
            try:
                got = stack.enter_context(opening(standby.engines[which]))
                if isinstance(got, Session):
                    got.connection()  # connect now: an unreachable server is passed over before the read runs
            except Exception as exc:
                stack.close()
                if not lost(exc):
                    raise
                standby.lost(which)
                failed = exc
                continue
            with stack:
                standby.failing[which] = False  # it answered
                standby.served[which] += count
                try:
                    yield got
                except Exception as exc:
                    if not lost(exc):
                        raise
                    standby.lost(which)
                    raise ServerLost(f"the {which} went away during a read: {why(exc)}") from exc
            return
        assert failed is not None
        raise E.NoServerReachable(self.shown(), standby.engine.url.render_as_string(), why(failed)) from failed

    # What follows a deletion (R31), and what the database is

    def scrub_after(self) -> bool | None:
        """R31, right after a deletion committed: its text leaves the files now or in the background (`bytes_gone`)."""
        if self.outer is None:
            return self._scrub()
        self.erased = True  # all_or_nothing scrubs once its one transaction commits
        return None

    def _scrub(self) -> bool:
        """A deletion committed: its text out of the files (after_erasure); the standby's replay of it waited for."""
        if self.standby is not None:
            self.standby.scrub_seen = True  # erasure_status waits for the standby to replay it
        return after_erasure(self.engine)

    def finish_erasure(self, timeout: float | None = None) -> Obj:
        """Wait for the background scrub (R31) and a standby's replay of it (0.0: no wait), then say where it stands."""
        finisher(self.engine).wait(timeout)
        return self._with_standby(erasure_status(self.engine), timeout)

    def _with_standby(self, status: Obj, wait: float | None) -> Obj:
        """R31 on the standby: whether it replayed what the primary held once scrubbed (waiting up to `wait`)."""
        standby = self.standby
        if standby is None:
            return status
        if status["pending"] or status["scrubbing"]:
            standby.scrub_seen = True
        if not status["bytes_gone"]:
            return {**status, "standby_bytes_gone": False}
        replayed = standby.replayed_everything(wait if standby.scrub_seen else 0.0)
        if replayed:
            standby.scrub_seen = False
        return {**status, "standby_bytes_gone": None if replayed is None else replayed or not standby.scrub_seen}

    def version(self) -> str | None:
        """A token of what memory holds, new at every commit (database.memory_version); None inside one transaction."""
        if self.outer is not None:
            return None
        if self.standby is None:
            return memory_version(self.engine)
        with self._routed(lambda engine: nullcontext(memory_version(engine)), fresh=False, count=False) as version:
            return version

    def reads(self) -> Obj:
        """Where reads come from: the standby (None: none), which server was unreachable, how many reads each served."""
        sb = self.standby
        return {
            "standby": self._standby_shown(),
            "primary_down": sb is not None and sb.failing[PRIMARY],
            "standby_down": sb is not None and sb.failing[STANDBY],
            "served": dict(sb.served) if sb is not None else {"primary": 0, "standby": 0},
        }

    def shown(self) -> str:
        """The database's address as a person may read it (no password)."""
        return self.engine.url.render_as_string()  # the password hidden

    def _standby_shown(self) -> str | None:
        return self.standby.engine.url.render_as_string() if self.standby else None


@contextmanager
def _own_session(bind: Engine, *, commit: bool) -> Iterator[Session]:
    """A session of its own, committed at the end if `commit` (else rolled back as it closes)."""
    with Session(bind, expire_on_commit=False) as s:
        yield s
        if commit:
            s.commit()


def _opened(url: str | None, *, existing: bool, read: str | None) -> tuple[Engine, Standby | None]:
    """The engine at `url` (default: the configured one) and its standby: `read`, or MEMORY_READ_DATABASE_URL."""
    if read is None and (url is None or url == database_url()):
        read = os.environ.get("MEMORY_READ_DATABASE_URL") or None
    if read is None:
        return make_engine(url, existing=existing), None
    try:
        engine = make_engine(url, existing=existing)
    except Exception as exc:
        if not lost(exc):
            raise
        engine = make_engine(url, create=False)  # the primary is down: its reads come from the standby
    if dialect_of(engine).wal_position_sql is None:
        raise DatabaseUnusable(shown(read), "a standby serves reads of a PostgreSQL primary only")
    reader = make_engine(read, create=False)
    if dialect_of(reader).replayed_sql is None:
        raise DatabaseUnusable(shown(read), "a standby must be a PostgreSQL server (a hot standby of the primary)")
    return engine, Standby(engine, reader)
