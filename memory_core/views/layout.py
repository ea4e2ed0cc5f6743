"""Where a drawn graph's entities sit: positions computed once, in Python, so the drawing is still.

Deterministic: the same entities and facts give the same positions, whatever order they come in
(sorted first, a fixed seed), so a rerun redraws the same picture and a page may cache it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable

import networkx as nx

SEED = 7
#: networkx's spring layout is dense (numpy) below 500 entities and needs scipy above, which is not a
#: dependency: past this many, the most connected are laid out by springs and the rest around them.
SPRING_LIMIT = 450
SPACING = 90  # pixels between neighbouring entities, about: room for a label under each


def positions(nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> dict[str, tuple[float, float]]:
    """Pixel positions for each node: a spring layout with a fixed seed, scaled to the graph's size."""
    names = sorted(set(nodes))
    if not names:
        return {}
    g = nx.Graph()
    g.add_nodes_from(names)
    g.add_edges_from(sorted({(a, b) if a <= b else (b, a) for a, b in edges if a != b and a in g and b in g}))
    if len(names) == 1:
        return {names[0]: (0.0, 0.0)}
    by_degree = sorted(names, key=lambda n: (-g.degree(n), n))
    core = sorted(by_degree[:SPRING_LIMIT])
    sub = g.subgraph(core)
    core_graph = nx.Graph()
    core_graph.add_nodes_from(core)
    core_graph.add_edges_from(sorted(sub.edges()))
    pos = nx.spring_layout(core_graph, seed=SEED, iterations=100 if len(core) <= 150 else 50, method="force", scale=1.0)
    scale = max(150.0, SPACING * math.sqrt(len(core)) / 1.6)
    out = {n: _spread(float(pos[n][0]), float(pos[n][1]), scale) for n in core}
    if len(names) > len(core):
        _around(g, out, scale)
    return out


def _spread(x: float, y: float, scale: float) -> tuple[float, float]:
    """A spring layout packs hubs in its middle, where names then pile up: distances from the centre
    are eased (r ** 0.6 of the unit disc), which opens the middle and keeps the edge of the drawing."""
    r = math.hypot(x, y)
    f = scale * (r**0.6 / r if r > 1e-9 else 0.0)
    return round(x * f, 1), round(y * f, 1)


def _around(g: nx.Graph, out: dict[str, tuple[float, float]], scale: float) -> None:
    """Entities past the spring layout: each on a small ring around a placed neighbour (breadth
    first from the laid-out ones); those not connected to them on a ring outside the drawing."""
    queue = deque(sorted(out))
    placed_around: dict[str, int] = {}
    while queue:
        a = queue.popleft()
        for b in sorted(g[a]):
            if b in out:
                continue
            k = placed_around.get(a, 0)
            placed_around[a] = k + 1
            angle = k * 2.399963  # the golden angle: rings fill evenly
            radius = SPACING * (0.6 + 0.25 * (k // 8))
            out[b] = (round(out[a][0] + radius * math.cos(angle), 1), round(out[a][1] + radius * math.sin(angle), 1))
            queue.append(b)
    rest = sorted(n for n in g if n not in out)
    ring = scale * 1.25 + SPACING
    for i, n in enumerate(rest):
        angle = 2 * math.pi * i / len(rest)
        out[n] = (round(ring * math.cos(angle), 1), round(ring * math.sin(angle), 1))
