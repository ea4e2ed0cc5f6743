"""reads kept: every graph read of a turn, with what it answered (the recall trace, issue #38)

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06 14:30:00

A turn's GraphResolve, GraphExpand and GraphSource are kept with their arguments, the moment and
the turn's record count when they were made, and what they answered or the refusal's reason.
Erased with the turn's run or account (R29, R30) and scrubbed (R31).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "turnread",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("turn_id", _TEXT(), nullable=False),
        sa.Column("moment", sa.Integer(), nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("nested_id", sa.Integer(), nullable=True),
        sa.Column("call", _TEXT(), nullable=False),
        sa.Column("step", _TEXT(), nullable=True),
        sa.Column("within", _TEXT(), nullable=True),
        sa.Column("args", sa.JSON(), nullable=False),
        sa.Column("outcome", _TEXT(), nullable=False),
        sa.Column("message", _TEXT(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("near", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["turn_id"], ["turn.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("turnread", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_turnread_turn_id"), ["turn_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("turnread", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_turnread_turn_id"))
    op.drop_table("turnread")
