"""turns made before history: moment 0 shows them as they were

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05 12:30:00

A memory made before history was kept (revision 0008) holds turns opened "at moment 0" with no
line in `turnlog`, so every past moment showed them open, having taught nothing, while the graphs
held what they taught (issue #26). Each such turn gets its line at moment 0: as it stands now when
nothing changed it since, or, when its first change since is its replacement (R3), as it stood
before it: completed, with what it taught. A turn that ended after history began was open then.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = "status, taught_world, taught_user, taught_flow, skipped, steps"


def upgrade() -> None:
    conn = op.get_bind()
    # Nothing changed it since history began: moment 0 shows it as it stands.
    conn.execute(
        sa.text(
            f"INSERT INTO turnlog (turn_id, moment, {_COLUMNS}) SELECT id, 0, {_COLUMNS} FROM turn "
            "WHERE opened_at = 0 AND NOT EXISTS (SELECT 1 FROM turnlog l WHERE l.turn_id = turn.id)"
        )
    )
    # Replaced since (R3): before that it stood completed, with what it taught then.
    conn.execute(
        sa.text(
            "INSERT INTO turnlog (turn_id, moment, status, taught_world, taught_user, taught_flow, skipped, steps) "
            "SELECT l.turn_id, 0, 'completed', l.taught_world, l.taught_user, l.taught_flow, l.skipped, l.steps "
            "FROM turnlog l JOIN turn t ON t.id = l.turn_id "
            "WHERE t.opened_at = 0 AND l.status = 'replaced' AND l.moment = "
            "(SELECT min(f.moment) FROM turnlog f WHERE f.turn_id = l.turn_id) "
            "AND NOT EXISTS (SELECT 1 FROM turnlog z WHERE z.turn_id = l.turn_id AND z.moment = 0)"
        )
    )


def downgrade() -> None:
    op.execute("DELETE FROM turnlog WHERE moment = 0")
