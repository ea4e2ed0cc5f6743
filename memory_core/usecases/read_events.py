"""Kept reads as `read` events of an export, each placed where it happened, and as a state's `reads` (#38, d-reads)."""

from __future__ import annotations

import bisect

from ..plain import Obj


def read_event(r: Obj) -> Obj:
    """A kept read as the scenario event that makes it."""
    event = {"do": "read", "turn": r["turn"], "call": r["call"], "args": r["args"]}
    return event | {k: r[k] for k in ("within", "step") if r[k] is not None}


def _turn_marks(events: list[Obj], turn: str, works: list[Obj]) -> tuple[dict[int, int], dict[int, tuple[int, int]]]:
    """Where a turn's records end (number: index after it) and its nested works are open (id: (after call, return))."""
    after: dict[int, int] = {}
    open_at: dict[int, tuple[int, int]] = {}
    calls: dict[str, list[int]] = {}
    for w in works:
        calls.setdefault(w["work"], []).append(w["id"])
    current: dict[str, int] = {}
    for i, e in enumerate(events):
        if e.get("turn") != turn:
            continue
        if e["do"] in ("open_turn", "record") or (e["do"] == "step" and "record" in e):
            after[len(after)] = i + 1
        elif e["do"] == "call" and calls.get(e["work"]):  # the turn's k-th call of a work is its k-th nested work
            current[e["work"]] = nid = calls[e["work"]].pop(0)
            open_at[nid] = (i + 1, len(events))
        elif e["do"] == "return" and e["work"] in current:
            nid = current.pop(e["work"])
            open_at[nid] = (open_at[nid][0], i)
    return after, open_at


def place_reads(events: list[Obj], reads: list[Obj], *, starts: dict[int, int], work: dict[int, Obj]) -> dict[int, int]:
    """Insert each kept read into `events` where it happened (`starts`: each moment's first event); its index by id."""
    marks: dict[str, tuple[dict[int, int], dict[int, tuple[int, int]]]] = {}  # by turn: _turn_marks's
    moments = sorted(starts)
    placed: list[tuple[int, int, Obj]] = []
    for r in reads:
        turn = r["turn"]
        if turn not in marks:
            marks[turn] = _turn_marks(events, turn, [w for w in work.values() if w["turn"] == turn])
        after, open_at = marks[turn]
        if not after:  # its turn is not in this export
            continue
        k = bisect.bisect_right(moments, r["moment"])  # the first moment after the read's (moments are sorted)
        pos = starts[moments[k]] if k < len(moments) else len(events)
        if r["moment"] in starts and events[starts[r["moment"]]].get("turn") == turn:
            pos = starts[r["moment"]] + 1  # inside its own turn's step or opening
        pos = max(pos, max((i for n, i in after.items() if n < r["records"]), default=0))
        while pos < len(events) and events[pos]["do"] == "return" and events[pos]["turn"] == turn:
            pos += 1  # nested work returned after its last record: before the read, most likely
        if r["nested"] in open_at:
            first, last = open_at[r["nested"]]
            pos = min(max(pos, first), last)
        placed.append((pos, r["id"], read_event(r)))
    order = sorted(placed, key=lambda p: (p[0], p[1]))
    for pos, _, event in reversed(order):
        events.insert(pos, event)
    return {rid: pos + k for k, (pos, rid, _) in enumerate(order)}  # its position plus the reads placed before it


def state_reads(reads: list[Obj], index: dict[int, int]) -> Obj:
    """The state's `reads` and `refused` (refused reads) as a replay of the export lists them."""
    out: Obj = {"reads": [], "refused": []}
    for r in sorted((r for r in reads if r["id"] in index), key=lambda r: index[r["id"]]):
        n = index[r["id"]]
        log = {"event": n} | {k: r[k] for k in ("turn", "call", "args", "outcome", "result")}
        out["reads"].append(log | ({"near": r["near"]} if r["near"] else {}))
        if r["outcome"] != "ok":
            out["refused"].append({"event": n, "do": "read", "reason": r["outcome"], "message": r["message"]})
    return out
