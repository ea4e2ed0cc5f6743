"""the word index: GraphResolve finds an entity by the beginnings of the words of its name or aliases

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 14:30:00

Each word of an entity's name and aliases, folded (accents off, case folded: rules/words.py), with the
entity's graph, owner and id; a b-tree on (graph, owner, word) serves a prefix in a graph as a range (collation "C" on PostgreSQL, so the
range is by code point as on SQLite). Gone with its entity (ON DELETE CASCADE). The entities already
in memory are indexed here.
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from memory_core.rules.words import indexed

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "word",
        sa.Column("graph", sa.String(), nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("word", sa.String().with_variant(sa.String(collation="C"), "postgresql"), nullable=False),
        sa.Column("entity_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["entity_id"], ["entity.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("graph", "owner", "word", "entity_id"),
    )
    with op.batch_alter_table("word", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_word_entity_id"), ["entity_id"], unique=False)
    _backfill(op.get_bind())


def _backfill(conn: sa.Connection) -> None:
    """Every entity's words, a chunk of ids at a time."""
    every = sa.text("SELECT id, graph, owner, name, aliases FROM entity WHERE id > :i ORDER BY id LIMIT 5000")
    add, last = sa.text("INSERT INTO word (graph, owner, word, entity_id) VALUES (:g, :o, :w, :e)"), 0
    while batch := conn.execute(every, {"i": last}).all():
        rows = []
        for ident, graph, owner, name, aliases in batch:
            texts = [name, *(json.loads(aliases) if isinstance(aliases, str) else aliases or [])]
            rows += [
                {"g": graph, "o": owner, "w": w, "e": ident} for w in sorted({w for t in texts for w in indexed(t)})
            ]
        if rows:
            conn.execute(add, rows)
        last = batch[-1][0]


def downgrade() -> None:
    with op.batch_alter_table("word", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_word_entity_id"))
    op.drop_table("word")
