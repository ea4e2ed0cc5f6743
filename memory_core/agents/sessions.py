"""Sessions own their runs: what each MCP session started, ended with it (R17); servers gone are swept (store/agents.py)."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field

from ..usecases.agents import SessionEnded
from ..usecases.facade import MemoryService

log = logging.getLogger("memory_core.agents")

BEAT = 5.0  # seconds between a server's notes that it is alive
STALE = 30.0  # a server not seen for this long is gone
SWEEP = 30.0  # seconds between a live server's looks for gone servers' sessions


@dataclass
class OpenSession:
    """One session: what it started and has not ended (runs with their MemoryProbes, R21; turns with their run)."""

    id: str
    client: str
    token: str | None  # the token that opened it (its id, never the token): no other speaks on it
    runs: dict[str, int | None] = field(default_factory=dict)
    turns: dict[str, str] = field(default_factory=dict)


#: The servers this process runs: one noted under this pid and not among them was an earlier process's.
LIVE_HERE: set[str] = set()


def pid_alive(server: str, pid: int) -> bool:
    """Whether server `server`, noted under `pid` on this host, may still run."""
    if pid == os.getpid():
        return server in LIVE_HERE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it runs, as another user
        return True
    return True


class Sessions:
    """The sessions one server holds, keyed by the transport's handle for each."""

    def __init__(self, service: MemoryService, *, transport: str) -> None:
        self.service = service
        self.transport = transport
        self.server = "srv-" + uuid.uuid4().hex[:16]
        self._open: dict[str, OpenSession] = {}
        self._lock = threading.Lock()
        self._opening = threading.Lock()
        self._started = False
        self._stop = threading.Event()

    def start(self, *, beat: bool = True) -> list[SessionEnded]:
        """Note this server, end the sessions of servers that are gone (logged), and keep a heartbeat."""
        with self._lock:
            if self._started:
                return []
            self._started = True
            LIVE_HERE.add(self.server)
        self.service.agent_server_started(
            self.server, host=socket.gethostname(), pid=os.getpid(), transport=self.transport, now=time.time()
        )
        ended = self.sweep()
        if beat:
            threading.Thread(target=self._heartbeat, name="memory-agents-heartbeat", daemon=True).start()
        return ended

    def sweep(self) -> list[SessionEnded]:
        """End the sessions of servers that are gone, saying so in the log."""
        ended = self.service.end_gone_sessions(host=socket.gethostname(), alive=pid_alive, now=time.time(), stale=STALE)
        for e in ended:
            runs = ", ".join(f"{run} ({', '.join(r.cancelled) or 'no open turn'} cancelled)" for run, r in e.runs)
            log.warning("ended session %s: %s; runs ended (R17): %s", e.session, e.why, runs or "none open")
        return ended

    def _heartbeat(self) -> None:
        last_sweep = time.monotonic()
        while not self._stop.wait(BEAT):
            try:
                self.service.agent_server_alive(self.server, now=time.time())
                if time.monotonic() - last_sweep > SWEEP:
                    last_sweep = time.monotonic()
                    self.sweep()
            except Exception:  # a lost database: the next beat tries again
                log.exception("heartbeat failed")

    def get(self, key: str, *, client: str, token: str | None) -> OpenSession:
        """The session under `key`, opened by `token` (and noted in the database) on its first call."""
        if (found := self._open.get(key)) is not None:
            return found
        self.start()
        with self._opening:  # two first calls of one session at once open it once
            if (found := self._open.get(key)) is not None:
                return found
            session = OpenSession(id="ses-" + uuid.uuid4().hex[:16], client=client, token=token)
            self.service.agent_session_opened(
                session.id, server=self.server, client=client, transport=self.transport, now=time.time()
            )
            with self._lock:  # end_token lists the open sessions under it: no insert while it iterates
                self._open[key] = session
            return session

    def end(self, key: str, *, why: str) -> SessionEnded | None:
        """End the session under `key`, if it made any call: its open runs end (R17)."""
        with self._lock:
            session = self._open.pop(key, None)
        if session is None:
            return None
        ended = self.service.agent_session_ended(session.id, why=why, now=time.time())
        if ended.runs:
            runs = ", ".join(run for run, _ in ended.runs)
            log.info("session %s (%s) %s: its open runs ended (R17): %s", session.id, session.client, why, runs)
        return ended

    def end_token(self, token: str | None, *, why: str) -> None:
        """End every session `token` opened (a revoked token's sessions end with it, R17); None: every session."""
        with self._lock:
            keys = [key for key, session in self._open.items() if token in (None, session.token)]
        for key in keys:
            self.end(key, why=why)

    def stop(self, *, why: str = "the server stopped") -> None:
        """End every session, then note that this server stopped."""
        self.end_token(None, why=why)
        self._stop.set()
        LIVE_HERE.discard(self.server)
        if self._started:
            self.service.agent_server_alive(self.server, now=time.time(), stopped=True)
