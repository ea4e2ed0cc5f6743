"""Shortcuts (R22): when memory answers a workflow step well enough to skip it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .weights import at_least

DEFAULT_MIN_WEIGHT = 0.9  # R22: a step's minimum weight when it names none (the format's default too)

#: R22's tie-break between equally heavy answers: World before User before Flow.
GRAPH_ORDER = {"world": 0, "user": 1, "flow": 2}


@dataclass(frozen=True)
class Answer:
    """A fact that answers a step: its graph, weight and status, and what the caller keeps of it."""

    graph: str
    weight: float
    status: str
    fact: Any = None


def shortcut_allowed(*, no_memory_shortcuts: bool, weight: float, min_weight: float, status: str) -> bool:
    """R22: an active answer at or above the step's minimum weight, shortcuts not switched off (R14)."""
    return not no_memory_shortcuts and status == "active" and at_least(weight, min_weight)


def choose_shortcut(answers: Iterable[Answer], *, min_weight: float, no_memory_shortcuts: bool) -> Answer | None:
    """R22: the heaviest allowed answer; between equal weights World, then User, then Flow, then the
    first found; None when no answer is allowed (or R14 switched shortcuts off)."""
    best: Answer | None = None
    for a in answers:
        allowed = shortcut_allowed(
            no_memory_shortcuts=no_memory_shortcuts, weight=a.weight, min_weight=min_weight, status=a.status
        )
        if allowed and (best is None or (a.weight, -GRAPH_ORDER[a.graph]) > (best.weight, -GRAPH_ORDER[best.graph])):
            best = a
    return best
