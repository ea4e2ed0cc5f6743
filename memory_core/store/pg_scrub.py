"""PostgreSQL's scrub after a deletion (R31): what was erased leaves the database's files and the planner's
samples. SQLite's is a checkpoint of its log (store/dialect.py)."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

from .markers import all_tables

SCRUB_LOCK = 7_310_031  # a PostgreSQL advisory lock key: one scrub of a database at a time
SNAPSHOT_WAIT_S = 10.0  # how long it waits for older snapshots, as SQLite's checkpoint waits for older readers
#: PostgreSQL's R31 rewrite keeps a deleted row a transaction older than its deletion may still see; a scrub
#: waits this long for such snapshots (a reader's, an autovacuum's ANALYZE) before it says the bytes are not gone.
OLDER_SNAPSHOTS = text(
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
    "AND backend_xmin IS NOT NULL AND age(backend_xmin) > age(CAST(CAST(:x AS text) AS xid))"
)


def scrub(engine: Engine) -> bool:
    """Every table rewritten (VACUUM FULL: new table, TOAST and index files, old ones unlinked), analyzed (samples
    in `pg_stats` from the remaining rows; an empty table's dropped, `_drop_samples`), `pg_statistic` rewritten (its
    old samples' dead versions), a CHECKPOINT. A standby replays all of it (docs/scaling.md)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": SCRUB_LOCK})
        try:
            migrated = conn.execute(text("SELECT to_regclass('scrubdue') IS NOT NULL")).scalar()
            covered = conn.execute(text("SELECT coalesce(max(id), 0) FROM scrubdue")).scalar() if migrated else 0
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
            if migrated:
                conn.execute(text("DELETE FROM scrubdue WHERE id <= :top"), {"top": covered})
            try:
                conn.exec_driver_sql("CHECKPOINT")  # superuser or pg_checkpoint: else the server's own comes
            except Exception:  # noqa: BLE001
                conn.rollback()
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": SCRUB_LOCK})
    return True


def _older_snapshots_gone(conn: Any) -> bool:
    """No other session of this database holds a snapshot taken before now (up to SNAPSHOT_WAIT_S): VACUUM FULL
    copies a row deleted after a snapshot still held (RECENTLY_DEAD) into the new file. Such a snapshot is a
    reader's of a moment ago, or an autovacuum's ANALYZE, which under load spans seconds. Sessions of other
    databases do not hold this one's rows back. False: the scrub is tried again later (the marker stays)."""
    now = int(conn.exec_driver_sql("SELECT CAST(pg_snapshot_xmax(pg_current_snapshot()) AS text)").scalar())
    deadline = time.monotonic() + SNAPSHOT_WAIT_S
    while conn.execute(OLDER_SNAPSHOTS, {"x": now % 2**32}).scalar():
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
