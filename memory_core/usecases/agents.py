"""Use cases of the MCP server's sessions: a session that ends, or whose server is gone, ends its runs (R17)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import errors as E
from ..store import agents
from ..store.repository import Repository
from .results import RunEnded


@dataclass(frozen=True, slots=True)
class SessionEnded:
    """A session ended: why, and what ending each of its open runs did (R17)."""

    session: str
    why: str
    runs: tuple[tuple[str, RunEnded], ...]


class AgentSessions(Repository):
    """Use cases of MCP servers and sessions; a session that ends ends its runs through the facade's `end_run`."""

    #: The facade's end_run (Turns.end_run run as a use case).
    end_run: Callable[[str], RunEnded]

    def agent_server_started(self, server: str, *, host: str, pid: int, transport: str, now: float) -> None:
        """Note a server that starts serving."""
        with self.database.transaction() as s:
            agents.add_server(s, server=server, host=host, pid=pid, transport=transport, now=now)

    def agent_server_alive(self, server: str, *, now: float, stopped: bool = False) -> None:
        """A server's heartbeat; or (`stopped`) its note that it stopped on purpose, after its sessions ended."""
        with self.database.transaction() as s:
            agents.note_alive(s, server=server, now=now, stopped=stopped)

    def agent_session_opened(self, session: str, *, server: str, client: str, transport: str, now: float) -> None:
        """Note a session that opens."""
        with self.database.transaction() as s:
            agents.add_session(s, session=session, server=server, client=client, transport=transport, now=now)

    def agent_session_ended(self, session: str, *, why: str, now: float) -> SessionEnded:
        """End a session: each run it started and did not end is ended as end_run ends it (R17)."""
        with self.database.transaction() as s:
            agents.end_session(s, session=session, why=why, now=now)
        with self.database.transaction(write=False, fresh=True) as s:  # the runs to end: as the primary has them now
            runs = agents.open_runs_of(s, session=session)
        ended = []
        for run in runs:
            try:
                ended.append((run, self.end_run(run)))
            except E.Refusal:  # ended or deleted meanwhile (R17, R29): nothing left to end
                continue
        return SessionEnded(session, why, tuple(ended))

    def end_gone_sessions(
        self, *, host: str, alive: Callable[[str, int], bool], now: float, stale: float
    ) -> list[SessionEnded]:
        """End every session whose server is gone (store/agents.py says how that is known)."""
        with self.database.transaction(write=False, fresh=True) as s:
            gone = agents.gone_sessions(s, now=now, stale=stale, host=host, alive=alive)
        return [self.agent_session_ended(g.session, why=g.why, now=now) for g in gone]

    def run_clients(self, runs: list[str]) -> dict[str, str]:
        """The MCP client that started each of these runs, for runs started through the MCP server."""
        return self._read(agents.clients_of, runs=runs)

    def started_by(self, *, run: str | None = None, turn: str | None = None) -> tuple[str | None, str | None] | None:
        """The person and the MCP session that started a run, or a turn's run (None: it names none)."""
        with self.database.transaction(write=False, fresh=True) as s:
            return agents.started_by(s, run=run, turn=turn)
