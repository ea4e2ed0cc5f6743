"""Where a drawn graph's entities sit: positions computed once, in Python, so the drawing is still.

Deterministic: the same entities and facts give the same positions, whatever order they come in
(sorted first, a fixed seed), so a rerun redraws the same picture and a page may cache it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable

import networkx as nx
import numpy as np

SEED = 7
#: The spring layout is dense (n x n arrays, as networkx's below 500 entities; above, networkx needs scipy,
#: which is not a dependency): past this many, the most connected are laid out by springs, the rest around them.
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
    pos = _spring(core_graph, iterations=100 if len(core) <= 150 else 50)
    scale = max(150.0, SPACING * math.sqrt(len(core)) / 1.6)
    out = {n: _spread(pos[n][0], pos[n][1], scale) for n in core}
    if len(names) > len(core):
        _around(g, out, scale)
    return out


def _spring(g: nx.Graph, *, iterations: int, threshold: float = 1e-4) -> dict[str, tuple[float, float]]:
    """networkx's spring layout (Fruchterman-Reingold, `spring_layout(method="force")`): the same
    start (its seeded random positions), forces, cooling, stop and scale to the unit disc, computed
    on two coordinate arrays instead of (n, n, 2) ones, in single precision: the n x n arrays take
    half the memory and the iterations a fifth of the time at 400 entities (B8). The sums run in
    another order and to fewer digits, and the iterations amplify that: entities sit elsewhere than
    networkx would put them (up to a third of the drawing's radius at 400 entities, measured), a
    different picture of the same graph, as deterministic: the same input, the same positions."""
    a = nx.to_numpy_array(g, dtype=np.float32)
    n = a.shape[0]
    start = np.random.RandomState(SEED).rand(n, 2).astype(np.float32)
    k = np.float32(math.sqrt(1.0 / n))
    t = max(np.ptp(start[:, 0]), np.ptp(start[:, 1])) * 0.1  # the largest step, cooled linearly
    dt = t / (iterations + 1)
    x, y = start[:, 0].copy(), start[:, 1].copy()
    for _ in range(iterations):
        dx, dy = x[:, None] - x[None, :], y[:, None] - y[None, :]
        d = np.maximum(np.sqrt(dx * dx + dy * dy), 0.01)
        force = (k * k) / (d * d) - a * d / k  # repulsion between all, attraction along facts
        fx, fy = (dx * force).sum(axis=1), (dy * force).sum(axis=1)
        step = t / np.maximum(np.sqrt(fx * fx + fy * fy), 0.01)
        mx, my = fx * step, fy * step
        x += mx
        y += my
        t -= dt
        if math.sqrt(float((mx * mx).sum() + (my * my).sum())) / n < threshold:
            break
    out = nx.rescale_layout(np.stack([x, y], axis=1), scale=1.0)
    return {name: (float(out[i][0]), float(out[i][1])) for i, name in enumerate(g)}


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
