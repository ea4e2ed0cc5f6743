"""Where a focus's drawing sits (#39), computed once in Python so the drawing is still: the focus in the middle,
its neighbours in a column each side grouped by relation (the frame is wide: the fit stays large enough to read),
each with its values and "+N more" boxes below it, farther rings beside the entity they hang from (communities,
joined among themselves, on a ring); boxes (a dot and its wrapped name) pushed apart, then what stands too near
moved outward until no relation written on an edge touches another, a node or an arrowhead. Deterministic, so a
page may cache it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..plain import Obj

SEED = 7
FONT = 18.0  # a name's font, in the drawing's units
EDGE = 15.0  # a relation's font
CHAR = 0.6  # a character's width per font size (Arial, vis-network's font, with some room)
LINE = 1.25  # a line's height per font size
GAP = 6.0  # room between two boxes
NEAR = 48.0  # how near two boxes count as near (`_near`), so the pairs found serve several steps
RADIUS = 140.0  # the first ring's radius (the columns' distance), at least, and a farther ring's step
ARROW = 7.0  # an arrowhead's half size
STEP = 8.0  # how far a crowded relation's far end moves outward at a time
#: A box: half width, half height, and its centre's offset down from the node's position.
Box = tuple[float, float, float]


def arrange(
    focus: str, nodes: Sequence[Obj], edges: Sequence[Obj], boxes: Mapping[str, Box]
) -> dict[str, tuple[float, float]]:
    """Positions of a focus's drawing: rings, boxes apart, spread until every relation written stands clear."""
    if not nodes:
        return {}
    ids = [n["id"] for n in nodes]
    xy, parent = _rings(focus, nodes, edges, boxes)
    at = {n: i for i, n in enumerate(ids)}
    up = np.array([at.get(parent.get(n, focus), -1) for n in ids])  # the node each hangs from, if not the focus
    up[up == at[focus]] = -1
    hw, hh, down = (np.array([boxes[n][k] for n in ids]) for k in range(3))
    ends = np.array([(at[e["from"]], at[e["to"]]) for e in edges], dtype=int).reshape(-1, 2)
    named = np.array([bool(e["label"]) for e in edges], dtype=bool)
    sizes = np.array([_label_size(e["label"]) for e in edges]).reshape(-1, 2)
    target = np.array([max(hw[at[e["to"]]], 1.0) if not boxes[e["to"]][2] else 12.0 for e in edges]).reshape(-1)
    f = at[focus]
    for _ in range(200):
        xy = _separate(xy, hw, hh, down)
        xy -= xy[f]
        crowded = _crowded(xy, (hw, hh, down), ends[named], sizes[named], (ends, target))
        if not crowded.size:
            break
        pair = ends[named][crowded]  # each crowded relation's edge: its end farther from the focus moved away
        out = np.hypot(*xy[pair[:, 0]].T) > np.hypot(*xy[pair[:, 1]].T)
        far = np.where(out, pair[:, 0], pair[:, 1])
        far = np.unique(far[far != f])
        step = np.zeros_like(xy)
        step[far] = xy[far] / np.maximum(np.hypot(*xy[far].T), 1e-6)[:, None] * STEP  # outward, by a step
        moved = step
        for _ in range(3):  # what hangs from a node moved moves with it
            moved = step + np.where(up[:, None] >= 0, moved[up], 0.0)
        xy += moved
    return {n: (round(float(xy[i, 0]), 1), round(float(xy[i, 1]), 1)) for i, n in enumerate(ids)}


def _label_size(label: str) -> tuple[float, float]:
    lines = label.split("\n") if label else [""]
    return max(map(len, lines)) * CHAR * EDGE / 2 + 2, len(lines) * LINE * EDGE / 2 + 1


