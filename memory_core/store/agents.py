"""MCP servers and their sessions (agents/): who started which run, and which servers are alive."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from sqlmodel import Session, col, select

from .driver import Driver
from .models import AgentServer, AgentSession, Run, Turn


class GoneSession(NamedTuple):
    """A session whose server is gone, and why."""

    session: str
    why: str


def add_server(tx: Session, *, server: str, host: str, pid: int, transport: str, now: float) -> None:
    """Note a server that starts serving."""
    tx.add(AgentServer(id=server, host=host, pid=pid, transport=transport, started_at=now, seen_at=now))


def note_alive(tx: Session, *, server: str, now: float, stopped: bool = False) -> None:
    """A server's heartbeat: it still serves; or (`stopped`) it stopped on purpose, its sessions ended first."""
    row = tx.get(AgentServer, server)
    if row is not None:
        row.seen_at, row.stopped = now, row.stopped or stopped


def add_session(tx: Session, *, session: str, server: str, client: str, transport: str, now: float) -> None:
    """Note a session that opens."""
    tx.add(AgentSession(id=session, server_id=server, client=client, transport=transport, opened_at=now))


def end_session(tx: Session, *, session: str, why: str, now: float) -> None:
    """Note that a session ended (its runs are ended by the end_run use case, one by one)."""
    row = tx.get(AgentSession, session)
    if row is not None and row.ended_at is None:
        row.ended_at, row.ended_why = now, why


def open_runs_of(tx: Session, *, session: str) -> list[str]:
    """The runs a session started that have not ended, oldest first."""
    q = select(Run.id).where(Run.session_id == session, col(Run.ended).is_(False)).order_by(col(Run.seq))
    return list(tx.exec(q))


def gone_sessions(
    tx: Session, *, now: float, stale: float, host: str, alive: Callable[[str, int], bool]
) -> list[GoneSession]:
    """Sessions whose server is gone, and ended ones with a run still open (#40 finding 6)."""

    def why(server: AgentServer | None) -> str | None:
        """Why a server is gone, or None while it may still serve."""
        if server is None:
            return "its server is not known"
        if server.stopped:
            return "its server stopped"
        if server.host == host and not alive(server.id, server.pid):
            return f"its server (pid {server.pid} on this host) no longer runs"
        if now - server.seen_at > stale:
            return f"its server has not been seen for {now - server.seen_at:.0f} s"
        return None

    servers = {s.id: s for s in tx.exec(select(AgentServer))}
    q = select(AgentSession).where(col(AgentSession.ended_at).is_(None)).order_by(col(AgentSession.opened_at))
    gone = [(sess, why(servers.get(sess.server_id))) for sess in tx.exec(q)]
    started = select(Run.session_id).where(col(Run.ended).is_(False), col(Run.session_id).is_not(None))
    q = select(AgentSession).where(col(AgentSession.ended_at).is_not(None), col(AgentSession.id).in_(started))
    gone += [(sess, f"it ended ({sess.ended_why})") for sess in tx.exec(q.order_by(col(AgentSession.opened_at)))]
    return [GoneSession(sess.id, reason) for sess, reason in gone if reason is not None]


def clients_of(tx: Session, *, runs: list[str]) -> dict[str, str]:
    """The MCP client that started each of these runs, for those started through the MCP server."""
    q = select(Run.id, AgentSession.client).join(AgentSession, col(AgentSession.id) == col(Run.session_id))
    return dict(tx.exec(q.where(col(Run.id).in_(runs))).all()) if runs else {}


def started_by(tx: Session, *, run: str | None = None, turn: str | None = None) -> tuple[str | None, str | None] | None:
    """The person and the MCP session that started a run, or a turn's run; None when it names none."""
    q = select(Run.person_id, Run.session_id)
    q = q.where(Run.id == run) if turn is None else q.join(Turn).where(Turn.id == turn)
    row = tx.exec(q).first()
    return None if row is None else (row[0], row[1])


def token_holder(db: Driver, *, token_hash: str) -> tuple[str, str] | None:
    """The (person, organization) a live token's hash speaks for, or None: at every MCP call, so on the driver."""
    rows = db.rows("SELECT person_id, org_id FROM apitoken WHERE token_hash = :h AND NOT revoked", {"h": token_hash})
    return (str(rows[0][0]), str(rows[0][1])) if rows else None
