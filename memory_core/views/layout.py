"""Where a drawn graph's entities sit, computed once in Python so the drawing is still: each component laid out
by springs, its boxes (a dot, its name under it) pushed apart, the components packed in rows to fill the frame;
deterministic (sorted input, a fixed seed), so a page may cache it (docs/decisions.md, "Graph drawing")."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import networkx as nx
import numpy as np

SEED = 7
#: Past this many entities in a component, its most connected are laid out by springs (n x n arrays; networkx's
#: own needs scipy past 500, not a dependency), the rest around them.
SPRING_LIMIT = 450
#: The frame the Graphs page draws in (its iframe at a 1400 px window), whose aspect the packed components fill.
FRAME = (940.0, 620.0)
ASPECT = FRAME[0] / FRAME[1]
EDGE_FONT = 0.85  # relations on edges, against names
FONT = 14.0  # a name's font in the drawing's units
CHAR = 0.62  # a character's width per font size (Arial, vis-network's font, with some room)
LINE = 1.3  # a name's line height per font size, its outline included
GAP = 4.0  # room between two boxes, in the drawing's units
NEAR = 48.0  # how near two boxes count as near (`_near`), so the pairs found serve several steps
DEFAULT_SIZE = 12.0


@dataclass(frozen=True)
class Layout:
    """Positions in the drawing's units and the font (in the same units) names are drawn with."""

    positions: dict[str, tuple[float, float]]
    font: float


def arrange(
    nodes: Iterable[str],
    edges: Iterable[tuple[str, str]],
    sizes: Mapping[str, float] | None = None,
    labels: Mapping[str, str] | None = None,
    relation: float = 0.0,
) -> Layout:
    """Lay out each component apart, push boxes apart, pack the components; `relation`: the mean length of the
    relations written on edges (0: none), which the median edge is made long enough to hold."""
    names = sorted(set(nodes))
    if not names:
        return Layout({}, FONT)
    g, comps = _components(names, edges)
    radius, chars = _extents(names, sizes or {}, labels or {})
    index = {n: i for i, n in enumerate(names)}
    shapes = [_shape(g, c, radius[[index[n] for n in c]], relation) for c in comps]
    out = _pack(comps, shapes, index, radius, chars, FONT)
    return Layout({n: (round(float(out[i, 0]), 1), round(float(out[i, 1]), 1)) for i, n in enumerate(names)}, FONT)


def _extents(names: list[str], sizes: Mapping[str, float], labels: Mapping[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """Each name's radius (DEFAULT_SIZE unless given) and the characters of its label."""
    radius = np.array([float(sizes.get(n, DEFAULT_SIZE)) for n in names])
    return radius, np.array([len(labels.get(n, "") or "") for n in names], dtype=float)


def _components(names: list[str], edges: Iterable[tuple[str, str]]) -> tuple[nx.Graph, list[list[str]]]:
    """The graph of the names (loops and edges to names not drawn left out) and its components, largest first."""
    g = nx.Graph()
    g.add_nodes_from(names)
    g.add_edges_from(sorted({(a, b) if a <= b else (b, a) for a, b in edges if a != b and a in g and b in g}))
    return g, sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c[0]))


def _shape(g: nx.Graph, comp: list[str], radius: np.ndarray, relation: float = 0.0) -> np.ndarray:
    """A component's positions: springs, opened in the middle, stretched to the frame's aspect, scaled by the root
    of its entities (the boxes are pushed apart afterwards, only as far as they must)."""
    n = len(comp)
    written = 0.75 * relation * CHAR * FONT * EDGE_FONT + 2 * float(radius.mean()) + 8 if relation else 0.0
    if n == 1:
        return np.zeros((1, 2))
    if n == 2:
        return np.array([[-0.5, 0.0], [0.5, 0.0]]) * max(2 * radius.mean() + 40, written)
    sub = _sub(g, comp)
    pos = _spring_limited(sub)
    xy = np.array([pos[c] for c in comp], dtype=float)
    r = np.hypot(xy[:, 0], xy[:, 1])
    eased = np.where(r > 1e-9, r**0.6 / np.maximum(r, 1e-9), 0.0)  # hubs in the middle: open it
    xy = xy * eased[:, None]
    room = math.sqrt(n) * (2 * float(radius.mean()) + 24)
    stretch = math.sqrt(ASPECT) if n >= 6 else 1.0
    xy = xy * np.array([room * stretch, room / stretch]) / 2
    if written:  # relations written on edges: the median edge holds 3/4 of the mean relation, and the dots
        at = {name: i for i, name in enumerate(comp)}
        ends = np.array([(at[a], at[b]) for a, b in sub.edges()])
        median = float(np.median(np.hypot(*(xy[ends[:, 0]] - xy[ends[:, 1]]).T)))
        xy = xy * max(1.0, written / max(median, 1e-6))
    return xy


