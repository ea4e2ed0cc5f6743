"""Where a focus's drawing sits (#39): a tree of columns, each relation and curve clear of every box; deterministic."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..plain import Obj

SEED = 7
FONT = 18.0  # a name's font, in the drawing's units
EDGE = 15.0  # a relation's font
CHAR = 0.55  # a character's width per font size (Arial, vis-network's font, with some room)
LINE = 1.0  # a line's height per font size (vis-network's)
GAP = 6.0  # room between two boxes
RADIUS = 140.0  # the communities' ring's radius, at least
ARROW = 7.0  # an arrowhead's half size
STEP = 8.0  # how far a crowded relation's far end moves outward at a time
BEND = 0.7  # an edge's curve: it leaves and meets its ends level (vis-network's horizontal cubic Bézier's roundness)
#: A box: half width, half height, and its centre's offset down from the node's position.
Box = tuple[float, float, float]
Point = tuple[float, float]


def arrange(focus: str, nodes: Sequence[Obj], edges: Sequence[Obj], boxes: Mapping[str, Box]) -> dict[str, Point]:
    """Positions of a focus's drawing: a tree of columns, boxes apart, spread until every relation stands clear."""
    if not nodes:
        return {}
    ids = [n["id"] for n in nodes]
    parent = {n["id"]: n["of"] for n in nodes if "of" in n}  # the node each hangs from (a ring's: the focus)
    d = _Drawn(ids, edges, boxes, {n: parent[n] for n in ids if n.startswith(("values:", "more:"))})
    first = [n for n in ids if parent.get(n, focus) == focus and n != focus]
    if any(e["from"] in first and e["to"] in first for e in edges):  # communities, joined among themselves
        pos = {focus: (0.0, 0.0)} | _circle(first, edges)
        xy = np.array([pos.get(n, (0.0, 0.0)) for n in ids], dtype=float)
    else:
        ys, col = _Tree(focus, nodes, edges, boxes).place()
        xy = d.columns(np.array([(0.0, ys[n]) for n in ids]), np.array([col[n] for n in ids]))
    up = np.array([d.at[parent[n]] if parent.get(n, focus) != focus else -1 for n in ids])
    xy = d.spread(xy, d.at[focus], up)
    return {n: (round(float(xy[i, 0]), 1), round(float(xy[i, 1]), 1)) for i, n in enumerate(ids)}


