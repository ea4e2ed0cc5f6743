"""What memory keeps of its past (R32), written by each use case in its own transaction (R34, R3, R33)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlmodel import Session

from ..plain import Obj
from .driver import Driver, column_names, driver_of, insert
from .models import Dispute, DisputeGone, Entity, EntityGone, Fact, FactGone, Moment, Support, SupportGone

#: What a moment can be (views/history.py words them); the detail of `turn_ended` is the status, of `settings`
#: "Name on|off, ...", of `setup` nothing (organizations, people and workflows made).
WHAT = frozenset(
    "setup run_started turn_opened step turn_ended run_ended run_deleted account_deleted settings dispute retract".split()
)


ADD_MOMENT = insert(Moment.__table__)  # type: ignore[attr-defined]


def take_moment(tx: Session | Driver) -> int:
    """The next moment's number, inside the use case's transaction (Dialect.new_ids: in commit order)."""
    with driver_of(tx) as db:
        return db.new_ids("moment", 1)[0]


def mark(
    tx: Session | Driver,
    n: int,
    what: str,
    *,
    turns: Iterable[str] = (),
    org: str | None = None,
    run: str | None = None,
    turn: str | None = None,
    person: str | None = None,
    detail: str | None = None,
    facts: Iterable[int] = (),
) -> None:
    """Write moment `n` (take_moment): what happened and the facts it changed, after logging `turns` (R32)."""
    assert what in WHAT, what
    with driver_of(tx) as db:
        for turn_id in turns:
            log_turn(db, turn_id, n)
        at = datetime.now(UTC).isoformat(timespec="milliseconds")
        row = dict(id=n, at=at, what=what, org_id=org, run_id=run, turn_id=turn, person_id=person, detail=detail)
        db.change(ADD_MOMENT, {**row, "facts": db.json(sorted(set(facts)))})


def log_turn(db: Driver, turn_id: str, moment: int) -> None:
    """The turn as the state shows it after this moment (status, taught, skipped, steps)."""
    db.change(
        "INSERT INTO turnlog (turn_id, moment, status, taught_world, taught_user, taught_flow, skipped, steps) "
        "SELECT id, :m, status, taught_world, taught_user, taught_flow, skipped, steps FROM turn WHERE id = :t",
        {"t": turn_id, "m": moment},
    )


def log_map(db: Driver, changed: list[Obj]) -> None:
    """The map's counters changed at a moment (rows of `o`, `k`, `m`), as they stand after it."""
    db.many(
        "INSERT INTO maplog (org_id, kind, moment, n) SELECT org_id, kind, :m, n FROM mapcount "
        "WHERE org_id = :o AND kind = :k ON CONFLICT (org_id, kind, moment) DO UPDATE SET n = excluded.n",
        [{"o": r["o"], "k": r["k"], "m": r["m"]} for r in changed],
    )


# --- R3: what a replacement takes away, kept as it was ------------------------------------------------


def _keeping(gone: Any, table: Any) -> str:
    """Copy rows of `table` (x) into its history table `gone` as they are, until the moment :m (R3, R33)."""
    names = [n for n in column_names(gone) if n not in ("gid", "until")]
    mine = set(column_names(table))
    picked = ", ".join(f'{"x" if n in mine else "f"}."{n}"' for n in names)  # a support's graph: its fact's
    join = "" if "graph" in mine else " JOIN fact f ON f.id = x.fact_id"
    listed = ", ".join(f'"{n}"' for n in names)
    return f"INSERT INTO {gone.name} ({listed}, until) SELECT {picked}, :m FROM {table.name} x{join} WHERE x."


_KEEP = {
    t.__tablename__: _keeping(g.__table__, t.__table__)  # type: ignore[union-attr]
    for t, g in ((Support, SupportGone), (Fact, FactGone), (Dispute, DisputeGone), (Entity, EntityGone))
}


def gone(db: Driver, table: str, where: str, params: Obj) -> None:
    """The rows of `table` that `where` names (on its columns) are about to go: history keeps them (R3, R33)."""
    db.change(_KEEP[table] + where, params)
