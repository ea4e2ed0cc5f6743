"""B10 (issue #38 point 6): GraphResolve by words against an exact GraphResolve, through the SDK's client
over stdio at B2's size (about 112k facts), both in one process and in turn, so a slow moment of the
machine falls on both. `python bench/run.py --only b10words [--backend postgresql]` runs it."""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = {"id": "bench-words", "org": "bench", "memory_probes": None, "steps": []}


def partial(name: str) -> str:
    """What an agent that knows part of a name asks: the first word whole, the first letters of the next."""
    first, *rest = name.split()
    return f"{first} {rest[0][: min(3, len(rest[0]) - 1)]}" if rest else first[:4]


def b10_words(b: Any) -> None:
    """Words p50 against exact p50 (target <= 2x); and an exact resolve that misses, carrying `near`. Its
    rows are the part `words` of B10: a run of b10 leaves them, and a run of this replaces only them."""
    import anyio
    from mcp import Client, StdioServerParameters

    url, svc = b.generated(b.size["reads"])
    svc.load_setup(organizations=[], people=[], workflows=[WORKFLOW])
    facts = svc.counts()["fact"]
    rows = b.world_entities(svc)
    names = [r[0] for r in random.Random(11).sample(rows, min(200, len(rows)))]
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_core", "mcp", "--db", url],
        env={**os.environ, "PYTHONPATH": str(ROOT), "MEMORY_TOKEN": svc.issue_token("p0", org="bench")},
        cwd=str(ROOT),
    )
    times: dict[str, list[float]] = {"exact": [], "words": [], "near": []}

    async def main() -> None:
        async with Client(server) as c:
            run = (await c.call_tool("start_run", {"workflow": "bench-words"})).structured_content or {}
            turn = ((await c.call_tool("open_turn", {"run": run["run"], "request": "r"})).structured_content or {})[
                "turn"
            ]
            for _ in range(2):
                for name in names:
                    for how, args in (
                        ("exact", {"name": name}),
                        ("words", {"name": partial(name), "match": "words"}),
                        ("near", {"name": partial(name)}),
                    ):
                        t0 = time.perf_counter()
                        r = await c.call_tool("GraphResolve", {"turn": turn, **args})
                        times[how].append(time.perf_counter() - t0)
                        assert not r.is_error and (how == "near" or (r.structured_content or {})["result"])

    anyio.run(main)
    exact, words, near = (statistics.median(times[k]) for k in ("exact", "words", "near"))
    b.record(
        "B10",
        f"GraphResolve match=words p50 ms over stdio vs exact, {facts:,} facts",
        words * 1000,
        exact * 1000,
        "ratio <= 2",
        words / exact <= 2,
        part="words",
    )
    b.record(
        "B10",
        f"GraphResolve exact finding nothing, with near, p50 ms over stdio vs exact, {facts:,} facts",
        near * 1000,
        exact * 1000,
        "report",
        True,
        part="words",
    )
