"""What memory keeps of its past (R32), written by each use case in its own transaction (R34, R3, R33)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from sqlmodel import Session

from ..plain import Obj
from .driver import Driver, driver_of

#: What a moment can be, and how a person reads it (views/history.py words them).
WHAT = (
    "setup",  # organizations, people and workflows made
    "run_started",
    "turn_opened",
    "step",
    "turn_ended",  # detail: the status
    "run_ended",
    "run_deleted",
    "account_deleted",
    "settings",  # detail: "Name on|off, ..."
    "dispute",
    "retract",
)


ADD_MOMENT = (
    "INSERT INTO moment (id, at, what, org_id, run_id, turn_id, person_id, detail, facts) "
    "VALUES (:n, :at, :what, :org, :run, :turn, :person, :detail, :facts)"
)


def take_moment(tx: Session | Driver) -> int:
    """The next moment's number, inside the use case's transaction (Dialect.new_ids: in commit order)."""
    with driver_of(tx) as db:
        return db.new_ids("moment", 1)[0]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


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
        row = dict(n=n, at=now(), what=what, org=org, run=run, turn=turn, person=person, detail=detail)
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


# --- R3: what a replacement takes away, kept as it was -------------------------------------------
# `listed` is an IN list already in `params`, with the moment under :m.


def supports_gone(db: Driver, listed: str, params: Obj) -> None:
    db.change(
        'INSERT INTO supportgone (id, fact_id, graph, owner, "key", origin, contribution, run_id, turn_id, '
        "record_id, erased_run_org, since, until) "
        'SELECT s.id, s.fact_id, f.graph, f.owner, s."key", s.origin, s.contribution, s.run_id, s.turn_id, '
        "s.record_id, s.erased_run_org, s.since, :m FROM support s JOIN fact f ON f.id = s.fact_id "
        f"WHERE s.id IN ({listed})",
        params,
    )


def facts_gone(db: Driver, listed: str, params: Obj) -> None:
    db.change(
        "INSERT INTO factgone (id, graph, owner, subject_id, relation, object_id, value, retracted, since, "
        "retracted_at, until) SELECT id, graph, owner, subject_id, relation, object_id, value, retracted, since, "
        f"retracted_at, :m FROM fact WHERE id IN ({listed})",
        params,
    )


def disputes_gone(db: Driver, listed: str, params: Obj) -> None:
    db.change(
        'INSERT INTO disputegone (fact_id, graph, owner, "by", contribution, since, until) '
        'SELECT d.fact_id, f.graph, f.owner, d."by", d.contribution, d.since, :m FROM dispute d '
        f"JOIN fact f ON f.id = d.fact_id WHERE d.fact_id IN ({listed})",
        params,
    )


def entity_gone(db: Driver, entity_id: int, moment: int) -> None:
    db.change(
        "INSERT INTO entitygone (id, graph, owner, kind, name, aliases, alias_since, since, until) "
        "SELECT id, graph, owner, kind, name, aliases, alias_since, since, :m FROM entity WHERE id = :e",
        {"e": entity_id, "m": moment},
    )
