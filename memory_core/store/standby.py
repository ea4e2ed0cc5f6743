"""Reads from a hot standby (docs/scaling.md): which server a read goes to, by WAL position."""

from __future__ import annotations

import math
import threading
import time

from sqlalchemy.engine import Engine

from .database import statement_driver
from .dialect import DIALECTS, dialect_of, driver_error

PRIMARY, STANDBY = "primary", "standby"
#: Seconds a mark taken without a write of this process stays good: the staleness bound.
FRESH = 1.0
#: Seconds a server found unreachable is not tried for a read (a write always tries the primary).
DOWN_FOR = 1.0
#: How often finish_erasure asks whether the standby has replayed the scrub (R31), and for how long
#: at most when told to wait until it is done: a standby query that conflicts with the scrub's
#: rewrite holds its replay back up to max_standby_streaming_delay (30 s by default).
REPLAY_POLL = 0.05
REPLAY_WAIT = 120.0


def lost(exc: BaseException) -> bool:
    """Whether an error says the server cannot be reached or went away (Dialect.lost), not that it refused."""
    return any(d.lost(driver_error(exc)) for d in DIALECTS)


def why(exc: BaseException) -> str:
    """The driver's first line about a lost server, for a sentence."""
    orig = driver_error(exc)
    text = str(orig).strip().splitlines()
    return text[0] if text else type(orig).__name__


class ServerLost(Exception):
    """A read's server went away while it ran: retried as a conflict is (retry.py), on the other server."""

    retry = True


class Standby:
    """A primary's hot standby as one process reads from it: its mark, its replay, servers down, reads served."""

    def __init__(self, primary: Engine, engine: Engine) -> None:
        self.engine = engine
        self.engines = {PRIMARY: primary, STANDBY: engine}
        dialect = dialect_of(primary)  # where the log is, how far replayed (statement_driver: one statement each)
        self._sql = {PRIMARY: dialect.wal_position_sql, STANDBY: dialect.replayed_sql}
        self._lock = threading.Lock()
        self._mark = 0  # the primary's WAL position a read from the standby must have replayed
        self._marked = -math.inf  # when it was taken (time.monotonic)
        self._wrote = False  # this process committed a write since the mark was taken
        self._replayed = -1  # how far the standby had replayed when last asked
        self._down = {PRIMARY: -math.inf, STANDBY: -math.inf}  # until when a server is not tried
        self.failing = {PRIMARY: False, STANDBY: False}  # the last time a server was tried, it could not be reached
        self.served = {PRIMARY: 0, STANDBY: 0}
        self.scrub_seen = False  # a deletion (R31) the standby may not have replayed the scrub of yet

    def wrote(self) -> None:
        """A write of this process committed on the primary (reached): the next read must see it."""
        self.failing[PRIMARY], self._wrote = False, True

    def lost(self, which: str) -> None:
        """A server was found unreachable: reads leave it alone for DOWN_FOR seconds; `failing` until it answers."""
        self._down[which] = time.monotonic() + DOWN_FOR
        self.failing[which] = True
        if which == PRIMARY:
            self._marked = -math.inf  # once it is back, take the mark again before trusting the standby

    def down(self, which: str) -> bool:
        """Whether reads leave the server alone now (for DOWN_FOR seconds after it was lost)."""
        return self._down[which] > time.monotonic()

    def order(self, *, fresh: bool = False) -> tuple[str, str]:
        """The server a read goes to, then the one it goes to if that one cannot be reached."""
        return (STANDBY, PRIMARY) if not fresh and self.caught_up() else (PRIMARY, STANDBY)

    def caught_up(self) -> bool:
        """Whether a read may come from the standby now (the module's docstring says when)."""
        if self.down(STANDBY):
            return False
        if self.down(PRIMARY):
            return True  # the standby as it is: the only server there is
        with self._lock:
            if self._wrote or time.monotonic() - self._marked > FRESH:
                self._wrote = False  # before the mark is taken: a commit after it sets it again
                mark = self._position(PRIMARY)
                if mark is None:
                    self.lost(PRIMARY)
                    return True
                self._mark, self._marked = max(self._mark, mark), time.monotonic()
            if self._replayed >= self._mark:
                return True
            replayed = self._position(STANDBY)
            if replayed is None:
                self.lost(STANDBY)
                return False
            return replayed >= self._mark

    def _position(self, which: str) -> int | None:
        """The primary's log position, or how far the standby replayed it (-1: none); None when it cannot be reached."""
        sql = self._sql[which]
        assert sql is not None
        try:
            with statement_driver(self.engines[which]) as db:
                answer = db.rows(sql, {})[0][0]
        except Exception as exc:
            if not lost(exc):
                raise
            return None
        self.failing[which] = False  # it answered
        if which == STANDBY:
            self._replayed = answer or -1
        return answer or (0 if which == PRIMARY else -1)

    def replayed_everything(self, timeout: float | None = 0.0) -> bool | None:
        """Whether the standby replayed all the primary holds now (R31), waiting up to `timeout` (None: REPLAY_WAIT)."""
        with self._lock:
            target = self._position(PRIMARY)
        deadline = time.monotonic() + (REPLAY_WAIT if timeout is None else timeout)
        while target is not None:
            with self._lock:
                replayed = self._position(STANDBY)
                if replayed is None:
                    return None
                if replayed >= target:
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(REPLAY_POLL)
        return None

    def close(self) -> None:
        """The standby's connections closed (the primary's are its engine's)."""
        self.engine.dispose()
