"""drop the entity indexes no query uses

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03 07:30:00

Teaching writes every index of the rows it inserts or updates, and each index leaf it touches is a
page the commit writes (issue #8, B1: 109 pages a turn's end, 22 of them in these two indexes).
No query filters entities by key alone (look-ups name the graph and owner: ix_entity_graph_key),
and the map reads its counters (R18), not entities grouped by kind.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("entity", schema=None) as batch_op:
        batch_op.drop_index("ix_entity_key")
        batch_op.drop_index("ix_entity_graph_kind_active")


def downgrade() -> None:
    with op.batch_alter_table("entity", schema=None) as batch_op:
        batch_op.create_index("ix_entity_graph_kind_active", ["graph", "owner", "kind", "active_facts"], unique=False)
        batch_op.create_index("ix_entity_key", ["key"], unique=False)
