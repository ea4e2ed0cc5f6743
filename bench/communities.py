"""B8's overview row (#39.4) at B2's size (112k facts): the communities' read and grouping against the Graphs page's
old read (`graph_drawing(limit=5000)`: the whole graph's 5,000 heaviest facts, which the product no longer has; kept
here as `graph_drawing`), in one process and in turn, so a slow moment of the machine falls on both.
`python bench/communities.py [--quick]`, `bash .ci/with-postgres .venv/bin/python bench/communities.py --backend
postgresql`: its rows (`part` "communities") replace their like in bench/results.json (--quick: results-quick.json)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sqlmodel import col  # noqa: E402

from memory_core.store.drawing import _heaviest  # noqa: E402
from memory_core.store.models import Fact  # noqa: E402
from memory_core.views.communities import overview  # noqa: E402


def graph_drawing(svc: Any, graph: str, owner: str, *, limit: int) -> int:
    """The Graphs page's read before #39 (the baseline): a graph's `limit` heaviest facts with their ends and votes."""
    with svc.database.transaction(write=False) as s:
        return len(_heaviest(s, (col(Fact.graph) == graph) & (col(Fact.owner) == owner), limit))


ROUNDS = 7


def b8_communities(b: Any) -> None:
    """The overview's read and grouping, median of ROUNDS, against the drawing's read of 5,000 facts (< 1 s above)."""
    url, svc = b.generated(b.size["reads"])
    facts = svc.counts()["fact"]
    times: dict[str, list[float]] = {"drawing": [], "read": [], "overview": []}
    cpu: dict[str, list[float]] = {"drawing": [], "read": [], "overview": []}
    for _ in range(ROUNDS):
        t0, c0 = time.perf_counter(), time.process_time()
        graph_drawing(svc, "world", "bench", limit=5000)
        t1, c1 = time.perf_counter(), time.process_time()
        links = svc.communities("world", "bench")
        t2, c2 = time.perf_counter(), time.process_time()
        view = overview(links)
        t3, c3 = time.perf_counter(), time.process_time()
        for part, dt, dc in (("drawing", t1 - t0, c1 - c0), ("read", t2 - t1, c2 - c1), ("overview", t3 - t2, c3 - c2)):
            times[part].append(dt)
            cpu[part].append(dc)
    drawing, read, grouped = (statistics.median(times[k]) for k in ("drawing", "read", "overview"))
    whole = statistics.median(r + o for r, o in zip(times["read"], times["overview"], strict=True))
    spread = ", ".join(f"{k} {min(v):.3f}-{max(v):.3f}" for k, v in times.items())
    print(
        f"{view.entities:,} linked entities, {view.facts:,} facts between them, {len(view.communities)} communities "
        f"(sizes {[c.size for c in view.communities][:8]}), {len(view.links)} links between them; this process's "
        f"CPU, median s: {', '.join(f'{k} {statistics.median(v):.3f}' for k, v in cpu.items())}; wall s: {spread}"
    )
    b.record(
        "B8",
        f"the Graphs overview (communities + overview) at {facts:,} facts, s, vs graph_drawing(limit=5000)",
        whole,
        drawing,
        "< 1 s above the floor",
        whole - drawing < 1,
        part="communities",
    )
    b.record("B8", f"communities (the read) at {facts:,} facts, s", read, drawing, "report", True, part="communities")
    b.record("B8", f"overview (Louvain) at {facts:,} facts, s", grouped, drawing, "report", True, part="communities")


def main() -> int:
    from run import RESULTS, Bench, write

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    p.add_argument("--quick", action="store_true", help="B2's quick size (12k supports) instead of 120k")
    args = p.parse_args()
    b = Bench(args.backend, "quick" if args.quick else "full")
    b8_communities(b)
    write(b.results, RESULTS.with_name("results-quick.json") if args.quick else RESULTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