def _sub(g: nx.Graph, names: list[str]) -> nx.Graph:
    """The graph among `names`, built in their order (the layout depends on it)."""
    sub = nx.Graph()
    sub.add_nodes_from(names)
    sub.add_edges_from(sorted(g.subgraph(names).edges()))
    return sub


def _spring_limited(g: nx.Graph) -> dict[str, tuple[float, float]]:
    """Springs for a component; past SPRING_LIMIT the most connected by springs, the rest ring them."""
    names = list(g)
    if len(names) <= SPRING_LIMIT:
        return _spring(g, iterations=100 if len(names) <= 150 else 50)
    out = _spring(_sub(g, sorted(sorted(names, key=lambda n: (-g.degree(n), n))[:SPRING_LIMIT])), iterations=50)
    _around(g, out, 0.08)
    return out


def _spring(g: nx.Graph, *, iterations: int, threshold: float = 1e-4) -> dict[str, tuple[float, float]]:
    """networkx's Fruchterman-Reingold (`spring_layout(method="force")`: its seeded start, forces, cooling, scale)
    on two float32 coordinate arrays, not (n, n, 2) ones: half the memory, a fifth of the time (B8)."""
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


def _around(g: nx.Graph, out: dict[str, tuple[float, float]], step: float) -> None:
    """Entities past the spring layout, each on a small ring around a placed neighbour (breadth first)."""
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
            radius = step * (1 + 0.3 * (k // 8))
            out[b] = (out[a][0] + radius * math.cos(angle), out[a][1] + radius * math.sin(angle))
            queue.append(b)


def _boxes(radius: np.ndarray, chars: np.ndarray, font: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each entity's box around its dot: half width, half height, and its centre's offset down (the name)."""
    named = chars > 0
    half_w = np.maximum(radius, np.where(named, chars * CHAR * font / 2, 0.0))
    below = np.where(named, LINE * font + 2, 0.0)  # the name's line under the dot
    half_h = radius + below / 2
    return half_w, half_h, below / 2


def _separate(xy: np.ndarray, half_w: np.ndarray, half_h: np.ndarray, down: np.ndarray) -> np.ndarray:
    """Overlapping boxes pushed apart along the line between their centres, by the overlap's depth shared, comparing
    only pairs near enough (`_near`; B8: 400 entities in 0.2 s, 1.1 s comparing every pair); deterministic."""
    xy = xy.astype(np.float64)
    if len(xy) < 2:
        return xy
    anchor = np.full_like(xy, np.inf)
    for _ in range(2000):
        if np.abs(xy - anchor).max() > NEAR / 2:  # moved too far since the pairs were found: find them again
            near, anchor = _near(xy, half_w, half_h, down), xy.copy()
        i, j = near
        cx, cy = xy[:, 0], xy[:, 1] + down
        dx, dy = cx[i] - cx[j], cy[i] - cy[j]
        ox = half_w[i] + half_w[j] + GAP - np.abs(dx)
        oy = half_h[i] + half_h[j] + GAP - np.abs(dy)
        hit = (ox > 0) & (oy > 0)
        if not hit.any():
            break
        i, j, dx, dy, ox, oy = i[hit], j[hit], dx[hit], dy[hit], ox[hit], oy[hit]
        d = np.hypot(dx, dy)
        angle = (i * 7 + j * 13) % 360 * (math.pi / 180)  # the same centre: a direction fixed by the two
        ux = np.where(d > 1e-6, dx / np.maximum(d, 1e-6), np.cos(angle))
        uy = np.where(d > 1e-6, dy / np.maximum(d, 1e-6), np.sin(angle))
        depth = np.minimum(ox, oy) * 0.5 + 0.5
        n = len(xy)
        xy[:, 0] += np.bincount(i, ux * depth, n) - np.bincount(j, ux * depth, n)
        xy[:, 1] += np.bincount(i, uy * depth, n) - np.bincount(j, uy * depth, n)
    return xy


def _near(xy: np.ndarray, half_w: np.ndarray, half_h: np.ndarray, down: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j) whose boxes may overlap once each moved up to NEAR / 2: a sweep along x, then along y."""
    order = np.argsort(xy[:, 0], kind="stable")
    x = xy[order, 0]
    reach = half_w[order] + half_w.max() + GAP + NEAR
    end = np.searchsorted(x, x + reach, side="right")
    start = np.arange(len(x)) + 1
    counts = np.maximum(end - start, 0)
    a = np.repeat(np.arange(len(x)), counts)
    b = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(start, counts)
    i, j = order[a], order[b]
    cy = xy[:, 1] + down
    keep = np.abs(cy[i] - cy[j]) < half_h[i] + half_h[j] + GAP + NEAR
    return i[keep], j[keep]


def _pack(
    comps: list[list[str]],
    shapes: list[np.ndarray],
    index: dict[str, int],
    radius: np.ndarray,
    chars: np.ndarray,
    font: float,
) -> np.ndarray:
    """Each component's boxes pushed apart, then the components packed in rows (largest first, each centred) as wide as
    lets vis-network's fit draw the whole largest in the frame; the drawing centred on 0."""
    half_w, half_h, down = _boxes(radius, chars, font)
    placed: list[tuple[np.ndarray, np.ndarray, float, float]] = []  # ids, positions, width, height
    for comp, shape in zip(comps, shapes, strict=True):
        ids = np.array([index[n] for n in comp])
        xy = _separate(shape, half_w[ids], half_h[ids], down[ids])
        left = (xy[:, 0] - half_w[ids]).min()
        top = (xy[:, 1] + down[ids] - half_h[ids]).min()
        right = (xy[:, 0] + half_w[ids]).max()
        bottom = (xy[:, 1] + down[ids] + half_h[ids]).max()
        placed.append((ids, xy - np.array([left, top]), float(right - left), float(bottom - top)))
    margin = 3 * GAP + font
    area = sum((w + margin) * (h + margin) for _, _, w, h in placed)
    widest = max(w for _, _, w, _ in placed)
    best: tuple[float, np.ndarray] | None = None
    for k in (1.0, 0.7, 0.85, 1.2, 1.4, 1.7, 2.0, 2.5):  # the row width that lets the fit draw it largest
        out, w, h = _rows(placed, max(widest, k * math.sqrt(area * ASPECT)), margin, len(radius))
        scale = min(FRAME[0] / w, FRAME[1] / h)
        if best is None or scale > best[0] * 1.001:
            best = (scale, out)
    assert best is not None
    out = best[1]
    lo = np.min(out[:, :2] - np.stack([half_w, half_h - down], axis=1), axis=0)
    hi = np.max(out[:, :2] + np.stack([half_w, half_h + down], axis=1), axis=0)
    return out - (lo + hi) / 2


def _rows(
    placed: list[tuple[np.ndarray, np.ndarray, float, float]], row_width: float, margin: float, n: int
) -> tuple[np.ndarray, float, float]:
    """Components (ids, positions from their top left, width, height) in centred rows of at most `row_width`; the
    positions, and the width and height used."""
    out = np.zeros((n, 2))
    rows: list[list[tuple[np.ndarray, np.ndarray, float, float]]] = [[]]
    used = 0.0
    for item in placed:
        if rows[-1] and used + item[2] > row_width:
            rows.append([])
            used = 0.0
        rows[-1].append(item)
        used += item[2] + margin
    y, wide = 0.0, 0.0
    for row in rows:
        width = sum(w for _, _, w, _ in row) + margin * (len(row) - 1)
        height = max(h for _, _, _, h in row)
        x = (row_width - width) / 2
        wide = max(wide, width)
        for ids, xy, w, h in row:
            out[ids] = xy + np.array([x, y + (height - h) / 2])
            x += w + margin
        y += height + margin
    return out, wide, y - margin
