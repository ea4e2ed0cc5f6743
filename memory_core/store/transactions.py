"""The one door to a database for the use cases: their transactions, on the ORM or on the driver.

A use case runs in exactly one of these; inside a box (`boxed`: a sandbox or an all-or-nothing
replay) each use case is a savepoint of the box's one transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from sqlalchemy.engine import Engine
from sqlmodel import Session

from .database import driver_connection, statement_driver
from .dialect import dialect_of
from .driver import Driver

#: The unit of work a use case's transaction hands it: the use case passes it to the store's functions.
Tx = Session
#: The same for a use case on the driver (driver.py).
Db = Driver


class Transactions:
    """One database's transactions; with `box`, every transaction is a savepoint of the box's."""

    def __init__(self, engine: Engine, box: Session | None = None) -> None:
        self.engine = engine
        self.dialect = dialect_of(engine)  # where the backends differ (dialect.py)
        self.write = self.dialect.writer(engine)
        self.box = box

    @contextmanager
    def tx(self) -> Iterator[Session]:
        """One use case's transaction: committed at the end, rolled back by any error or refusal."""
        if self.box is not None:
            with self.box.begin_nested():  # a refusal rolls back this use case only
                yield self.box
            return
        with Session(self.write, expire_on_commit=False) as s:
            yield s
            s.commit()

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only use case: never takes a write lock."""
        if self.box is not None:
            yield self.box
            return
        with Session(self.engine, expire_on_commit=False) as s:
            yield s

    @contextmanager
    def driver_tx(self, *, serializable: bool = False) -> Iterator[Driver]:
        """A driver use case's transaction on a kept connection: committed at the end, rolled back by
        any error or refusal. It begins as the dialect begins it (Dialect.begin: SQLite takes the
        write lock up front; PostgreSQL runs it READ COMMITTED, the guarded UPDATE keeping the count
        right, or `serializable` as the ORM's writers)."""
        dialect = self.dialect
        if self.box is not None:
            with self.box.begin_nested():
                db = Driver(self.box.connection().connection.dbapi_connection, dialect)
                try:
                    yield db
                finally:
                    db.close()
            self.box.expire_all()  # rows changed under the session's objects
            return
        with driver_connection(self.engine) as dbapi:
            db = Driver(dbapi, dialect)
            try:
                dialect.begin(db.cur, serializable=serializable)
                yield db
            except BaseException:
                db.close()
                dbapi.rollback()
                raise
            db.close()
            dbapi.commit()

    @contextmanager
    def peek(self) -> Iterator[Driver]:
        """A driver for a small read on a kept connection: no write lock, rolled back at the end (the
        token check the MCP server makes at every call)."""
        with driver_connection(self.engine) as dbapi:
            db = Driver(dbapi, self.dialect)
            try:
                yield db
            finally:
                db.close()
                dbapi.rollback()

    def statement(self) -> AbstractContextManager[Driver]:
        """A driver for one autocommitted statement (the one-statement read, where the dialect has it)."""
        return statement_driver(self.engine, self.dialect)

    @contextmanager
    def boxed(self, *, commit: bool) -> Iterator[Session]:
        """One transaction for several use cases: rolled back at the end (a sandbox), or committed
        when the block ends and rolled back by any error in it (all or nothing)."""
        with Session(self.write, expire_on_commit=False) as s:
            if not commit:
                try:
                    yield s
                finally:
                    s.rollback()
                return
            try:
                yield s
            except BaseException:
                s.rollback()
                raise
            s.commit()
