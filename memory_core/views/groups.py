"""A graph's communities drawn (#39): one node a community, the facts between two on their edge."""

from __future__ import annotations

from ..plain import Obj
from .communities import Overview
from .text import plural
from .viz import KIND_COLORS, Plan, line, node, wrapped


def plan(ov: Overview, *, most: int = 2) -> Plan:
    """A graph's communities, the largest in the middle, each joined to the `most` it shares most facts with (#39)."""
    colors = list(KIND_COLORS.values())
    nodes = [
        node(
            f"community:{c.id}",
            wrapped(c.label, 24) + f"\n{plural(c.size, 'entity', 'entities')}",
            "community",
            0 if i == 0 else 1,
            f"{c.label}: {plural(c.size, 'entity', 'entities')}\n" + ", ".join(c.members[:12]) + "\nclick: open it",
            central=c.central,
            color=colors[i % len(colors)],
            size=min(40.0, 8 + 3 * c.size**0.5),
        )
        for i, c in enumerate(ov.communities)
    ]
    heaviest = sorted(ov.links, key=lambda x: (-x[2], x[:2]))
    kept = {k for c in ov.communities for k in [x for x in heaviest if c.id in x[:2]][:most]}
    edges = [
        line(f"community:{a}", f"community:{b}", f"{plural(n, 'fact')} between these two communities", **_joined(n))
        for a, b, n in sorted(kept)
    ]
    return Plan(nodes, edges, nodes[0]["id"] if nodes else "", reason="" if nodes else "this graph holds no fact yet")


def _joined(n: int) -> Obj:
    """The edge between two communities: how many facts join them, as wide as their root."""
    return dict(label=plural(n, "fact"), weight=0.5, width=1 + min(6.0, n**0.5 / 2), dashes=False)
