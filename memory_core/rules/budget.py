"""Reads (R4, R19, R21): where graph reads are offered, and the MemoryProbes budget."""

from __future__ import annotations

from collections.abc import Mapping


def read_offered(*, within: str | None, step: Mapping[str, object] | None) -> bool:
    """R4, R19: reads go to the turn's own model and to model steps admitting calls, never nested work."""
    if within is not None:
        return False
    if step is None:
        return True
    return step.get("kind") == "model" and bool(step.get("admits_calls", False))


def budget_allows(*, used: int, cap: int | None) -> bool:
    """R21: each call counts one; no budget, no cap."""
    return cap is None or used < cap
