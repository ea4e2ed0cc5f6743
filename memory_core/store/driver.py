"""SQL on the database driver, inside the caller's transaction: the hot use cases' statements.

Graph reads, recording evidence and teaching run a handful of fixed statements each. Through
the ORM, or even SQLAlchemy Core, each statement cost several times its own SQL (issue #8,
B1 and B2, profiled), so they run here on the DB-API connection. SQL is written once with
`:name` parameters (sqlite3's style), turned into `%(name)s` for psycopg; JSON values are
passed as text (cast to JSON on PostgreSQL). The schema is still the models' (models.py) and
the migrations'; nothing here creates or alters a table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlmodel import Session

Obj = dict[str, Any]

#: Parameters that carry JSON text; PostgreSQL is told their type.
JSON_PARAMS = ("claims", "aliases", "skipped", "map")
_PARAM = re.compile(r"(?<![:\w]):(\w+)")
_PG_SQL: dict[str, str] = {}


def for_driver(sql: str, postgres: bool) -> str:
    """`:name` parameters as the driver wants them: sqlite3 takes them; psycopg wants `%(name)s`."""
    if not postgres:
        return sql
    out = _PG_SQL.get(sql)
    if out is None:
        out = _PARAM.sub(r"%(\1)s", sql.replace("%", "%%"))
        for name in JSON_PARAMS:
            out = out.replace(f"%({name})s", f"CAST(%({name})s AS JSON)")
        _PG_SQL[sql] = out
    return out


def json_value(value: Any) -> Any:
    """A JSON column's value: PostgreSQL's driver decodes it, SQLite gives the text."""
    return json.loads(value) if isinstance(value, str) else value


def in_list(prefix: str, values: Iterable[Any], params: Obj) -> str:
    """`:p0, :p1, …` for an IN list, the values added to `params`."""
    names = []
    for i, v in enumerate(values):
        params[f"{prefix}{i}"] = v
        names.append(f":{prefix}{i}")
    return ", ".join(names)


#: PostgreSQL: the turn's row is locked from the first statement, so a use case that ends, cancels or
#: erases the turn concurrently waits, and this one's checks stay true until it commits (SQLite's
#: BEGIN IMMEDIATE already serializes writers).
LOCK_TURN = " FOR NO KEY UPDATE OF t"


class Driver:
    """A DB-API connection inside a transaction (one cursor), with the calls the use cases make."""

    def __init__(self, dbapi: Any, postgres: bool) -> None:
        self.postgres = postgres
        self.cur = dbapi.cursor()

    def rows(self, sql: str, params: Obj) -> list[tuple[Any, ...]]:
        self.cur.execute(for_driver(sql, self.postgres), params)
        return list(self.cur.fetchall())

    def turn(self, sql: str, turn_id: str) -> list[tuple[Any, ...]]:
        """The turn's row (and its run's), locked until commit on PostgreSQL."""
        return self.rows(sql + LOCK_TURN if self.postgres else sql, {"t": turn_id})

    def change(self, sql: str, params: Obj) -> int:
        self.cur.execute(for_driver(sql, self.postgres), params)
        return int(self.cur.rowcount)

    def many(self, sql: str, rows: list[Obj]) -> None:
        if rows:
            self.cur.executemany(for_driver(sql, self.postgres), rows)

    def new_ids(self, table: str, n: int) -> list[int]:
        """Ids for `n` new rows of `table`, in order. SQLite numbers after the largest id, as it
        would itself (the write lock is held since BEGIN IMMEDIATE); PostgreSQL takes them from
        the table's sequence."""
        if n == 0:
            return []
        if self.postgres:
            seq = f"pg_get_serial_sequence('{table}', 'id')"
            return [r[0] for r in self.rows(f"SELECT nextval({seq}) FROM generate_series(1, :n)", {"n": n})]
        start = int(self.rows(f"SELECT coalesce(max(id), 0) FROM {table}", {})[0][0]) + 1
        return list(range(start, start + n))

    def close(self) -> None:
        self.cur.close()


@contextmanager
def driver_of(s: Session) -> Iterator[Driver]:
    """The driver under an ORM session's transaction, its pending objects written first."""
    s.flush()
    db = Driver(s.connection().connection.dbapi_connection, s.get_bind().dialect.name == "postgresql")
    try:
        yield db
    finally:
        db.close()
