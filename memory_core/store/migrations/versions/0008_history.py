"""history (R32 to R34): the moment each row was made, the moments, turn and map logs, what went

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 13:00:00

Rows that exist before this revision were made before history was kept: their moment is 0, and
the map's counters are logged at moment 0, so the past of an upgraded database starts with what
it held.
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TEXT = sqlmodel.sql.sqltypes.AutoString

_SINCE = {
    "organization": ["since"],
    "person": ["since"],
    "run": ["started_at"],
    "turn": ["opened_at"],
    "entity": ["since"],
    "fact": ["since"],
    "support": ["since"],
    "dispute": ["since"],
    "settingsaudit": ["moment"],
}


def upgrade() -> None:
    for table, names in _SINCE.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            for name in names:
                batch_op.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))
            if table == "run":
                batch_op.add_column(sa.Column("ended_at", sa.Integer(), nullable=True))
            if table == "fact":
                batch_op.add_column(sa.Column("retracted_at", sa.Integer(), nullable=True))
            if table == "entity":
                batch_op.add_column(sa.Column("alias_since", sa.JSON(), nullable=False, server_default="[]"))
    conn = op.get_bind()
    param = "CAST(:s AS json)" if conn.dialect.name == "postgresql" else ":s"
    for eid, aliases in conn.execute(sa.text("SELECT id, aliases FROM entity")).all():
        n = len(aliases if isinstance(aliases, list) else json.loads(aliases or "[]"))
        if n:
            conn.execute(
                sa.text(f"UPDATE entity SET alias_since = {param} WHERE id = :i"), {"s": json.dumps([0] * n), "i": eid}
            )
    conn.execute(sa.text("UPDATE run SET ended_at = 0 WHERE ended"))
    conn.execute(sa.text("UPDATE fact SET retracted_at = 0 WHERE retracted"))
    op.create_table(
        "moment",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", _TEXT(), nullable=False),
        sa.Column("what", _TEXT(), nullable=False),
        sa.Column("org_id", _TEXT(), nullable=True),
        sa.Column("run_id", _TEXT(), nullable=True),
        sa.Column("turn_id", _TEXT(), nullable=True),
        sa.Column("person_id", _TEXT(), nullable=True),
        sa.Column("detail", _TEXT(), nullable=True),
        sa.Column("facts", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    for col in ("org_id", "run_id", "turn_id", "person_id"):
        op.create_index(f"ix_moment_{col}", "moment", [col], unique=False)
    op.create_table(
        "turnlog",
        sa.Column("turn_id", _TEXT(), nullable=False),
        sa.Column("moment", sa.Integer(), nullable=False),
        sa.Column("status", _TEXT(), nullable=False),
        sa.Column("taught_world", sa.Integer(), nullable=False),
        sa.Column("taught_user", sa.Integer(), nullable=False),
        sa.Column("taught_flow", sa.Integer(), nullable=False),
        sa.Column("skipped", sa.JSON(), nullable=False),
        sa.Column("steps", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("turn_id", "moment"),
    )
    op.create_table(
        "maplog",
        sa.Column("org_id", _TEXT(), nullable=False),
        sa.Column("kind", _TEXT(), nullable=False),
        sa.Column("moment", sa.Integer(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("org_id", "kind", "moment"),
    )
    conn.execute(sa.text("INSERT INTO maplog (org_id, kind, moment, n) SELECT org_id, kind, 0, n FROM mapcount"))
    op.create_table(
        "supportgone",
        sa.Column("gid", sa.Integer(), nullable=False),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("fact_id", sa.Integer(), nullable=False),
        sa.Column("graph", _TEXT(), nullable=False),
        sa.Column("owner", _TEXT(), nullable=False),
        sa.Column("key", _TEXT(), nullable=False),
        sa.Column("origin", _TEXT(), nullable=False),
        sa.Column("contribution", sa.Float(), nullable=False),
        sa.Column("run_id", _TEXT(), nullable=True),
        sa.Column("turn_id", _TEXT(), nullable=True),
        sa.Column("record_id", _TEXT(), nullable=True),
        sa.Column("erased_run_org", _TEXT(), nullable=True),
        sa.Column("since", sa.Integer(), nullable=False),
        sa.Column("until", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("gid"),
    )
    for col in ("fact_id", "run_id", "until"):
        op.create_index(f"ix_supportgone_{col}", "supportgone", [col], unique=False)
    op.create_table(
        "factgone",
        sa.Column("gid", sa.Integer(), nullable=False),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("graph", _TEXT(), nullable=False),
        sa.Column("owner", _TEXT(), nullable=False),
        sa.Column("subject_id", sa.Integer(), nullable=False),
        sa.Column("relation", _TEXT(), nullable=False),
        sa.Column("object_id", sa.Integer(), nullable=True),
        sa.Column("value", _TEXT(), nullable=True),
        sa.Column("retracted", sa.Boolean(), nullable=False),
        sa.Column("since", sa.Integer(), nullable=False),
        sa.Column("retracted_at", sa.Integer(), nullable=True),
        sa.Column("until", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("gid"),
    )
    op.create_index("ix_factgone_graph", "factgone", ["graph", "owner", "since"], unique=False)
    op.create_index("ix_factgone_id", "factgone", ["id"], unique=False)
    op.create_index("ix_factgone_until", "factgone", ["until"], unique=False)
    op.create_table(
        "disputegone",
        sa.Column("gid", sa.Integer(), nullable=False),
        sa.Column("fact_id", sa.Integer(), nullable=False),
        sa.Column("graph", _TEXT(), nullable=False),
        sa.Column("owner", _TEXT(), nullable=False),
        sa.Column("by", _TEXT(), nullable=True),
        sa.Column("contribution", sa.Float(), nullable=False),
        sa.Column("since", sa.Integer(), nullable=False),
        sa.Column("until", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("gid"),
    )
    op.create_index("ix_disputegone_fact_id", "disputegone", ["fact_id"], unique=False)
    op.create_index("ix_disputegone_by", "disputegone", ["by"], unique=False)
    op.create_table(
        "entitygone",
        sa.Column("gid", sa.Integer(), nullable=False),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("graph", _TEXT(), nullable=False),
        sa.Column("owner", _TEXT(), nullable=False),
        sa.Column("kind", _TEXT(), nullable=False),
        sa.Column("name", _TEXT(), nullable=False),
        sa.Column("aliases", sa.JSON(), nullable=False),
        sa.Column("alias_since", sa.JSON(), nullable=False),
        sa.Column("since", sa.Integer(), nullable=False),
        sa.Column("until", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("gid"),
    )
    op.create_index("ix_entitygone_id", "entitygone", ["id"], unique=False)


def downgrade() -> None:
    for table in ("entitygone", "disputegone", "factgone", "supportgone", "maplog", "turnlog", "moment"):
        op.drop_table(table)
    for table, names in _SINCE.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            for name in names:
                batch_op.drop_column(name)
            if table == "run":
                batch_op.drop_column("ended_at")
            if table == "fact":
                batch_op.drop_column("retracted_at")
            if table == "entity":
                batch_op.drop_column("alias_since")
