"""A deterministic research agent (no model) that uses memory through the MCP server, so anyone can
watch the dashboard learn live. It runs one story on the demo memory (`make run`), as Dana of Acme:

1. A supplier profile: it reads what the organization knows (GraphResolve, GraphExpand), records what
   two sources say, has a checker agent look at an annual report (nested work, R4-R5), and ends the
   turn completed: memory learns (R1).
2. A follow-up whose source would not load: the turn fails and teaches nothing (R2), though its
   record stays as evidence.
3. A re-read: the facts it taught now weigh more with each independent source (R25, R26), and
   GraphSource points at the evidence.

Run it against the HTTP server (`make mcp`, then in another terminal):

    MEMORY_TOKEN=$(python -m memory_core token issue dana --org acme) python examples/agent.py

or let it start its own server over stdio: `python examples/agent.py --stdio`. `--pause S` waits S
seconds between calls (default 1) so the Runs page shows the turn as it goes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

ACME = {"name": "Acme Robotics", "kind": "organization"}
SUPPLIER = {"name": "Nordic Servo AB", "kind": "organization"}


def claim(subject: dict[str, str], relation: str, obj: dict[str, str]) -> dict[str, Any]:
    return {"graph": "world", "subject": subject, "relation": relation, "object": obj}


SUPPLIES = claim(SUPPLIER, "supplies", ACME)
BASED = claim(SUPPLIER, "headquartered_in", {"name": "Gothenburg", "kind": "place"})


class Agent:
    """Calls tools, says what each answered, and pauses so a person can watch."""

    def __init__(self, client: Client, pause: float) -> None:
        self.client, self.pause = client, pause

    async def __call__(self, tool: str, **args: Any) -> dict[str, Any]:
        r = await self.client.call_tool(tool, args)
        out = r.structured_content or {}
        said = json.dumps(out, ensure_ascii=False)
        print(f"{'REFUSED ' if r.is_error else ''}{tool}: {said[:160]}{'…' if len(said) > 160 else ''}")
        await asyncio.sleep(self.pause)
        return out


async def story(a: Agent, workflow: str) -> None:
    run = (await a("start_run", workflow=workflow))["run"]
    opened = await a("open_turn", run=run, request="Profile our servo supplier Nordic Servo AB.")
    turn = opened["turn"]
    print(f"  the map: {opened['map']['facts']} facts; budget {opened['budget']['MemoryProbes']} reads")
    await a("GraphResolve", turn=turn, name="Nordic Servo")
    await a("GraphExpand", turn=turn, entity=ACME, relation="supplies")
    web = "https://www.nordicservo.example/about"
    await a(
        "record",
        turn=turn,
        origin="web",
        source=web,
        excerpt="Nordic Servo AB, Gothenburg, supplies servo drives to Acme Robotics.",
        claims=[SUPPLIES, BASED],
    )
    await a(
        "record",
        turn=turn,
        origin="web",
        source="https://trade-news.example/nordic-servo-acme",
        excerpt="Acme Robotics sources its servo drives from Nordic Servo.",
        claims=[SUPPLIES],
    )
    await a("call", turn=turn, work="agent:checker")
    report = "Nordic Servo annual report 2025: headquartered in Gothenburg; key customer Acme Robotics."
    await a(
        "record",
        turn=turn,
        within="agent:checker",
        origin="document",
        source="doc:nordic-servo-annual-report-2025",
        excerpt=report,
        claims=[SUPPLIES, BASED],
    )
    await a("return", turn=turn, work="agent:checker", status="completed")
    ended = await a("end_turn", turn=turn, status="completed")
    print(f"  taught: {ended['taught']} (a completed turn teaches, R1)")

    failed = (await a("open_turn", run=run, request="Does Nordic Servo also supply Globex?"))["turn"]
    await a(
        "record",
        turn=failed,
        origin="web",
        source="https://www.nordicservo.example/customers",
        excerpt="(the page did not load)",
        claims=[claim(SUPPLIER, "supplies", {"name": "Globex", "kind": "organization"})],
    )
    ended = await a("end_turn", turn=failed, status="failed")
    print(f"  taught: {ended['taught']} (a failed turn teaches nothing, R2)")

    again = (await a("open_turn", run=run, request="What do we know about Nordic Servo now?"))["turn"]
    facts = (await a("GraphExpand", turn=again, entity=SUPPLIER))["result"]
    for f in facts:
        other = f["object"].get("name", f["object"].get("value"))
        print(f"  {f['subject']['name']} {f['relation']} {other}: weight {f['weight']:.3f} from {f['sources']} sources")
    sources = (await a("GraphSource", turn=again, fact={k: SUPPLIES[k] for k in ("subject", "relation", "object")}))[
        "result"
    ]
    for s in sources:
        print(f"  evidence: {s['origin']} {s['key']} -> {s['record']}")
    await a("end_turn", turn=again, status="completed")
    await a("end_run", run=run)


async def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default="http://127.0.0.1:8765/mcp", help="the HTTP server's address (make mcp)")
    p.add_argument("--stdio", action="store_true", help="start a server over stdio instead")
    p.add_argument("--db", help="with --stdio: the database (default: the configured one)")
    p.add_argument("--workflow", default="company_profile")
    p.add_argument("--pause", type=float, default=1.0)
    args = p.parse_args()
    token = os.environ.get("MEMORY_TOKEN")
    if not token:
        print("set MEMORY_TOKEN (python -m memory_core token issue dana --org acme)", file=sys.stderr)
        return 2
    if args.stdio:
        cmd = [sys.executable, "-m", "memory_core", "mcp", *(["--db", args.db] if args.db else [])]
        target: Any = StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ, "MEMORY_TOKEN": token})
    else:
        target = streamable_http_client(
            args.url, http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        )
    async with Client(target, client_info=Implementation(name="example-research-agent", version="1.0")) as client:
        await story(Agent(client, args.pause), args.workflow)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