class _Drawn:
    """A drawing's nodes' boxes and its edges as arrays: what touches what, and moves that part them."""

    def __init__(self, ids: list[str], edges: Sequence[Obj], boxes: Mapping[str, Box], of: Mapping[str, str]) -> None:
        self.at = {n: i for i, n in enumerate(ids)}
        self.owner = np.array([self.at[of.get(n, n)] for n in ids])  # a box's entity (`of`), else the node itself
        self.hw, self.hh, self.down = (np.array([boxes[n][k] for n in ids]) for k in range(3))
        self.ends = np.array([(self.at[e["from"]], self.at[e["to"]]) for e in edges], dtype=int).reshape(-1, 2)
        self.named = np.array([bool(e["label"]) for e in edges], dtype=bool)
        self.sizes = np.array([_label_size(e["label"]) for e in edges]).reshape(-1, 2)
        self.target = np.array([max(boxes[e["to"]][0], 1.0) if not boxes[e["to"]][2] else 12.0 for e in edges])

    def crowded(self, xy: np.ndarray, placed: np.ndarray | None = None) -> np.ndarray:
        """The relations written on edges (among the nodes `placed`) that touch another, a box or an arrowhead."""
        on = np.ones(len(self.ends), dtype=bool) if placed is None else placed[self.ends].all(axis=1)
        named = on & self.named
        boxes = (self.hw, self.hh, self.down)
        return _crowded(xy, boxes, self.ends[named], self.sizes[named], (self.ends[on], self.target[on]))

    def clear(self, xy: np.ndarray, here: np.ndarray, x: float, placed: np.ndarray) -> bool:
        """Whether, the column `here` at `x`, every relation among the nodes `placed` stands clear, and no edge's curve
        passes through a box (a name, values) but its ends', where either is in the column (#39)."""
        xy[here, 0] = x
        on = self.ends[placed[self.ends].all(axis=1)]
        at = _curves(xy[on[:, 0]], xy[on[:, 1]])[:, :, None, :]
        centre, half = xy + np.c_[np.zeros(len(xy)), self.down], np.c_[self.hw, self.hh] + 3
        hit = ((centre - half < at) & (at < centre + half)).all(axis=3).any(axis=1)
        hit &= placed & (self.owner != self.owner[on][:, :, None]).all(axis=1) & (here[on].any(axis=1)[:, None] | here)
        return not self.crowded(xy, placed).size and not hit.any()

    def columns(self, xy: np.ndarray, col: np.ndarray) -> np.ndarray:
        """Each column's x (`col`: ring, signed by side), the nearest where the relations placed stand clear."""
        xy[:, 0] = col * 1e6  # the columns not yet placed, far away
        for side in (1, -1):
            x = 0.0
            for k in range(1, int(np.abs(col).max()) + 1):
                here, placed = col == side * k, (col * side >= 0) & (np.abs(col) <= k)
                if not here.any():
                    break
                lo = hi = self.hw[col == side * (k - 1)].max() + self.hw[here].max() + GAP
                while not self.clear(xy, here, side * (x + hi), placed) and hi < 4000:
                    lo, hi = hi, hi * 2
                while hi - lo > 4:
                    mid = (lo + hi) / 2
                    lo, hi = (lo, mid) if self.clear(xy, here, side * (x + mid), placed) else (mid, hi)
                xy[here, 0], x = side * (x + hi), x + hi
        return xy

    def spread(self, xy: np.ndarray, focus: int, up: np.ndarray) -> np.ndarray:
        """Boxes apart, and each crowded relation's far end moved outward with what hangs from it, until none is."""
        for _ in range(200):
            xy = _separate(xy, self.hw, self.hh, self.down)
            xy -= xy[focus]
            pairs = self.ends[self.named][self.crowded(xy)]
            if not pairs.size:
                break
            far = np.where(np.hypot(*xy[pairs[:, 0]].T) > np.hypot(*xy[pairs[:, 1]].T), pairs[:, 0], pairs[:, 1])
            far = np.unique(far[far != focus])
            step = np.zeros_like(xy)
            step[far] = xy[far] / np.maximum(np.hypot(*xy[far].T), 1e-6)[:, None] * STEP
            moved = step
            for _ in range(3):
                moved = step + np.where(up[:, None] >= 0, moved[up], 0.0)
            xy += moved
        return xy


def _label_size(label: str) -> tuple[float, float]:
    lines = label.split("\n")  # "" is one empty line
    return max(map(len, lines)) * CHAR * EDGE / 2 + 2, len(lines) * LINE * EDGE / 2 + 1


def _circle(first: list[str], edges: Sequence[Obj]) -> dict[str, Point]:
    """The first ring on a circle, the nodes an edge joins side by side, farther out by turns when many."""
    linked: dict[str, list[str]] = {n: [n] for n in first}
    for e in (e for e in edges if e["from"] in first and e["to"] in first):
        linked[e["from"]].append(e["to"])
        linked[e["to"]].append(e["from"])
    order = list(dict.fromkeys(m for n in first for m in linked[n]))
    r1 = max(RADIUS, len(order) * 55 / (2 * math.pi))
    radius = [r1 * (1.0 + 0.3 * (i % 3) if len(order) > 10 else 1.0) for i in range(len(order))]
    angle = [-math.pi / 2 + 2 * math.pi * i / len(order) for i in range(len(order))]
    return {n: (r * math.cos(a), r * math.sin(a)) for n, r, a in zip(order, radius, angle, strict=True)}


