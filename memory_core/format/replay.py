"""The event engine: applies scenario events to the service, for the replay, the notebook and the MCP tools alike."""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import get_type_hints

from .. import errors as E
from ..plain import Obj
from ..store.retry import retryable, run_use_case
from ..usecases.facade import MemoryService
from ..usecases.results import Outcome, ReadResult
from . import events as ev
from .checks import Scenario


class EventFailed(Exception):
    """An error no check could foresee (a disk full, a lost server) while an event ran; `index` None: the setup."""

    def __init__(self, index: int | None, do: str, error: BaseException, *, where: str | None = None) -> None:
        cause = error
        while cause.__context__ is not None:  # the first error, not one met while undoing it (a
            cause = cause.__context__  # savepoint SQLite dropped when a disk full rolled all back)
        if where is None:
            where = f"events[{index}] ({do})" if index is not None else "the setup (organizations, people, workflows)"
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        super().__init__(f"{where} failed: {first}")
        self.index, self.do, self.cause, self.error = index, do, cause, error


@dataclass
class EventResult:
    """One event's fate: applied with its outcome, or refused with the reason and a sentence."""

    index: int
    do: str
    outcome: Outcome | None = None
    reason: str | None = None
    message: str | None = None

    @property
    def refused(self) -> bool:
        return self.reason is not None


#: What a replay tells after each event: (events done, events in all).
Progress = Callable[[int, int], None] | None

#: The one table of events to use cases: each `do` to its facade method, which takes the event's fields by name
#: (its first, positional one named with `_id`) and the arguments of a read as given as `given`.
HANDLERS = {do: {"step": "run_step", "return": "return_work"}.get(do, do) for do in ev.EVENT_MODELS}

#: The result each kind of event returns (its use case's), as the notebook reads it back.
BY_EVENT: dict[str, type[Outcome]] = {
    do: get_type_hints(inspect.unwrap(getattr(MemoryService, method)))["return"] for do, method in HANDLERS.items()
}


@functools.cache
def _parameters(method: str) -> tuple[str, tuple[str, ...]]:
    """The event field a facade method takes first ("": none), and those it takes by name."""
    params = inspect.signature(getattr(MemoryService, method)).parameters.values()
    first = [p.name.removesuffix("_id") for p in params if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self"]
    return (first or [""])[0], tuple(p.name for p in params if p.kind is p.KEYWORD_ONLY)


def apply(service: MemoryService, event: Obj) -> Outcome:
    """Apply one checked event (format/checks.event) as its use case; a refusal raises E.Refusal."""
    method = HANDLERS[event["do"]]
    first, named = _parameters(method)
    fields = {"given" if k == "args_given" else k: v for k, v in event.items()}
    args = [fields[first]] if first else []
    return getattr(service, method)(*args, **{k: fields[k] for k in named if k in fields})


@dataclass
class EventEngine:
    """Runs checked events in order against one memory, keeping the replay's two logs."""

    service: MemoryService
    reads: list[Obj] = field(default_factory=list)
    refused: list[Obj] = field(default_factory=list)
    moments: list[int] = field(default_factory=list)  # the memory's clock right after each event (R32)

    def setup(self, scenario: Scenario) -> None:
        """Create the scenario's organizations, people and workflows."""
        self.service.load_setup(
            organizations=scenario.organizations, people=scenario.people, workflows=scenario.workflows
        )

    def apply(self, index: int, event: Obj) -> EventResult:
        """Apply one checked event; a refusal changes nothing and is logged."""
        result = EventResult(index=index, do=event["do"])
        try:
            result.outcome = apply(self.service, event)
        except E.Refusal as refusal:
            result.reason, result.message = refusal.reason, refusal.message
            self.refused.append(
                {"event": index, "do": event["do"], "reason": refusal.reason, "message": refusal.message}
            )
        if event["do"] == "read":
            answered = result.outcome.result if isinstance(result.outcome, ReadResult) else None
            asked = {"turn": event["turn"], "call": event["call"], "args": copy.deepcopy(event["args_given"])}
            self.reads.append({"event": index, **asked, "outcome": result.reason or "ok", "result": answered})
            if isinstance(result.outcome, ReadResult) and result.outcome.near is not None:
                self.reads[-1]["near"] = result.outcome.near  # beside `result`, which it is not part of (R23)
        self.moments.append(self.service.clock())
        return result

    def state(self) -> Obj:
        """The memory as `memory-state/1`, with this replay's reads and refusals."""
        return {**self.service.export_state(), **self._logs()}

    def state_at(self, index: int) -> Obj:
        """The memory right after event `index` from its history (R32, R33), with the logs of events 0 to `index`."""
        return {**self.service.state_at(self.moments[index]), **self._logs(index)}

    def _logs(self, last: int | None = None) -> Obj:
        """Copies of the reads and refusals (of events 0 to `last`)."""
        kept = {k: [r for r in getattr(self, k) if last is None or r["event"] <= last] for k in ("reads", "refused")}
        return copy.deepcopy(kept)


def replay(
    scenario: Scenario, service: MemoryService, *, strict: bool = False, progress: Progress = None
) -> tuple[EventEngine, EventResult | None]:
    """Run a whole scenario; with `strict`, stop at the first refusal and return it."""
    engine = EventEngine(service)
    try:
        engine.setup(scenario)
    except Exception as exc:
        raise EventFailed(None, "setup", exc) from exc
    total = len(scenario.events)
    for i, event in enumerate(scenario.events):
        try:
            result = engine.apply(i, event)
        except Exception as exc:
            raise EventFailed(i, event["do"], exc) from exc
        if progress:
            progress(i + 1, total)
        if strict and result.refused:
            return engine, result
    return engine, None


def replay_into(
    scenario: Scenario, service: MemoryService, *, where: str, strict: bool = False, progress: Progress = None
) -> tuple[EventEngine, EventResult | None, Obj]:
    """Replay a whole scenario into the empty database `where` names, all or nothing, retried whole after a lost race."""
    last: list[EventFailed] = []

    def attempt() -> tuple[EventEngine, EventResult | None, Obj]:
        ran = False
        try:
            with service.loading() as box:
                if box.holds_memory():
                    raise E.DatabaseNotEmpty(where)
                try:
                    engine, stopped = replay(scenario, box, strict=strict, progress=progress)
                except EventFailed as failed:
                    conflict = next((e for e in (failed.error, failed.cause) if retryable(e)), None)
                    if conflict is not None:  # lost a race with another writer: the whole again
                        last[:] = [failed]
                        raise conflict from failed
                    raise
                state = engine.state()
                ran = True
        except Exception as exc:
            if ran and not retryable(exc):  # every event ran; the one commit failed (a disk full)
                raise EventFailed(None, "commit", exc, where="the commit after the last event") from exc
            raise
        engine.service = service  # the box is closed; later reads go to the database itself
        return engine, stopped, state

    try:
        return run_use_case(service, attempt)
    except Exception as exc:
        if last and exc in (last[0].error, last[0].cause):
            raise last[0] from exc
        raise
