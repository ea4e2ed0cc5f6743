"""Bounded retries for conflicts between concurrent use cases (SQLite busy, PostgreSQL
serialization failures, deadlocks and unique violations): each attempt is a fresh transaction."""

from __future__ import annotations

import functools
import random
import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

F = TypeVar("F", bound=Callable[..., Any])
ATTEMPTS = 40
FIRST_PAUSE = 0.005
LONGEST_PAUSE = 0.4
_PG_RETRY = {"40001", "40P01", "23505"}  # serialization failure, deadlock, unique violation (a racing insert)


def retryable(exc: BaseException) -> bool:
    """Whether a database error is a conflict another attempt can get past: SQLAlchemy's wrapped
    errors, or the driver's own (the probes run on the driver, probes.py)."""
    if isinstance(exc, DBAPIError):
        orig: BaseException = exc.orig or exc
        operational, integrity = isinstance(exc, OperationalError), isinstance(exc, IntegrityError)
    elif isinstance(exc, sqlite3.Error):
        orig = exc
        operational, integrity = isinstance(exc, sqlite3.OperationalError), isinstance(exc, sqlite3.IntegrityError)
    elif type(exc).__module__.startswith("psycopg"):
        orig, operational, integrity = exc, False, False
    else:
        return False
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if code is not None:
        return code in _PG_RETRY
    text = str(orig).lower()
    return operational and ("locked" in text or "busy" in text) or (integrity and "unique" in text)


def use_case(fn: F) -> F:
    """Run a service method again, with bounded jittered backoff, when it lost a race."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(self, "_sandbox", None) is not None:
            return fn(self, *args, **kwargs)  # inside a sandbox there is one transaction, no race
        pause = FIRST_PAUSE
        for attempt in range(ATTEMPTS):
            try:
                return fn(self, *args, **kwargs)
            except Exception as exc:
                if attempt == ATTEMPTS - 1 or not retryable(exc):
                    raise
                self.retries = getattr(self, "retries", 0) + 1
                time.sleep(pause * (0.5 + random.random()))
                pause = min(pause * 2, LONGEST_PAUSE)
        raise AssertionError("unreachable")

    return cast(F, wrapper)
