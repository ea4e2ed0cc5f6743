"""used ids kept as keyed digests: `usedid` holds HMAC-SHA256 of kind and id, never the id

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05 12:00:00

A run or turn id once used is refused forever (`duplicate_id`), erased runs' included; keeping the
id itself kept an erased run's and its turns' ids in the database (issue #26, R33). The database
gets a random key (`idkey`, one row) and each kept id becomes its digest under it (store/ids.py).
"""

import hashlib
import hmac
import secrets
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "idkey",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", _TEXT(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    conn = op.get_bind()
    key = secrets.token_hex(32)
    conn.execute(sa.text("INSERT INTO idkey (id, key) VALUES (1, :k)"), {"k": key})
    kept = conn.execute(sa.text("SELECT kind, id FROM usedid")).all()
    conn.execute(sa.text("DELETE FROM usedid"))
    rows = [
        {"k": kind, "i": hmac.new(bytes.fromhex(key), f"{kind}\x00{ident}".encode(), hashlib.sha256).hexdigest()}
        for kind, ident in kept
    ]
    for start in range(0, len(rows), 10_000):
        conn.execute(sa.text("INSERT INTO usedid (kind, id) VALUES (:k, :i)"), rows[start : start + 10_000])


def downgrade() -> None:  # the ids themselves are gone for good: only the table goes
    op.drop_table("idkey")
