"""A graph's communities drawn (#39): one node a community (views/communities.py computes them), sized by its
entities, the facts between two written on their edge; a click opens a community around its most connected."""

from __future__ import annotations

from .communities import Overview
from .text import plural
from .viz import KIND_COLORS, Plan, wrapped


def plan(ov: Overview, *, most: int = 2) -> Plan:
    """A graph's communities (views/communities.Overview) drawn as one node each, sized by its entities, the largest in
    the middle, each joined to the `most` others it has most facts with; a click opens one around its most connected."""
    nodes = [
        {
            "id": f"community:{c.id}",
            "name": "",
            "central": c.central,
            "label": wrapped(c.label, 24) + f"\n{plural(c.size, 'entity', 'entities')}",
            "kind": "community",
            "ring": 0 if i == 0 else 1,
            "color": list(KIND_COLORS.values())[i % len(KIND_COLORS)],
            "size": min(40.0, 8 + 3 * c.size**0.5),
            "title": f"{c.label}: {plural(c.size, 'entity', 'entities')}\n"
            + ", ".join(c.members[:12])
            + "\nclick: open it",
        }
        for i, c in enumerate(ov.communities)
    ]
    heaviest = sorted(ov.links, key=lambda x: (-x[2], x[:2]))
    kept = {k for c in ov.communities for k in [x for x in heaviest if c.id in x[:2]][:most]}
    edges = [
        {
            "from": f"community:{a}",
            "to": f"community:{b}",
            "fact": None,
            "relation": "",
            "label": plural(n, "fact"),
            "weight": 0.5,
            "status": "active",
            "width": 1 + min(6.0, n**0.5 / 2),
            "dashes": False,
            "highlight": False,
            "change": "",
            "title": f"{plural(n, 'fact')} between these two communities",
        }
        for a, b, n in sorted(kept)
    ]
    return Plan(nodes, edges, nodes[0]["id"] if nodes else "", reason="" if nodes else "this graph holds no fact yet")
