"""The one door to a database for the use cases: their transactions, on the ORM or on the driver.

A use case runs in exactly one of these; inside a box (`boxed`: a sandbox or an all-or-nothing
replay) each use case is a savepoint of the box's one transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from sqlalchemy.engine import Engine
from sqlmodel import Session

from .database import driver_connection, statement_driver, writer
from .driver import Driver

#: The unit of work a use case's transaction hands it (rows are read, added and changed through it).
Tx = Session


class Transactions:
    """One database's transactions; with `box`, every transaction is a savepoint of the box's."""

    def __init__(self, engine: Engine, box: Session | None = None) -> None:
        self.engine = engine
        self.write = writer(engine)
        self.box = box

    @property
    def postgresql(self) -> bool:
        return self.engine.dialect.name == "postgresql"

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
        any error or refusal. SQLite takes the write lock up front (BEGIN IMMEDIATE); PostgreSQL
        runs it READ COMMITTED, the guarded UPDATE keeping the count right."""
        pg = self.postgresql
        if self.box is not None:
            with self.box.begin_nested():
                db = Driver(self.box.connection().connection.dbapi_connection, pg)
                try:
                    yield db
                finally:
                    db.close()
            self.box.expire_all()  # rows changed under the session's objects
            return
        with driver_connection(self.engine) as dbapi:
            db = Driver(dbapi, pg)
            try:
                if not pg:
                    db.cur.execute("BEGIN IMMEDIATE")
                elif serializable:  # as the ORM's writers (database.writer): concurrent teachers lose nothing
                    db.cur.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                yield db
            except BaseException:
                db.close()
                dbapi.rollback()
                raise
            db.close()
            dbapi.commit()

    def statement(self) -> AbstractContextManager[Driver]:
        """A driver for one autocommitted statement (PostgreSQL's one-statement read)."""
        return statement_driver(self.engine)

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


#: The advisory lock a load into a PostgreSQL database holds, so two loads into one empty
#: database run one after the other (the second then finds memory there).
LOAD_LOCK = 0x6D6C6F64


@contextmanager
def one_load_at_a_time(engine: Engine) -> Iterator[None]:
    """PostgreSQL: a session advisory lock on a connection of its own, held around the load's
    transaction (taken before the transaction's snapshot, so the load sees what a load before it
    committed). SQLite needs none: the load's transaction holds the write lock from its start."""
    if engine.dialect.name != "postgresql":
        yield
        return
    conn = engine.connect()
    try:
        conn.exec_driver_sql(f"SELECT pg_advisory_lock({LOAD_LOCK})")
        conn.commit()
        yield
    finally:
        try:
            conn.exec_driver_sql(f"SELECT pg_advisory_unlock({LOAD_LOCK})")
            conn.commit()
        except Exception:  # noqa: BLE001  (a lost connection has released its lock already)
            pass
        finally:
            conn.close()