def _rings(
    focus: str, nodes: Sequence[Obj], edges: Sequence[Obj], boxes: Mapping[str, Box]
) -> tuple[np.ndarray, dict[str, str]]:
    """First positions: the focus at 0, its neighbours in two columns grouped by relation, each other node beside the
    one it hangs from (and which that is)."""
    ring = {n["id"]: n["ring"] for n in nodes}
    rel = {e["to"] if e["from"] == focus else e["from"]: e["relation"] for e in edges if focus in (e["from"], e["to"])}
    parent: dict[str, str] = {n["id"]: n["of"] for n in nodes if "of" in n}
    for e in edges:
        for a, b in ((e["from"], e["to"]), (e["to"], e["from"])):
            if ring[a] > 1 and ring[b] == ring[a] - 1:
                parent.setdefault(a, b)
    by = {n["id"]: (rel.get(n["id"], n.get("relation", "")), n["id"]) for n in nodes}  # "+N more" by its relation's
    first = _side_by_side(sorted((n for n in by if ring[n] == 1 or parent.get(n) == focus), key=by.__getitem__), edges)
    across = any(e["from"] in first and e["to"] in first for e in edges)  # communities: joined among themselves
    r1 = max(RADIUS, len(first) * 55 / (2 * math.pi)) if across else RADIUS
    if not across:  # a neighbour's boxes (its values, "+N more") in its column just below it
        first = [m for n in first for m in (n, *(b for b in by if ring[b] < 0 and parent[b] == n != focus))]
    pos = {focus: (0.0, 0.0)} | (_circle(first, r1) if across else _columns(focus, first, edges, boxes))
    for k in range(2, 1 + max([*ring.values(), 1])):
        _beside(pos, [n["id"] for n in nodes if ring[n["id"]] == k], parent, r1)
    _beside(pos, [n["id"] for n in nodes if n["id"] not in pos], parent, r1 * 0.6)
    return np.array([pos.get(n["id"], (0.0, 0.0)) for n in nodes], dtype=float), parent


def _circle(first: list[str], r1: float) -> dict[str, tuple[float, float]]:
    """The first ring on a circle, every other node a little farther out when they are many."""
    pos = {}
    for i, n in enumerate(first):
        a = -math.pi / 2 + 2 * math.pi * i / len(first)
        r = r1 * (1.0 + 0.3 * (i % 3) if len(first) > 10 else 1.0)
        pos[n] = (r * math.cos(a), r * math.sin(a))
    return pos


def _columns(
    focus: str, first: list[str], edges: Sequence[Obj], boxes: Mapping[str, Box]
) -> dict[str, tuple[float, float]]:
    """The focus's neighbours in a column each side, far enough out that each relation stands between the focus and
    its neighbour, and rows far enough apart that the relations (half way up) stand apart too."""
    label = {n: (0.0, 0.0) for n in first}
    for e in edges:
        if focus in (e["from"], e["to"]) and e["label"]:
            label[e["to"] if e["from"] == focus else e["from"]] = _label_size(e["label"])
    half = (len(first) + 1) // 2
    pos: dict[str, tuple[float, float]] = {}
    for side, column in ((1.0, first[:half]), (-1.0, first[half:][::-1])):
        words, wide = max([label[n][0] for n in column] + [0]), max([boxes[n][0] for n in column] + [0])
        across = 2 * max(boxes[focus][0] + words, words + wide) + 2 * GAP
        y, ys, prev = 0.0, [], None
        for n in column:
            if prev is not None:
                (_, ph, pd), (_, h, d) = boxes[prev], boxes[n]
                y += max(2 * (label[prev][1] + label[n][1] + GAP), ph + h + GAP + pd - d)
            ys.append(y)
            prev = n
        top = min((yy + boxes[n][2] - boxes[n][1] for n, yy in zip(column, ys, strict=True)), default=0.0)
        bottom = max((yy + boxes[n][2] + boxes[n][1] for n, yy in zip(column, ys, strict=True)), default=0.0)
        pos |= {n: (side * max(across, RADIUS), yy - (top + bottom) / 2) for n, yy in zip(column, ys, strict=True)}
    return pos


def _side_by_side(first: list[str], edges: Sequence[Obj]) -> list[str]:
    """The first ring's order with the nodes an edge joins side by side, so no edge between two crosses the middle."""
    linked: dict[str, list[str]] = {}
    for e in edges:
        if e["from"] in first and e["to"] in first:
            linked.setdefault(e["from"], []).append(e["to"])
            linked.setdefault(e["to"], []).append(e["from"])
    order: dict[str, None] = {}
    for n in first:
        order |= dict.fromkeys([n, *linked.get(n, [])])
    return list(order)


def _beside(pos: dict[str, tuple[float, float]], ids: list[str], parent: Mapping[str, str], step: float) -> None:
    """Each node outward of the one it hangs from, the children of one fanned out."""
    children: dict[str, list[str]] = {}
    for n in ids:
        children.setdefault(parent.get(n, ""), []).append(n)
    for p, kids in children.items():
        px, py = pos.get(p, (0.0, 0.0))
        base = math.atan2(py, px) if (px or py) else math.pi / 2
        for j, n in enumerate(kids):
            a = base + (j - (len(kids) - 1) / 2) * 0.45
            pos[n] = (px + step * math.cos(a), py + step * math.sin(a))


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
    d = np.maximum(np.hypot(*(a - b).T), 1e-6)
    tip = b + (a - b) * ((radius + ARROW) / d)[:, None]
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
