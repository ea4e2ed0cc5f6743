"""Retries for conflicts between concurrent use cases: each attempt is a fresh transaction."""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from .dialect import DIALECTS, driver_error

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

DEADLINE = 30.0  # seconds from the first attempt; past it, the last conflict is raised
FIRST_PAUSE = 0.005
LONGEST_PAUSE = 0.4


def retryable(exc: BaseException) -> bool:
    """Whether a database error is a conflict another attempt can get past, or a read whose server went away."""
    if getattr(exc, "retry", False) is True:
        return True
    return any(d.conflict(driver_error(exc)) for d in DIALECTS)


def _no_pipeline_noise(record: logging.LogRecord) -> bool:
    """False for psycopg's "error ignored terminating <Pipeline>", logged after a failed batch whose error is raised (#26)."""
    args = record.args if isinstance(record.args, tuple) else ()
    noise = record.msg == "error ignored terminating %r: %s" and args and type(args[0]).__name__.endswith("Pipeline")
    return not noise


logging.getLogger("psycopg").addFilter(_no_pipeline_noise)  # once: at this module's import


def run_use_case(owner: Any, call: Callable[[], T]) -> T:
    """The one place retry is applied (use cases, replays): `call` until it wins a race, for DEADLINE s at most."""
    if getattr(getattr(owner, "database", None), "in_one_transaction", False):  # a sandbox's call runs once
        return call()
    deadline = time.monotonic() + DEADLINE
    step = FIRST_PAUSE
    while True:
        try:
            return call()
        except Exception as exc:
            if not retryable(exc):
                raise
            wait = step * 2 * random.random()  # uniformly up to twice the step (jitter)
            if time.monotonic() + wait > deadline:
                raise
            if owner is not None:  # counted for the owner (None: tests/backend.py)
                owner.retries = getattr(owner, "retries", 0) + 1
            time.sleep(wait)
            step = min(step * 2, LONGEST_PAUSE)


def use_case(fn: F) -> F:
    """Mark a method as a use case run through `run_use_case` (a service's own, as tests write)."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        return run_use_case(self, lambda: fn(self, *args, **kwargs))

    wrapper.__use_case__ = True  # type: ignore[attr-defined]
    return cast(F, wrapper)


def is_use_case(method: Any) -> bool:
    """Whether a method is wrapped by `use_case`."""
    return bool(getattr(method, "__use_case__", False))
