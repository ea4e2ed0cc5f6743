"""A graph drawn with what changed since an earlier moment (R32): facts added, gone, and weights that moved."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import cast

from ..plain import Obj


def fact_key(f: Mapping[str, object]) -> tuple[object, ...]:
    """A fact as two moments both name it: its subject, relation and object (ids may differ)."""
    s, o = cast("Obj", f["subject"]), cast("Obj", f["object"])
    return (s["name"], s["kind"], f["relation"], o.get("name"), o.get("kind"), o.get("value"))


def arrow(old: float, new: float) -> str:
    """A weight's move: up, down or the same."""
    return "\u2191" if new > old else "\u2193" if new < old else "="


ADDED_COLOR = "#2ca02c"  # a fact added since the earlier moment
GONE_COLOR = "#c7c7c7"  # a fact gone since it, drawn dashed
MOVED_COLOR = "#ff7f0e"  # a fact whose weight moved (its title says how: ↑ or ↓)


@dataclass
class Compare:
    """What changed in a graph since moment `since` (R32): facts added, gone (as they stood), earlier weights moved."""

    since: int
    added: set[tuple[object, ...]] = field(default_factory=set)
    gone: list[Obj] = field(default_factory=list)
    weights: dict[tuple[object, ...], float] = field(default_factory=dict)


def compare(before: Iterable[Mapping[str, object]], after: Iterable[Mapping[str, object]], since: int) -> Compare:
    """A Compare from the facts some moment changed, as they stood before and after (one graph's facts_between)."""
    a, b = {fact_key(f): f for f in before}, {fact_key(f): f for f in after}
    return Compare(
        since,
        added={k for k in b if k not in a},
        gone=[dict(a[k]) for k in a if k not in b],
        weights={k: cast(float, a[k]["weight"]) for k in a if k in b and a[k]["weight"] != b[k]["weight"]},
    )


def change_of(f: Obj, cmp: Compare | None, gone: bool) -> tuple[str, str]:
    """How an edge changed since the earlier moment, and what its title says of it."""
    if cmp is None:
        return "", ""
    if gone:
        return "gone", f"\ngone since moment {cmp.since} (drawn as it stood then)"
    k = fact_key(f)
    if k in cmp.added:
        return "added", f"\nadded since moment {cmp.since}"
    if k in cmp.weights:
        old, new = cmp.weights[k], f["weight"]
        said = f"\nweight {old:.3f} {arrow(old, new)} {new:.3f} since moment {cmp.since}"
        return ("heavier" if new > old else "lighter"), said
    return "", ""
