"""a turn's reads found by their id range: no index on turnread to write per read (issue #38, B10)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07 07:00:00

Each turn keeps the ids of its first and last kept read (`first_read`, `last_read`; the reads of other
turns made meanwhile may fall between, and are told apart by `turn_id`). A turn's reads are read as that
range of turnread's primary key, so keeping a read writes its row and no index entry: the index on
`turnread.turn_id` goes, and with it the foreign key (a turn deleted without an index behind the key
would scan every read; reads are erased with their turns by the store, reads.erase). The turns already
in memory get their ranges here.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TEXT = sqlmodel.sql.sqltypes.AutoString


def _turnread(*, keyed: bool) -> sa.Table:
    """turnread as 0014 made it, with or without its foreign key to turn."""
    key = [sa.ForeignKeyConstraint(["turn_id"], ["turn.id"])] if keyed else []
    return sa.Table(
        "turnread",
        sa.MetaData(),
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
        *key,
        sa.PrimaryKeyConstraint("id"),
    )


def upgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.add_column(sa.Column("first_read", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("last_read", sa.Integer(), nullable=True))
    op.execute(
        "UPDATE turn SET first_read = (SELECT min(r.id) FROM turnread r WHERE r.turn_id = turn.id),"
        " last_read = (SELECT max(r.id) FROM turnread r WHERE r.turn_id = turn.id)"
    )
    op.drop_index("ix_turnread_turn_id", table_name="turnread")
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint("turnread_turn_id_fkey", "turnread", type_="foreignkey")
    else:  # SQLite: the table made again without the key (it has no name to drop it by)
        with op.batch_alter_table("turnread", recreate="always", copy_from=_turnread(keyed=False)):
            pass


def downgrade() -> None:
    op.drop_column(
        "turn", "last_read"
    )  # ALTER TABLE ... DROP COLUMN on both (SQLite since 3.35): turn is not made again
    op.drop_column("turn", "first_read")
    if op.get_bind().dialect.name == "postgresql":
        op.create_foreign_key("turnread_turn_id_fkey", "turnread", "turn", ["turn_id"], ["id"])
    else:
        with op.batch_alter_table("turnread", recreate="always", copy_from=_turnread(keyed=True)):
            pass
    op.create_index("ix_turnread_turn_id", "turnread", ["turn_id"], unique=False)
