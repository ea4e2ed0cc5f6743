"""Bulk writes for the generator: rows streamed to the database in chunks, in foreign-key order."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, insert, update
from sqlalchemy.engine import Engine

from .dialect import dialect_of
from .models import (
    Dispute,
    Entity,
    Fact,
    MapCount,
    MapLog,
    Membership,
    Organization,
    Person,
    Record,
    Run,
    Support,
    Turn,
    UsedId,
)

CHUNK = 5000


ORDER = (Organization, Person, Membership, Run, UsedId, Turn, Record, Entity, Fact, Support, Dispute, MapCount, MapLog)
#: The tables the generator names, by name.
BY_NAME: dict[str, Any] = {m.__table__.name: m for m in ORDER}  # type: ignore[attr-defined,union-attr]


class Sink:
    """Streams rows to the database in chunks; a flush writes every table in foreign-key order."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.rows: dict[Any, list[dict[str, Any]]] = {t: [] for t in ORDER}

    def put(self, table: str, row: dict[str, Any]) -> None:
        """A row of the table of that name (a model's table name: "fact", "support", ...)."""
        model = BY_NAME[table]
        self.rows[model].append(row)
        if len(self.rows[model]) >= CHUNK:
            self.write()

    def write(self) -> None:
        with self.engine.begin() as conn:
            for t in ORDER:
                if self.rows[t]:
                    conn.execute(insert(t.__table__), self.rows[t])  # type: ignore[union-attr]
                    self.rows[t] = []


def update_by_id(engine: Engine, table: str, id_key: str, rows: list[dict[str, Any]]) -> None:
    """Set columns of many rows by id, in chunks (the final weights, the map's counts)."""
    if not rows:
        return
    t = BY_NAME[table].__table__
    values: dict[str, Any] = {k: bindparam(k) for k in rows[0] if k != id_key}
    stmt = update(t).where(t.c.id == bindparam(id_key)).values(values)
    with engine.begin() as conn:
        for i in range(0, len(rows), CHUNK):
            conn.execute(stmt, rows[i : i + CHUNK])


def after_bulk_load(engine: Engine) -> None:
    """After the rows were written with ids of their own: Dialect.after_bulk_load (PostgreSQL's
    id sequences continue after them, and its planner learns the tables' new sizes)."""
    dialect_of(engine).after_bulk_load(engine)
