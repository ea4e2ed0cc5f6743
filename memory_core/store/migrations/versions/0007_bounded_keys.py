"""index long names and values by their digest

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 19:10:00

PostgreSQL's btree holds at most about 2,700 bytes an index row, so an entity name, alias or literal
value longer than 512 bytes is now indexed by its SHA-256 (rules.name_key, rules.value_key; issue #13).
Only SQLite could have stored such a key before: this rewrites those keys to the bounded form, so the
same look-ups find them. Shorter keys are unchanged.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from memory_core.rules.keys import KEY_BYTES, name_key, value_key

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _long(column: str) -> str:
    # bytes, not characters: octet_length on PostgreSQL, length() of a blob on SQLite
    if op.get_bind().dialect.name == "postgresql":
        return f"octet_length({column}) > {KEY_BYTES}"
    return f"length(CAST({column} AS BLOB)) > {KEY_BYTES}"


def upgrade() -> None:
    conn = op.get_bind()
    for table, id_cols in (("entity", ("id",)), ("alias", ("entity_id", "key"))):
        rows = conn.execute(sa.text(f"SELECT {', '.join(id_cols)}, key FROM {table} WHERE {_long('key')}")).all()
        for row in rows:
            where = " AND ".join(f"{c} = :{c}" for c in id_cols)
            params = {c: row[i] for i, c in enumerate(id_cols)}
            conn.execute(sa.text(f"UPDATE {table} SET key = :new WHERE {where}"), {**params, "new": name_key(row[-1])})
    rows = conn.execute(sa.text(f"SELECT id, value FROM fact WHERE value IS NOT NULL AND {_long('value')}")).all()
    for fact_id, value in rows:
        conn.execute(sa.text("UPDATE fact SET object_key = :k WHERE id = :i"), {"k": value_key(value), "i": fact_id})


def downgrade() -> None:
    """Nothing to undo that the older code could use: it could not store these keys on PostgreSQL at
    all, and on SQLite the full texts stay in name, aliases and value."""
