"""erasure markers (R31), erased accounts' numbers (R30), an erased run's organization on User supports (R23)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 18:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("support", schema=None) as batch_op:
        batch_op.add_column(sa.Column("erased_run_org", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
    op.create_table(
        "scrubdue",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("reason", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "erasedaccount",
        sa.Column("n", sa.Integer(), autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("n"),
    )


def downgrade() -> None:
    op.drop_table("erasedaccount")
    op.drop_table("scrubdue")
    with op.batch_alter_table("support", schema=None) as batch_op:
        batch_op.drop_column("erased_run_org")