class _Tree:
    """A focus's tree sideways: a column a ring each side, each entity level with its children, its boxes below it."""

    def __init__(self, focus: str, nodes: Sequence[Obj], edges: Sequence[Obj], boxes: Mapping[str, Box]) -> None:
        parent = {n["id"]: n["of"] for n in nodes if "of" in n}
        self.focus, self.boxes = focus, boxes
        self.label = {n["id"]: (0.0, 0.0) for n in nodes}
        rel = {n["id"]: n.get("relation", "") for n in nodes}
        for e in edges:
            child = e["to"] if parent.get(e["to"]) == e["from"] else e["from"]
            if parent.get(child) in (e["from"], e["to"]):
                self.label[child] = max(self.label[child], _label_size(e["label"]))
                rel[child] = rel[child] or e["relation"]
        self.kids: dict[str, list[str]] = {}  # in the next column, grouped by relation
        self.under: dict[str, list[str]] = {}  # stacked below, in the same column
        for n in sorted((n["id"] for n in nodes if n["id"] in parent), key=lambda n: (rel[n], n)):
            (self.under if n.startswith(("values:", "more:")) else self.kids).setdefault(parent[n], []).append(n)
        self.y: dict[str, float] = {}
        self.col: dict[str, int] = {}

    def place(self) -> tuple[dict[str, float], dict[str, int]]:
        """Each node's y and column: the first ring's first half of the height on the right, the rest on the left."""
        first = self.kids.get(self.focus, [])
        tall = [self._height(n) for n in first]
        half, total = 0.0, sum(tall)
        sides: tuple[list[str], list[str]] = ([], [])
        for n, h in zip(first, tall, strict=True):
            sides[half + h / 2 > total / 2 and bool(sides[0])].append(n)
            half += h
        self._stack(self.focus, 0.0, 0)
        for side, column in zip((1, -1), sides, strict=True):
            free: dict[int, tuple[float, ...]] = {}
            for n in column:
                self._put(n, side, free)
            mine = [m for n in column for m in self._all(n)]
            middle = (min((self.y[m] for m in mine), default=0.0) + max((self.y[m] for m in mine), default=0.0)) / 2
            self.y |= {m: self.y[m] - middle for m in mine}
        return self.y, self.col

    def _all(self, n: str) -> list[str]:
        return [n, *self.under.get(n, []), *(m for k in self.kids.get(n, []) for m in self._all(k))]

    def _height(self, n: str) -> float:
        own = sum(2 * self.boxes[m][1] + GAP for m in (n, *self.under.get(n, [])))
        return max(own, sum(self._height(k) for k in self.kids.get(n, [])))

    def _put(self, n: str, col: int, free: dict[int, tuple[float, ...]]) -> float:
        """`n` and what hangs from it in column `col` and beyond, below what stands above (`free`); its y."""
        out = 1 if col > 0 else -1
        kids = [self._put(k, col + out, free) for k in self.kids.get(n, [])]
        bottom, above, words = free.get(col, (-math.inf, -math.inf, 0.0))
        words += self.label[n][1] + GAP
        # below the box above it, with room for its curve, which leaves level, to rise past that box's corner (#39)
        least = max(bottom + 2 * GAP + self.boxes[n][1] - self.boxes[n][2], above + 2 * words)
        aslant = self._aslant(n, self.kids[n][len(kids) // 2]) if len(kids) % 2 else 0
        mid = (kids[0] + kids[-1]) / 2 + aslant if kids else least
        y = max(mid, least)
        if kids and y > mid:  # pushed down by what stands above it: its children too
            shift = y - mid
            self.y |= {m: self.y[m] + shift for k in self.kids[n] for m in self._all(k)}
            free |= {k: (free[k][0] + shift, free[k][1] + shift, free[k][2]) for k in free if abs(k) > abs(col)}
        y = 0.0 if y == -math.inf else y
        free[col] = (self._stack(n, y, col), y, self.label[n][1])
        return y

    def _aslant(self, n: str, kid: str) -> float:
        """How far below its middle child an entity stands, so the relation half way between them clears both."""
        (_, ph, pd), (_, kh, kd) = self.boxes[n], self.boxes[kid]
        return 2 * max(ph - pd, kh + kd) + 2 * (self.label[kid][1] + GAP)

    def _stack(self, n: str, y: float, col: int) -> float:
        """`n` at `y` with its boxes (values, "+N more") one under another just below it, the focus's "+N more" above
        it, where no other entity stands (#39); the bottom of the last below."""
        self.y[n], self.col[n] = y, col
        ends = [y + self.boxes[n][2] + self.boxes[n][1], y + self.boxes[n][2] - self.boxes[n][1]]  # bottom, top
        for m in self.under.get(n, []):
            up = n == self.focus and m.startswith("more:")
            self.y[m], self.col[m] = ends[up] + (-1) ** up * (GAP + self.boxes[m][1]), col
            ends[up] += (-1) ** up * (2 * self.boxes[m][1] + GAP)
        return ends[0]


def _crowded(
    xy: np.ndarray,
    boxes: tuple[np.ndarray, ...],
    ends: np.ndarray,
    sizes: np.ndarray,
    arrows: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """The relations written on edges that touch another, a node's box or an arrowhead (their edges' indices)."""
    hw, hh, down = boxes
    mid = (xy[ends[:, 0]] + xy[ends[:, 1]]) / 2
    every, radius = arrows
    a, b = xy[every[:, 0]], xy[every[:, 1]]
    tip = b + np.sign(a - b) * [1, 0] * (radius + ARROW)[:, None]  # a curve meets its end level (BEND)
    cx = np.concatenate([mid[:, 0], xy[:, 0], tip[:, 0]])
    cy = np.concatenate([mid[:, 1], xy[:, 1] + down, tip[:, 1]])
    w = np.concatenate([sizes[:, 0], hw, np.full(len(tip), ARROW)])
    h = np.concatenate([sizes[:, 1], hh, np.full(len(tip), ARROW)])
    n = len(mid)
    ox = w[:n, None] + w[None, :] + 2 - np.abs(cx[:n, None] - cx[None, :])
    oy = h[:n, None] + h[None, :] + 2 - np.abs(cy[:n, None] - cy[None, :])
    hit = (ox > 0) & (oy > 0)
    hit[np.arange(n), np.arange(n)] = False
    i, j = np.nonzero(hit)
    return np.unique(i[(j >= n) | (j > i)])  # of two relations that touch, one moves


def _curves(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """97 points along each edge's curve from `a` to `b` as vis-network draws it (BEND)."""
    t = np.linspace(0, 1, 97)[None, :, None]
    a, b, bend = a[:, None, :], b[:, None, :], BEND * (a - b)[:, None, :] * [1, 0]
    return (1 - t) ** 3 * a + 3 * t * (1 - t) ** 2 * (a - bend) + 3 * t**2 * (1 - t) * (b + bend) + t**3 * b


def _separate(xy: np.ndarray, half_w: np.ndarray, half_h: np.ndarray, down: np.ndarray) -> np.ndarray:
    """Overlapping boxes pushed apart along the line between their centres, every pair compared; deterministic."""
    i, j = np.triu_indices(len(xy), 1)
    for _ in range(2000):
        cx, cy = xy[:, 0], xy[:, 1] + down
        dx, dy = cx[i] - cx[j], cy[i] - cy[j]
        ox = half_w[i] + half_w[j] + GAP - np.abs(dx)
        oy = half_h[i] + half_h[j] + GAP - np.abs(dy)
        hit = (ox > 0) & (oy > 0)
        if not hit.any():
            break
        a, b, dx, dy, ox, oy = i[hit], j[hit], dx[hit], dy[hit], ox[hit], oy[hit]
        d = np.hypot(dx, dy)
        angle = (a * 7 + b * 13) % 360 * (math.pi / 180)  # the same centre: a direction fixed by the two
        ux = np.where(d > 1e-6, dx / np.maximum(d, 1e-6), np.cos(angle))
        uy = np.where(d > 1e-6, dy / np.maximum(d, 1e-6), np.sin(angle))
        depth = np.minimum(ox, oy) * 0.5 + 0.5
        n = len(xy)
        xy[:, 0] += np.bincount(a, ux * depth, n) - np.bincount(b, ux * depth, n)
        xy[:, 1] += np.bincount(a, uy * depth, n) - np.bincount(b, uy * depth, n)
    return xy
