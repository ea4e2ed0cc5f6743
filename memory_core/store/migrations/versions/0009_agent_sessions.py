"""agent sessions: which MCP session started a run, and the servers that hold sessions

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05 00:30:00

A run started through the MCP server names its session (`run.session_id`); the session names its
client (the name and version the client gave) and the server process that holds it. A server
notes that it is alive (`agentserver.seen_at`) every few seconds, so the next server to start can
tell the sessions of a server killed with kill -9 from those of a live one, and end their runs
(R17). No person's id is kept here (R30): a session is known by its client and its server.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("session_id", _TEXT(), nullable=True))
        batch_op.create_index(batch_op.f("ix_run_session_id"), ["session_id"], unique=False)
    op.create_table(
        "agentserver",
        sa.Column("id", _TEXT(), nullable=False),
        sa.Column("host", _TEXT(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("transport", _TEXT(), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("seen_at", sa.Float(), nullable=False),
        sa.Column("stopped", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "agentsession",
        sa.Column("id", _TEXT(), nullable=False),
        sa.Column("server_id", _TEXT(), nullable=False),
        sa.Column("client", _TEXT(), nullable=False),
        sa.Column("transport", _TEXT(), nullable=False),
        sa.Column("opened_at", sa.Float(), nullable=False),
        sa.Column("ended_at", sa.Float(), nullable=True),
        sa.Column("ended_why", _TEXT(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("agentsession", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_agentsession_server_id"), ["server_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("agentsession", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agentsession_server_id"))
    op.drop_table("agentsession")
    op.drop_table("agentserver")
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_session_id"))
        batch_op.drop_column("session_id")
