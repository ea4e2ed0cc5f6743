"""A tool's arguments checked by the scenario format's own checks (format/checks.py, format/fields.py).

Each tool's arguments become the scenario event of the same name, with what the token gives (the
organization, the person: `by` of a correction) and the ids the server chooses filled in, and that
event is checked as a scenario file's would be: the same sentences, at the argument's path.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import FormatError
from ..format.checks import EVENT_CHECKS
from ..format.fields import _join, obj, storable
from ..plain import Obj

READS = ("GraphResolve", "GraphExpand", "GraphSource")


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a call speaks for (from the token alone) and the ids the server chose for it."""

    person: str
    org: str
    run: str = ""  # the id a start_run gives its run
    turn: str = ""  # the id an open_turn gives its turn


def arguments_of(signature: Callable[..., Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A tool's arguments, (required, optional), read from the signature the SDK publishes
    (tools.py): one list of a tool's arguments, not two."""
    params = inspect.signature(signature).parameters.values()
    return (
        tuple(p.name for p in params if p.default is inspect.Parameter.empty),
        tuple(p.name for p in params if p.default is not inspect.Parameter.empty),
    )


#: The arguments of a read that are the read's own (`args` of the scenario's read event).
READ_ARGS = {
    "GraphResolve": ("name", "kind"),
    "GraphExpand": ("entity", "graph", "relation"),
    "GraphSource": ("fact", "graph"),
}


def event_of(tool: str, signature: Callable[..., Any], arguments: Any, caller: Caller) -> Obj:
    """The checked scenario event a call of `tool` (published as `signature`) stands for;
    FormatError names the argument's path."""
    storable("", arguments)
    required, optional = arguments_of(signature)
    args = obj("", arguments, required, optional)
    for key in required:
        if args[key] is None:
            raise FormatError(key, "must not be null (required)")
    given = {k: v for k, v in args.items() if v is not None or k in required}
    if tool in READS:
        own = READ_ARGS[tool]
        event = {
            "do": "read",
            "call": tool,
            "args": {k: v for k, v in given.items() if k in own},
            **{k: v for k, v in given.items() if k not in own},
        }
        try:
            return {"do": "read", **EVENT_CHECKS["read"]("", event)}
        except FormatError as exc:  # a read's own arguments are `args.X` in the scenario, `X` here
            raise FormatError(exc.path.removeprefix("args."), exc.problem) from None
    event = {"do": tool, **given, **_filled(tool, caller)}
    return {"do": tool, **EVENT_CHECKS[tool]("", event)}


def _filled(tool: str, caller: Caller) -> Obj:
    """What the token and the server give a tool's event, never its arguments."""
    if tool == "start_run":
        return {"run": caller.run, "org": caller.org, "person": caller.person}
    if tool == "open_turn":
        return {"turn": caller.turn}
    if tool in ("dispute", "retract"):
        return {"org": caller.org, "by": caller.person}
    return {}


def path_of(location: tuple[int | str, ...]) -> str:
    """A pydantic error location as the scenario format writes paths (`claims[0].subject.name`)."""
    out = ""
    for part in location:
        out = _join(out, part)
    return out
