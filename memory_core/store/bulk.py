"""Bulk writes for the generator: rows streamed to the database in chunks, in foreign-key order."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, insert, update
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from . import models  # noqa: F401  (registers every table)
from .dialect import dialect_of
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
        """A row of the table of that name (a model's table name: "fact", "support", ...)."""
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
