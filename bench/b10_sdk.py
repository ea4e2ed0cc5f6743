"""B10 (issue #38) against the SDK's own floor, each pair taken side by side in one process: a GraphResolve through
the SDK's in-memory client against the SDK's empty tool (call by call), and a whole turn over HTTP against the same
calls to empty tools (bench/empty_tools.py, turn by turn), so a slow moment of the shared machine falls on both.
`python bench/run.py --only b10sdk [--backend postgresql]`; its rows are the part `sdk` of B10."""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

ROUNDS = 10


def _spread(pairs: list[list[tuple[float, float]]]) -> tuple[float, float, float, float, float]:
    """Median of each side over every round, the median of the rounds' ratios (each round's medians), their lowest
    and highest: a round's ratio holds its own moment of the machine on both sides."""
    ours, floor = (statistics.median(p[k] for r in pairs for p in r) for k in (0, 1))
    rounds = [statistics.median(p[0] for p in r) / statistics.median(p[1] for p in r) for r in pairs]
    return ours, floor, statistics.median(rounds), min(rounds), max(rounds)


async def _timed(*calls: Any) -> float:
    t0 = time.perf_counter()
    for call in calls:
        await call()
    return time.perf_counter() - t0


def record(b: Any) -> None:
    """Both rows at B2's size: target <= 2x each."""
    import logging

    import anyio
    from mcp import Client
    from mcp.server import MCPServer

    from bench import run as bench
    from memory_core.agents.server import MemoryAgents

    for noisy in ("httpx", "httpx2", "mcp", "memory_core.agents"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    url, svc = b.generated(b.size["reads"])
    svc.load_setup(organizations=[], people=[], workflows=[bench.B10_WORKFLOW])
    facts = svc.counts()["fact"]
    names = [r[0] for r in random.Random(10).sample(b.world_entities(svc), 200)]
    token = svc.issue_token("p0", org="bench")
    empty = MCPServer("floor")

    @empty.tool()
    def nothing(turn: str, name: str) -> dict[str, bool]:
        return {"ok": True}

    async def opened(c: Any) -> str:
        run = (await c.call_tool("start_run", {"workflow": "bench-wf"})).structured_content or {}
        return ((await c.call_tool("open_turn", {"run": run["run"], "request": "r"})).structured_content or {})["turn"]

    async def in_memory() -> list[list[tuple[float, float]]]:
        agents = MemoryAgents(svc, transport="memory", token=token)
        async with Client(agents.build()) as c, Client(empty) as f:
            turn, out = await opened(c), []
            for n in range(ROUNDS):
                pairs = []
                for i, name in enumerate(names):
                    ours = lambda: c.call_tool("GraphResolve", {"turn": turn, "name": name})  # noqa: B023, E731
                    bare = lambda: f.call_tool("nothing", {"turn": "t", "name": name})  # noqa: B023, E731
                    first, second = (ours, bare) if (n + i) % 2 else (bare, ours)
                    a, z = await _timed(first), await _timed(second)
                    pairs.append((a, z) if first is ours else (z, a))
                out.append(pairs)
        agents.sessions.stop()
        return out

    served, resolve_floor, ratio, low, high = _spread(anyio.run(in_memory))
    print(f"B10 sdk: GraphResolve vs empty tool, {ROUNDS} rounds' ratios {low:.2f} to {high:.2f}", flush=True)
    b.record(
        "B10",
        f"GraphResolve p50 ms, SDK in-memory client vs the SDK's own empty tool, side by side, {facts:,} facts",
        served * 1000,
        resolve_floor * 1000,
        "ratio <= 2",
        ratio <= 2,
        ratio=ratio,
        part="sdk",
    )

    def turn_calls(c: Any, tag: str, k: int) -> list[Any]:
        state: dict[str, Any] = {}

        async def start() -> None:
            state["run"] = ((await c.call_tool("start_run", {"workflow": "bench-wf"})).structured_content or {})["run"]

        async def open_() -> None:
            opened_ = await c.call_tool("open_turn", {"run": state["run"], "request": "t"})
            state["turn"] = (opened_.structured_content or {})["turn"]

        def rec(i: int) -> Any:
            return lambda: c.call_tool("record", bench._b10_record(state["turn"], f"{tag}{k}-{i}.example", i))

        async def end() -> None:
            await c.call_tool("end_turn", {"turn": state["turn"], "status": "completed"})

        return [start, open_, *(rec(i) for i in range(10)), end]

    async def over_http(base: str, floor_base: str) -> list[list[tuple[float, float]]]:
        async with bench._b10_client(base, token) as c, bench._b10_client(floor_base, token) as f:
            out = []
            for n in range(ROUNDS):
                pairs = []
                for k in range(10 if b.mode == "full" else 3):
                    j = n * 100 + k
                    if (n + k) % 2:
                        ours, bare = await _timed(*turn_calls(c, "s", j)), await _timed(*turn_calls(f, "e", j))
                    else:
                        bare, ours = await _timed(*turn_calls(f, "e", j)), await _timed(*turn_calls(c, "s", j))
                    pairs.append((ours, bare))
                out.append(pairs)
        return out

    proc, base = bench._b10_http(url)
    floor, floor_base = bench._b10_http(None)
    try:
        whole, turn_floor, ratio, low, high = _spread(anyio.run(over_http, base, floor_base))
    finally:
        for p in (proc, floor):
            p.terminate()
            p.wait(30)
    print(
        f"B10 sdk: a whole turn over HTTP vs empty tools, {ROUNDS} rounds' ratios {low:.2f} to {high:.2f}", flush=True
    )
    b.record(
        "B10",
        "a whole turn (start, open, 10 records, end) s over HTTP vs the same calls to empty tools, side by side",
        whole,
        turn_floor,
        "ratio <= 2",
        ratio <= 2,
        ratio=ratio,
        part="sdk",
    )
