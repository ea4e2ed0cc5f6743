"""Engines and schema. `MEMORY_DATABASE_URL` picks the database; by default a SQLite file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.pool import StaticPool
from sqlmodel import SQLModel, create_engine

from . import models  # noqa: F401  (registers every table)

DEFAULT_URL = "sqlite:///.memory/memory.db"
MEMORY_URL = "sqlite://"


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
    cur.close()


def make_engine(url: str | None = None, *, create: bool = True) -> Engine:
    """An engine for `url` (default: `database_url()`), with the schema created when asked."""
    url = url or database_url()
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        else:
            engine = create_engine("sqlite://", connect_args={"check_same_thread": False}, poolclass=StaticPool)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN"))
    else:
        engine = create_engine(url, pool_pre_ping=True)
    if create:
        SQLModel.metadata.create_all(engine)
    return engine


def checkpoint(engine: Engine) -> None:
    """Fold SQLite's write-ahead log into the database file and empty it (R31)."""
    if engine.dialect.name != "sqlite":
        return
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
