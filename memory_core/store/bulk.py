"""Bulk writes for the generator (rows streamed in chunks, in foreign-key order); ids kept as keyed digests (R29, R33)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from contextlib import closing
from typing import Any

from sqlalchemy import bindparam, insert, update
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from . import models  # noqa: F401  (registers every table)
from .dialect import dialect_of
from .driver import Driver
from .words import index_all

CHUNK = 5000
#: The tables the generator writes, by name, in foreign-key order (the models' metadata sorts them).
WRITTEN = {"organization", "person", "membership", "run", "usedid", "turn", "record", "entity", "fact", "support"}
TABLES = {t.name: t for t in SQLModel.metadata.sorted_tables if t.name in WRITTEN | {"dispute", "mapcount", "maplog"}}


class Sink:
    """Streams rows to the database in chunks; a flush writes every table in foreign-key order."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}

    def put(self, table: str, row: dict[str, Any]) -> None:
        """A row of the table of that name ("fact", "support", ...); a column it leaves out takes its default."""
        self.rows[table].append(row)
        if len(self.rows[table]) >= CHUNK:
            self.write()

    def write(self) -> None:
        with self.engine.begin() as conn:
            for name, table in TABLES.items():
                if self.rows[name]:
                    conn.execute(insert(table), self.rows[name])
                    self.rows[name] = []


def update_by_id(engine: Engine, table: str, id_key: str, rows: list[dict[str, Any]]) -> None:
    """Set columns of many rows by id, in chunks (the final weights, the map's counts)."""
    if not rows:
        return
    t = TABLES[table]
    values: dict[str, Any] = {k: bindparam(k) for k in rows[0] if k != id_key}
    stmt = update(t).where(t.c.id == bindparam(id_key)).values(values)
    with engine.begin() as conn:
        for i in range(0, len(rows), CHUNK):
            conn.execute(stmt, rows[i : i + CHUNK])


def after_bulk_load(engine: Engine) -> None:
    """After the rows were written with ids of their own: the word index, then Dialect.after_bulk_load."""
    with engine.begin() as conn:
        index_all(conn)  # the word index of the entities written (GraphResolve by words)
    dialect_of(engine).after_bulk_load(engine)


# --- ids taken for good (`duplicate_id`, issue #26): `usedid` keeps each as a digest under the database's key


def digest(key: str, kind: str, ident: str) -> str:
    """What `usedid` keeps of an id: HMAC-SHA256 of kind and id under the database's key, in hex."""
    return hmac.new(bytes.fromhex(key), f"{kind}\x00{ident}".encode(), hashlib.sha256).hexdigest()


def key_of(db: Driver) -> str:
    """The database's key, made (a random 256 bits) the first time one is asked for."""
    hit = db.rows("SELECT key FROM idkey WHERE id = 1", {})
    if not hit:  # a concurrent first use: one key wins
        db.change(
            "INSERT INTO idkey (id, key) VALUES (1, :k) ON CONFLICT (id) DO NOTHING", {"k": secrets.token_hex(32)}
        )
        hit = db.rows("SELECT key FROM idkey WHERE id = 1", {})
    return str(hit[0][0])


def key_for(engine: Engine) -> str:
    """The database's key, in a transaction of its own (for writers that bypass the use cases: the generator)."""
    with engine.begin() as conn, closing(Driver(conn.connection.dbapi_connection, dialect_of(engine))) as db:
        return key_of(db)
