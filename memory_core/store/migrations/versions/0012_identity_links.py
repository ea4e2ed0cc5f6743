"""identity links: who signs in to the dashboard as whom, with the organization's identity provider

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 15:00:00

A person is linked, in one organization, to an identity of the identity provider the dashboard
signs in with (OpenID Connect): its issuer and subject, or an email address it verified. Linked
by the organization's owner on the Settings page or with `python -m memory_core identity link`;
erased with the person (R30). One identity speaks for one person in an organization.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "identitylink",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", _TEXT(), nullable=False),
        sa.Column("issuer", _TEXT(), nullable=False),
        sa.Column("key", _TEXT(), nullable=False),
        sa.Column("person_id", _TEXT(), nullable=False),
        sa.Column("org_id", _TEXT(), nullable=False),
        sa.Column("created_at", _TEXT(), nullable=False),
        sa.ForeignKeyConstraint(["org_id"], ["organization.id"]),
        sa.ForeignKeyConstraint(["person_id"], ["person.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("kind", "issuer", "key", "org_id", name="uq_identitylink"),
    )
    with op.batch_alter_table("identitylink", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_identitylink_org_id"), ["org_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_identitylink_person_id"), ["person_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("identitylink", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_identitylink_person_id"))
        batch_op.drop_index(batch_op.f("ix_identitylink_org_id"))
    op.drop_table("identitylink")
