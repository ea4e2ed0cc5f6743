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


class _PipelineNoise(logging.Filter):
    """psycopg's "error ignored terminating <Pipeline>", logged after a failed batch whose own error is raised (#26)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not (
            record.msg == "error ignored terminating %r: %s" and args and type(args[0]).__name__.endswith("Pipeline")
        )


def quiet_pipelines() -> None:
    """Drop psycopg's pipeline-termination noise (once per process)."""
    log = logging.getLogger("psycopg")
    if not any(isinstance(f, _PipelineNoise) for f in log.filters):
        log.addFilter(_PipelineNoise())


quiet_pipelines()


def run_retrying(
    fn: Callable[[], T], *, on_retry: Callable[[BaseException], None] | None = None, started: float | None = None
) -> T:
    """Call `fn` until it does not lose a race, or until DEADLINE seconds after the first call (or `started`)."""
    deadline = (time.monotonic() if started is None else started) + DEADLINE
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
            if on_retry is not None:
                on_retry(exc)
            time.sleep(wait)
            step = min(step * 2, LONGEST_PAUSE)


def run_use_case(owner: Any, call: Callable[[], T]) -> T:
    """The one place retry is applied: every use case of the facade and every whole replay (format/replay.py)."""
    if getattr(owner, "_sandbox", None) is not None:
        return call()
    started = time.monotonic()
    try:
        return call()  # the hot path: no retry loop is built for a call that wins
    except Exception as exc:
        if not retryable(exc):
            raise
        first = exc

    def counted(_: BaseException) -> None:
        owner.retries = getattr(owner, "retries", 0) + 1

    counted(first)
    time.sleep(pause(FIRST_PAUSE))  # the first attempt lost a race: wait as the loop would
    return run_retrying(call, on_retry=counted, started=started)


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
