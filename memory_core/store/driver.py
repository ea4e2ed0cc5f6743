"""SQL on the database driver, inside the caller's transaction: the hot use cases' statements."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import Any

from sqlmodel import Session

from ..plain import Obj
from .dialect import Dialect, dialect_of


def json_value(value: Any) -> Any:
    """A JSON column's value: PostgreSQL's driver decodes it, SQLite gives the text."""
    return json.loads(value) if isinstance(value, str) else value


# --- statements from the models' tables ----------------------------------------------------------

#: Column names the statements quote: reserved words (`key` in SQLite, `by` in both).
_QUOTED = {"key", "by"}


def column_names(table: Any) -> list[str]:
    """A table's columns, in the models' order (models.py)."""
    return [c.name for c in table.columns]


def columns(table: Any, alias: str | None = None) -> str:
    """A table's column list for a SELECT or an INSERT, each column of `alias` if given."""
    names = (f'"{n}"' if n in _QUOTED else n for n in column_names(table))
    return ", ".join(f"{alias}.{n}" if alias else n for n in names)


def defaults_of(model: Any, *, but: tuple[str, ...]) -> Obj:
    """A model's defaults for a new row (models.py, the one place they are written), but the columns named."""
    return {name: f.get_default(call_default_factory=True) for name, f in model.model_fields.items() if name not in but}


def insert(table: Any, defaults: Obj | None = None) -> str:
    """An INSERT of every column of `table`: a `:column` parameter each, but `defaults` written as SQL literals."""
    values = []
    for c in table.columns:
        if defaults is None or c.name not in defaults:
            values.append(f":{c.name}")
            continue
        value = defaults[c.name]
        if value is None:
            values.append("NULL")
            continue
        if isinstance(value, list | dict):
            value = json.dumps(value)
        values.append(str(int(value)) if isinstance(value, bool | int) else "'" + str(value).replace("'", "''") + "'")
    return f"INSERT INTO {table.name} ({columns(table)}) VALUES ({', '.join(values)})"


class Driver:
    """A DB-API connection inside a transaction (one cursor), with the calls the use cases make."""

    def __init__(self, dbapi: Any, dialect: Dialect) -> None:
        self.dialect = dialect
        self.sql = dialect.for_driver
        self.json = dialect.json
        self.cur = dbapi.cursor()

    def rows(self, sql: str, params: Obj) -> list[tuple[Any, ...]]:
        self.cur.execute(self.sql(sql), params)
        return list(self.cur.fetchall())

    def change(self, sql: str, params: Obj) -> int:
        self.cur.execute(self.sql(sql), params)
        return int(self.cur.rowcount)

    def many(self, sql: str, rows: list[Obj]) -> None:
        if rows:
            self.cur.executemany(self.sql(sql), rows)

    def new_ids(self, table: str, n: int) -> list[int]:
        """Ids for `n` new rows of `table`, in order (Dialect.new_ids)."""
        return self.dialect.new_ids(self.rows, table, n) if n else []

    def close(self) -> None:
        self.cur.close()


@contextmanager
def driver_of(s: Session | Driver) -> Iterator[Driver]:
    """The driver of a use case's transaction: itself, or the one under an ORM session's (flushed first)."""
    if isinstance(s, Driver):
        yield s
        return
    s.flush()
    dbapi = s.connection().connection.dbapi_connection
    with closing(Driver(dbapi, dialect_of(s.get_bind()))) as db:  # type: ignore[arg-type]
        yield db
