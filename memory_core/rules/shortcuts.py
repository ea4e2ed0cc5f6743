"""Shortcuts (R22): when memory answers a workflow step well enough to skip it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .vocabulary import GRAPHS
from .weights import WEIGHT_DECIMALS, at_least

DEFAULT_MIN_WEIGHT = 0.9  # R22: a step's minimum weight when it names none (the format's default too)

#: R22's tie-break between equally heavy answers: World before User before Flow, as GRAPHS lists them.
GRAPH_ORDER = {g: i for i, g in enumerate(GRAPHS)}


@dataclass(frozen=True)
class Candidate:
    """A fact that may answer a step: its graph, weight and status, and what the caller keeps of it."""

    graph: str
    weight: float
    status: str
    fact: Any = None


def choose_shortcut(answers: Iterable[Candidate], *, min_weight: float, no_memory_shortcuts: bool) -> Candidate | None:
    """R22: the heaviest active answer of at least `min_weight` (ties: World, User, Flow, first found), or None."""
    if no_memory_shortcuts:  # R14: every step runs
        return None
    allowed = [a for a in answers if a.status == "active" and at_least(round(a.weight, WEIGHT_DECIMALS), min_weight)]
    return max(allowed, key=lambda a: (a.weight, -GRAPH_ORDER[a.graph]), default=None)  # max keeps the first of ties


def shortcut_margin(*, status: str, weight: float, min_weight: float) -> tuple[float | None, str]:
    """How far a fact stands from a shortcut at `min_weight` (R22), and why; disputed or retracted: none (R28)."""
    if status == "retracted":
        return None, "Retracted: never served, so it never skips a step, whatever its weight (R28)."
    if status == "disputed":
        return None, "Disputed (weight below 0.5): not served, so it skips no step until it weighs 0.5 again (R28)."
    margin = weight - min_weight
    if at_least(weight, min_weight):
        return margin, f"At or above {min_weight:g}: a step naming this question is skipped (R22), unless R14 is on."
    return margin, f"Below {min_weight:g}: a step naming this question runs (R22)."
