"""The one door to one database, as the use cases share it: its engine, its transactions, and what
follows a deletion. Use cases hold a House and take their transactions from it; they pass each
transaction on to typed store functions and never see the engine, a session's methods or SQL.

With `box`, every transaction is a savepoint of the box's one (a sandbox, or an all-or-nothing
replay), and a deletion's scrub waits until the box commits.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from ..plain import Obj
from .database import Engine, make_engine, memory_version, shown
from .dialect import dialect_of
from .erasure import after_erasure, erasure_status, finisher, heal
from .transactions import Db, Transactions, Tx

__all__ = ["Db", "Engine", "House", "Tx"]


class House:
    """One database's door: transactions for use cases (`tx`, `read`, `driver_tx`, `peek`), the box
    several use cases share, and the erasure that follows a deletion (R31)."""

    def __init__(self, engine: Engine | None = None, *, box: Tx | None = None) -> None:
        self.engine = engine if engine is not None else make_engine()
        self._store = Transactions(self.engine, box)
        self.erased = False  # inside one box: something was erased, to scrub after it commits
        heal(self.engine)  # R31: a deletion whose scrub a killed process never finished

    @classmethod
    def at(cls, url: str | None = None, *, existing: bool = False) -> House:
        """The house of the database at `url` (default: the configured one), its schema brought up to
        date (database.make_engine; with `existing`, the database must be there already)."""
        return cls(make_engine(url, existing=existing))

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
        with self._store.boxed(commit=commit) as s:
            inner = House(self.engine, box=s)
            yield inner
        if commit and inner.erased:
            after_erasure(self.engine)

    def one_load_at_a_time(self) -> AbstractContextManager[None]:
        """Around a load into an empty database, so two loads into one run one after the other (the
        second then finds memory there): Dialect.one_load_at_a_time."""
        return dialect_of(self.engine).one_load_at_a_time(self.engine)

    # Transactions

    def tx(self) -> AbstractContextManager[Tx]:
        """One use case's transaction on the ORM: committed at the end, rolled back by any error."""
        return self._store.tx()

    def read(self) -> AbstractContextManager[Tx]:
        """A read-only use case: never takes a write lock."""
        return self._store.read()

    def driver_tx(self, *, serializable: bool = False) -> AbstractContextManager[Db]:
        """One use case's transaction on the driver (Transactions.driver_tx)."""
        return self._store.driver_tx(serializable=serializable)

    def peek(self) -> AbstractContextManager[Db]:
        """A driver for a small read, rolled back at the end (the MCP server's token check)."""
        return self._store.peek()

    @property
    def one_statement_reads(self) -> bool:
        """Whether a turn-level read may be one autocommitted statement here (PostgreSQL, outside a
        box): Dialect.one_statement_reads."""
        return not self.boxed and self._store.dialect.one_statement_reads

    def statement(self) -> AbstractContextManager[Db]:
        """A driver for one autocommitted statement (only where `one_statement_reads`)."""
        return self._store.statement()

    # What follows a deletion (R31), and what the database is

    def scrub_after(self) -> bool | None:
        """R31, right after a deletion committed: its text leaves the files now (SQLite's checkpoint)
        or in the background (PostgreSQL's rewrite, or a SQLite log a reader holds); the outcome
        says which (`bytes_gone`, None inside a box), and `erasure_status` says when it is done."""
        if not self.boxed:
            return after_erasure(self.engine)
        self.erased = True  # all_or_nothing scrubs once its one transaction commits
        return None

    def erasure_status(self) -> Obj:
        """R31: whether every deletion's text is out of the database files yet."""
        return erasure_status(self.engine)

    def finish_erasure(self, timeout: float | None = None) -> Obj:
        """Wait for the background scrub of deletions (R31), then say where it stands."""
        finisher(self.engine).wait(timeout)
        return erasure_status(self.engine)

    def version(self) -> str | None:
        """A token of what memory holds that changes whenever a change commits (database.memory_version); None
        inside a box, where nothing should be kept under it."""
        return None if self.boxed else memory_version(self.engine)

    def shown(self) -> str:
        """The database's address as a person may read it (no password)."""
        return shown(self.engine.url.render_as_string(hide_password=False))
