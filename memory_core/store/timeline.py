"""Runs at a glance (issue #39.5): an organization's newest runs and their newest turns, each turn's status,
records and reads in order, in four small queries whatever memory's size (the Overview at 112k facts)."""

from __future__ import annotations

from sqlalchemy import func
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from ..plain import Obj
from .driver import Driver
from .models import Record, Run, Turn, TurnRead

#: What live pages show moves with it (#39): a moment (every use case that changes memory, R32: none is deleted), a
#: record in an open turn, a read kept, an MCP session opened or ended; an MCP server's heartbeat (agentserver) with
#: none. Counts, not largest ids: PostgreSQL's sequences commit out of order.
_SHOWN = """SELECT (SELECT count(*) FROM moment), (SELECT count(*) FROM record), (SELECT count(*) FROM turnread),
(SELECT count(*) FROM agentsession), (SELECT count(ended_at) FROM agentsession)"""


def shown(db: Driver) -> str:
    """A token of what live pages show: moves with a change they show, not with an MCP server's heartbeat (#39)."""
    return ":".join(str(n) for n in db.rows(_SHOWN, {})[0])


def timeline(s: Session, org_id: str, *, runs: int, turns: int) -> Obj:
    """The `runs` newest runs (newest first), their `turns` newest turns, and how many of each there are."""
    total = s.exec(select(func.count()).select_from(Run).where(Run.org_id == org_id)).one()
    newest = s.exec(
        select(Run.id, Run.person_id, Run.ended).where(Run.org_id == org_id).order_by(col(Run.seq).desc()).limit(runs)
    ).all()
    ids = [r[0] for r in newest]
    in_runs = col(Turn.run_id).in_(ids)
    of_runs = s.exec(select(func.count()).select_from(Turn).where(in_runs)).one()
    newest_turns = core_select(*(col(c) for c in (Turn.id, Turn.run_id, Turn.seq, Turn.status, Turn.next_record)))
    rows = s.connection().execute(newest_turns.where(in_runs).order_by(col(Turn.seq).desc()).limit(turns)).all()
    shown = [str(t[0]) for t in rows]
    asked = select(Record.turn_id, Record.excerpt).where(col(Record.turn_id).in_(shown), Record.number == 0)
    request = dict(s.exec(asked).all())
    reads: dict[str, list[Obj]] = {t: [] for t in shown}
    made = select(TurnRead.turn_id, TurnRead.records, TurnRead.call, TurnRead.outcome).order_by(col(TurnRead.id))
    for turn_id, records, call, outcome in s.exec(made.where(col(TurnRead.turn_id).in_(shown))):
        reads[turn_id].append({"records": records, "call": call, "outcome": outcome})
    by_run: dict[str, list[Obj]] = {str(i): [] for i in ids}
    for t in reversed(rows):  # oldest first within a run
        turn = {"id": t[0], "seq": t[2], "status": t[3], "records": t[4], "request": request.get(str(t[0]))}
        by_run[str(t[1])].append(turn | {"reads": reads[str(t[0])]})
    out = [{"id": i, "person": p, "ended": e, "turns": by_run[i]} for i, p, e in newest]
    return {"runs": out, "runs_total": int(total), "turns_total": int(of_runs)}
