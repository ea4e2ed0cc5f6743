"""fact end indexes with the columns GraphExpand filters on

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 18:40:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("fact", schema=None) as batch_op:
        batch_op.drop_index("ix_fact_subject_id")
        batch_op.drop_index("ix_fact_object_id")
        batch_op.create_index("ix_fact_subject", ["subject_id", "graph", "owner", "status"], unique=False)
        batch_op.create_index("ix_fact_object", ["object_id", "graph", "owner", "status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("fact", schema=None) as batch_op:
        batch_op.drop_index("ix_fact_object")
        batch_op.drop_index("ix_fact_subject")
        batch_op.create_index("ix_fact_object_id", ["object_id"], unique=False)
        batch_op.create_index("ix_fact_subject_id", ["subject_id"], unique=False)
