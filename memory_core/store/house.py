"""The one door to one database, as the use cases share it: its engine, its transactions, and what
follows a deletion. Use cases hold a House and take their transactions from it; they pass each
transaction on to typed store functions and never see the engine, a session's methods or SQL.

With `box`, every transaction is a savepoint of the box's one (a sandbox, or an all-or-nothing
replay), and a deletion's scrub waits until the box commits.

With a standby (MEMORY_READ_DATABASE_URL, standby.py), `read` and `peek` outside a box read from it
once it has replayed this process's writes; every write, and every read inside a turn (`driver_tx`,
`statement`: a turn's reads count against its budget), goes to the primary. A primary that cannot
be reached makes a write raise PrimaryUnreachable, a sentence (docs/scaling.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import TypeVar

from .. import errors as E
from ..plain import Obj
from .database import DatabaseUnusable, Engine, database_url, make_engine, memory_version, shown
from .dialect import dialect_of
from .erasure import after_erasure, erasure_status, finisher, heal
from .standby import PRIMARY, STANDBY, ServerLost, Standby, lost, read_database_url, why
from .transactions import Db, Transactions, Tx

__all__ = ["Db", "Engine", "House", "Tx"]

T = TypeVar("T")


class House:
    """One database's door: transactions for use cases (`tx`, `read`, `driver_tx`, `peek`), the box
    several use cases share, and the erasure that follows a deletion (R31)."""

    def __init__(self, engine: Engine | None = None, *, box: Tx | None = None, standby: Standby | None = None) -> None:
        if engine is None:
            engine, standby = _opened(None, existing=False, read=None)
        self.engine = engine
        self._store = Transactions(self.engine, box)
        self.standby = standby if box is None else None  # a box's reads are its transaction's
        self._reader = Transactions(self.standby.engine) if self.standby is not None else None
        self.erased = False  # inside one box: something was erased, to scrub after it commits
        self._server = dialect_of(engine).wal_position_sql is not None  # a server, which may be unreachable
        heal(self.engine)  # R31: a deletion whose scrub a killed process never finished

    def close(self) -> None:
        """The house's connections closed (a SQLite log checkpointed): for a command that ends."""
        if self.standby is not None:
            self.standby.close()
            self.standby.engine.dispose()
        self.engine.dispose()

    @classmethod
    def at(cls, url: str | None = None, *, existing: bool = False, read: str | None = None) -> House:
        """The house of the database at `url` (default: the configured one), its schema brought up to
        date (database.make_engine; with `existing`, the database must be there already). `read`:
        its hot standby, for reads (default: MEMORY_READ_DATABASE_URL, for the configured database)."""
        engine, standby = _opened(url, existing=existing, read=read)
        return cls(engine, standby=standby)

    # The box

    @property
    def boxed(self) -> bool:
        """Whether every use case joins one box's transaction (a sandbox or all_or_nothing)."""
        return self._store.box is not None

    @contextmanager
    def box(self, *, commit: bool) -> Iterator[House]:
        """A house whose use cases all happen in one transaction: rolled back at the end, or (commit)
        committed when the block ends and rolled back by any error in it (Transactions.boxed).
        What a committed box erased leaves the files when it commits (R31)."""
        opened = self._store.boxed(commit=commit)
        with self._writing(opened) if self._server else opened as s:
            inner = House(self.engine, box=s)
            yield inner
        if commit and inner.erased:
            self._erased()
            after_erasure(self.engine)

    def one_load_at_a_time(self) -> AbstractContextManager[None]:
        """Around a load into an empty database, so two loads into one run one after the other (the
        second then finds memory there): Dialect.one_load_at_a_time."""
        return dialect_of(self.engine).one_load_at_a_time(self.engine)

    # Transactions

    def tx(self) -> AbstractContextManager[Tx]:
        """One use case's transaction on the ORM: committed at the end, rolled back by any error."""
        return self._writing(self._store.tx()) if self._server else self._store.tx()

    def read(self, *, fresh: bool = False) -> AbstractContextManager[Tx]:
        """A read-only use case: never takes a write lock. With a standby it reads there once the
        standby has replayed this process's writes (standby.py); `fresh`: from the primary (a read
        that a write of the same use case follows), the standby only when the primary is down."""
        if self.standby is None:
            return self._store.read()
        return self._routed(lambda store: store.read(), fresh=fresh)

    def driver_tx(self, *, serializable: bool = False) -> AbstractContextManager[Db]:
        """One use case's transaction on the driver (Transactions.driver_tx)."""
        opened = self._store.driver_tx(serializable=serializable)
        return self._writing(opened) if self._server else opened

    def peek(self, *, fresh: bool = False) -> AbstractContextManager[Db]:
        """A driver for a small read, rolled back at the end (the MCP server's token check); routed as
        `read` is."""
        if self.standby is None:
            return self._store.peek()
        return self._routed(lambda store: store.peek(), fresh=fresh)

    @property
    def one_statement_reads(self) -> bool:
        """Whether a turn-level read may be one autocommitted statement here (PostgreSQL, outside a
        box): Dialect.one_statement_reads."""
        return not self.boxed and self._store.dialect.one_statement_reads

    def statement(self) -> AbstractContextManager[Db]:
        """A driver for one autocommitted statement (only where `one_statement_reads`): a turn's read,
        which counts against its budget, so on the primary."""
        return self._writing(self._store.statement()) if self._server else self._store.statement()

    # Where a transaction runs: the primary for writes, a standby's reads routed (standby.py)

    @contextmanager
    def _writing(self, opened: AbstractContextManager[T]) -> Iterator[T]:
        """A transaction on the primary. A primary that cannot be reached raises PrimaryUnreachable, a
        sentence; a write that committed is noted, so this process's next read sees it."""
        ran = False
        try:
            with opened as got:
                if isinstance(got, Tx):
                    got.connection()  # connect now: what fails here wrote nothing
                ran = True
                yield got
        except Exception as exc:
            if not lost(exc):
                raise
            if self.standby is not None:
                self.standby.lost(PRIMARY)
            standby = shown(self.standby.engine.url.render_as_string(hide_password=False)) if self.standby else None
            raise E.PrimaryUnreachable(self.shown(), why(exc), cut=ran, standby=standby) from exc
        if self.standby is not None:
            self.standby.reached(PRIMARY)
            self.standby.wrote()

    @contextmanager
    def _routed(self, opening: Callable[[Transactions], AbstractContextManager[T]], *, fresh: bool) -> Iterator[T]:
        """A read on the server the standby's bookkeeping names (Standby.order), or on the other one
        if that one cannot be reached; a server lost mid-read makes the use case run again (ServerLost,
        retried as a conflict). Neither reachable: NoServerReachable."""
        standby, reader = self.standby, self._reader
        assert standby is not None and reader is not None
        failed: BaseException | None = None
        for which in standby.order(fresh=fresh):
            stack = ExitStack()
            try:
                got = stack.enter_context(opening(self._store if which == PRIMARY else reader))
                if isinstance(got, Tx):
                    got.connection()  # connect now: an unreachable server is passed over before the read runs
            except Exception as exc:
                stack.close()
                if not lost(exc):
                    raise
                standby.lost(which)
                failed = exc
                continue
            with stack:
                standby.reached(which)
                standby.served[which] += 1
                try:
                    yield got
                except Exception as exc:
                    if not lost(exc):
                        raise
                    standby.lost(which)
                    raise ServerLost(f"the {which} went away during a read: {why(exc)}") from exc
            return
        assert failed is not None
        other = shown(standby.engine.url.render_as_string(hide_password=False))
        raise E.NoServerReachable(self.shown(), other, why(failed)) from failed

    # What follows a deletion (R31), and what the database is

    def scrub_after(self) -> bool | None:
        """R31, right after a deletion committed: its text leaves the files now (SQLite's checkpoint)
        or in the background (PostgreSQL's rewrite, or a SQLite log a reader holds); the outcome
        says which (`bytes_gone`, None inside a box), and `erasure_status` says when it is done."""
        if not self.boxed:
            self._erased()
            return after_erasure(self.engine)
        self.erased = True  # all_or_nothing scrubs once its one transaction commits
        return None

    def _erased(self) -> None:
        if self.standby is not None:
            self.standby.scrub_seen = True  # erasure_status waits for the standby to replay it

    def erasure_status(self) -> Obj:
        """R31: whether every deletion's text is out of the database files yet; with a standby, also
        whether the standby has replayed the scrub (`standby_bytes_gone`; None: it cannot be asked)."""
        return self._with_standby(erasure_status(self.engine), 0.0)

    def finish_erasure(self, timeout: float | None = None) -> Obj:
        """Wait for the background scrub of deletions (R31), and for a standby to replay it while it
        can be reached, then say where it stands."""
        finisher(self.engine).wait(timeout)
        return self._with_standby(erasure_status(self.engine), timeout)

    def _with_standby(self, status: Obj, wait: float | None) -> Obj:
        """The standby's part of R31: after a deletion this process made or saw pending, whether the
        standby has replayed all the primary held once its scrub was done (waiting up to `wait`);
        with none known, only whether it can be asked (a standby merely behind says nothing of
        erasure). None: the primary or the standby cannot be asked."""
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
        """A token of what memory holds that changes whenever a change commits (database.memory_version); None
        inside a box, where nothing should be kept under it. With a standby, the version of the server
        reads go to now (a page keeps what it read under the version of where it read it)."""
        if self.boxed:
            return None
        if self.standby is None:
            return memory_version(self.engine)
        failed: BaseException | None = None
        for which in self.standby.order():
            try:
                version = memory_version(self.standby.engines[which])
                self.standby.reached(which)
                return version
            except Exception as exc:
                if not lost(exc):
                    raise
                self.standby.lost(which)
                failed = exc
        assert failed is not None
        other = shown(self.standby.engine.url.render_as_string(hide_password=False))
        raise E.NoServerReachable(self.shown(), other, why(failed)) from failed

    def reads(self) -> Obj:
        """Where reads come from: the standby's address (None: there is none), whether the primary
        and the standby could not be reached when last tried, and how many reads each served."""
        if self.standby is None:
            return {
                "standby": None,
                "primary_down": False,
                "standby_down": False,
                "served": {"primary": 0, "standby": 0},
            }
        sb = self.standby
        return {
            "standby": shown(sb.engine.url.render_as_string(hide_password=False)),
            "primary_down": sb.unreachable(PRIMARY),
            "standby_down": sb.unreachable(STANDBY),
            "served": dict(sb.served),
        }

    def shown(self) -> str:
        """The database's address as a person may read it (no password)."""
        return shown(self.engine.url.render_as_string(hide_password=False))


def _opened(url: str | None, *, existing: bool, read: str | None) -> tuple[Engine, Standby | None]:
    """The engine of the database at `url` (default: the configured one) and, where it has one, its
    standby: `read`, or MEMORY_READ_DATABASE_URL for the configured database. With a standby, a
    primary that cannot be reached is opened without its schema checked, so reads still work."""
    if read is None and (url is None or url == database_url()):
        read = read_database_url()
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
