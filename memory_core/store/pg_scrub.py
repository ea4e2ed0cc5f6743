"""PostgreSQL's scrub after a deletion (R31): what was erased leaves the database's files and the planner's samples."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from . import models  # noqa: F401  (registers every table)

SCRUB_LOCK = 7_310_031  # a PostgreSQL advisory lock key: one scrub of a database at a time
SNAPSHOT_WAIT_S = 10.0  # how long a try waits for older transactions, as SQLite's checkpoint waits for readers
#: Whether VACUUM FULL may still copy a deleted row into its new files (R31): a transaction begun before `:now` runs
#: anywhere on the server (measured: one in another database kept a deleted row), or a session of this database holds
#: an older snapshot (a reader, an ANALYZE); an autovacuum VACUUM holds back nothing (left out of every horizon).
HELD_BACK = text(
    "SELECT pg_snapshot_xmin(pg_current_snapshot()) < CAST(CAST(:now AS text) AS xid8) OR EXISTS ("
    "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
    "AND backend_xmin IS NOT NULL AND age(backend_xmin) > age(CAST(CAST(:x AS text) AS xid)) "
    "AND NOT (backend_type = 'autovacuum worker' AND query LIKE 'autovacuum: VACUUM%' AND query NOT LIKE '%ANALYZE%'))"
)


def scrub(engine: Engine, top: int) -> bool:
    """Every table rewritten (VACUUM FULL) and analyzed, `pg_statistic` rewritten, a CHECKPOINT; markers to `top` gone (R31)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        # One scrub at a time, waited for by trying again: a session blocked in pg_advisory_lock holds the snapshot
        # its statement began with, which would hold back the very rewrite it waits for (HELD_BACK).
        while not conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": SCRUB_LOCK}).scalar():
            time.sleep(0.05)
        try:
            if not _rewrite(conn):
                return False
            if top:
                conn.execute(text("DELETE FROM scrubdue WHERE id <= :top"), {"top": top})
            try:
                conn.exec_driver_sql("CHECKPOINT")  # superuser or pg_checkpoint: else the server's own comes
            except Exception:  # noqa: BLE001
                conn.rollback()
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": SCRUB_LOCK})
    return True


def all_tables() -> list[str]:
    """Every table of memory: whatever a deletion touched, all of them are rewritten (R31)."""
    return [t.name for t in SQLModel.metadata.sorted_tables]


def _rewrite(conn: Any) -> bool:
    """Every table rewritten and analyzed, then `pg_statistic`; False when an older snapshot holds deleted rows back."""
    exists = text("SELECT to_regclass(:t) IS NOT NULL")
    tables = [t for t in all_tables() if conn.execute(exists, {"t": f'"{t}"'}).scalar()]
    if not _older_snapshots_gone(conn):  # else they keep the deleted rows in the rewrite
        return False
    for table in tables:
        conn.exec_driver_sql(f'VACUUM FULL "{table}"')
    for table in tables:
        conn.exec_driver_sql(f'ANALYZE "{table}"')
        if conn.exec_driver_sql(f'SELECT NOT EXISTS (SELECT 1 FROM "{table}")').scalar():
            _drop_samples(conn, table)
    if not _older_snapshots_gone(conn):  # one from before the new samples keeps the old ones
        return False
    conn.exec_driver_sql("VACUUM FULL pg_statistic")  # its dead old samples; a superuser's (else a warning)
    return True


def _older_snapshots_gone(conn: Any) -> bool:
    """Nothing begun before now holds deleted rows back any more (HELD_BACK), waited for up to SNAPSHOT_WAIT_S (R31)."""
    now = int(conn.exec_driver_sql("SELECT CAST(pg_snapshot_xmax(pg_current_snapshot()) AS text)").scalar())
    deadline = time.monotonic() + SNAPSHOT_WAIT_S
    while conn.execute(HELD_BACK, {"now": now, "x": now % 2**32}).scalar():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _drop_samples(conn: Any, table: str) -> None:
    """A table's column statistics gone (ANALYZE keeps an empty table's old ones): ALTER COLUMN to its own type."""
    rows = conn.execute(
        text(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
            "WHERE a.attrelid = CAST(:t AS regclass) AND a.attnum > 0 AND NOT a.attisdropped "
            "AND EXISTS (SELECT 1 FROM pg_statistic s WHERE s.starelid = a.attrelid AND s.staattnum = a.attnum)"
        ),
        {"t": f'"{table}"'},
    ).all()
    for column, typ in rows:
        conn.exec_driver_sql(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE {typ}')
