"""Shortcuts (R22): when memory answers a workflow step well enough to skip it."""

from __future__ import annotations

from .weights import at_least

DEFAULT_MIN_WEIGHT = 0.9  # R22


def shortcut_allowed(*, no_memory_shortcuts: bool, weight: float, min_weight: float, status: str) -> bool:
    """R22: an active answer at or above the step's minimum weight, shortcuts not switched off (R14)."""
    return not no_memory_shortcuts and status == "active" and at_least(weight, min_weight)
