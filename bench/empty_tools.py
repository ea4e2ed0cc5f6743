"""B10's floor over HTTP (issue #38): the SDK's own server with tools of the same names and arguments as a
turn's (start_run, open_turn, record, end_turn) that do nothing, served by uvicorn as `mcp --http` is.
`python bench/empty_tools.py PORT`; a bearer header is accepted and ignored."""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp.server import MCPServer

floor = MCPServer("floor", log_level="WARNING")


@floor.tool()
def start_run(workflow: str) -> dict[str, Any]:
    return {"run": "r", "ephemeral": False}


@floor.tool()
def open_turn(run: str, request: str) -> dict[str, Any]:
    return {"turn": "t", "map": {"kinds": {}, "facts": 0}, "budget": {"MemoryProbes": None}}


@floor.tool()
def record(
    turn: str, origin: str, claims: list[dict[str, Any]], source: str | None = None, excerpt: str | None = None
) -> dict[str, Any]:
    return {"record": "t#1"}


@floor.tool()
def end_turn(turn: str, status: str) -> dict[str, Any]:
    return {"status": status, "taught": {"world": 0, "user": 0, "flow": 0}, "skipped": []}


if __name__ == "__main__":
    uvicorn.run(
        floor.streamable_http_app(host="127.0.0.1"), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning"
    )
