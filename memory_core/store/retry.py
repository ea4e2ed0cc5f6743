"""Retries for conflicts between concurrent use cases: each attempt is a fresh transaction."""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from sqlalchemy.exc import DBAPIError

from .dialect import DIALECTS

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

DEADLINE = 30.0  # seconds from the first attempt; past it, the last conflict is raised
FIRST_PAUSE = 0.005
LONGEST_PAUSE = 0.4


def retryable(exc: BaseException) -> bool:
    """Whether a database error is a conflict another attempt can get past, or a read whose server went away."""
    if getattr(exc, "retry", False) is True:
        return True
    orig: BaseException = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    for dialect in DIALECTS:
        verdict = dialect.conflict(orig)
        if verdict is not None:
            return verdict
    return False


def pause(step: float) -> float:
    """How long to wait before the next attempt: uniformly up to twice the step (jitter)."""
    return step * 2 * random.random()


def _no_pipeline_noise(record: logging.LogRecord) -> bool:
    """False for psycopg's "error ignored terminating <Pipeline>", logged after a failed batch whose error is raised (#26)."""
    args = record.args if isinstance(record.args, tuple) else ()
    noise = record.msg == "error ignored terminating %r: %s" and args and type(args[0]).__name__.endswith("Pipeline")
    return not noise


logging.getLogger("psycopg").addFilter(_no_pipeline_noise)  # once: at this module's import


def run_retrying(fn: Callable[[], T], *, counter: Any = None) -> T:
    """Call `fn` until it does not lose a race, or until DEADLINE seconds after the first call; `counter.retries` counts."""
    deadline = time.monotonic() + DEADLINE
    step = FIRST_PAUSE
    while True:
        try:
            return fn()
        except Exception as exc:
            if not retryable(exc):
                raise
            wait = pause(step)
            if time.monotonic() + wait > deadline:
                raise
            if counter is not None:
                counter.retries = getattr(counter, "retries", 0) + 1
            time.sleep(wait)
            step = min(step * 2, LONGEST_PAUSE)


def run_use_case(owner: Any, call: Callable[[], T]) -> T:
    """The one place retry is applied: every use case of the facade and every whole replay (format/replay.py)."""
    if getattr(owner, "_sandbox", None) is not None:
        return call()
    return run_retrying(call, counter=owner)


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
