"""The agent server under attack (#40 findings 1 and 2): a session answers only the token that opened
it, a revoked token's session ends at once (R17), and one token cannot fill the server's sessions.

Each test speaks to a real HTTP server (uvicorn in a subprocess) through the official SDK client.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from agent_servers import _free_port, env
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memory_core import MemoryService

Obj = dict[str, Any]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


@contextmanager
def http_server(url: str, *flags: str) -> Iterator[str]:
    """The MCP server over HTTP on a free loopback port with these flags (sessions idle for 300 s)."""
    port = _free_port()
    command = [sys.executable, "-m", "memory_core", "mcp", "--http", "--port", str(port), "--db", url, *flags]
    p = subprocess.Popen(command, env=env(), stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and p.poll() is None:
        try:
            httpx.post(base, json={}, timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    assert p.poll() is None, p.stderr.read() if p.stderr else ""
    try:
        yield base
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)


def as_token(token: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})


async def call(c: Client, tool: str, args: Obj) -> Obj:
    r = await c.call_tool(tool, args)
    assert not r.is_error, r.structured_content or r.content
    return r.structured_content or {}


def run_of(svc: MemoryService, run: str) -> Obj:
    return svc.export_state()["runs"][run]


def test_http_another_token_of_the_same_person_is_a_stranger_on_the_session(agent_db):
    """Lee's Globex token on the session Lee's Acme token opened: refused as a stranger's (404), and
    nothing of the Acme run is reached or taught."""
    url, svc = agent_db
    acme, globex = svc.issue_token("lee", org="acme"), svc.issue_token("lee", org="globex")

    async def main() -> str:
        http = as_token(acme)
        async with Client(streamable_http_client(base, http_client=http, terminate_on_close=False)) as c:
            run = (await call(c, "start_run", {"workflow": "research"}))["run"]
            http.headers["Authorization"] = f"Bearer {globex}"  # the same session, another token
            with pytest.raises(Exception):  # noqa: B017  (the SDK's words for the 404)
                await c.call_tool("open_turn", {"run": run, "request": "Where is Globex?"})
            return run

    with http_server(url) as base:
        run = anyio.run(main)
    assert run_of(svc, run)["turns"] == {}


def test_http_a_revoked_token_s_session_ends_at_its_next_request(agent_db):
    """Revoked, the token's next request (401) ends its session as end_run ends it (R17): the open
    turn is cancelled at once, not when the session idles out; another token of the same person
    finds no session there."""
    url, svc = agent_db
    acme, globex = svc.issue_token("lee", org="acme"), svc.issue_token("lee", org="globex")

    async def main() -> tuple[str, str]:
        http = as_token(acme)
        async with Client(streamable_http_client(base, http_client=http, terminate_on_close=False)) as c:
            run = (await call(c, "start_run", {"workflow": "research"}))["run"]
            turn = (await call(c, "open_turn", {"run": run, "request": "Where is Globex?"}))["turn"]
            svc.revoke_token(acme)
            with pytest.raises(Exception, match="error response"):  # the SDK's words for the 401
                await c.call_tool("start_run", {"workflow": "research"})
            http.headers["Authorization"] = f"Bearer {globex}"
            with pytest.raises(Exception):  # noqa: B017  (the SDK's words for the 404)
                await c.call_tool("open_turn", {"run": run, "request": "Teach Acme this"})
            return run, turn

    with http_server(url, "--idle-timeout", "300") as base:
        run, turn = anyio.run(main)
        deadline = time.monotonic() + 5
        while not run_of(svc, run)["ended"] and time.monotonic() < deadline:
            time.sleep(0.05)
        state = run_of(svc, run)
        assert state["ended"] is True
        assert state["turns"][turn]["status"] == "cancelled"
        assert list(state["turns"]) == [turn]


def test_http_sessions_are_capped_per_token_and_other_tokens_keep_their_room(agent_db):
    """Past --max-sessions-per-token, a token's next session is refused (429) with a sentence naming
    the limit; another token still opens its own, and the token opens again once one of its ends."""
    url, svc = agent_db
    dana, lee = svc.issue_token("dana", org="acme"), svc.issue_token("lee", org="acme")
    headers = {"Authorization": f"Bearer {dana}", "Accept": "application/json, text/event-stream"}

    async def main(base: str) -> None:
        async with Client(streamable_http_client(base, http_client=as_token(dana))) as first:
            for _ in range(2):
                r = httpx.post(base, json=INITIALIZE, headers=headers)
                assert r.status_code == 200, r.text
            refused = httpx.post(base, json=INITIALIZE, headers=headers)
            assert refused.status_code == 429
            message = refused.json()["error"]["message"]
            assert "3 open sessions" in message and "--max-sessions-per-token" in message
            async with Client(streamable_http_client(base, http_client=as_token(lee))) as other:
                await call(other, "start_run", {"workflow": "research"})
            await call(first, "start_run", {"workflow": "research"})
        r = httpx.post(base, json=INITIALIZE, headers=headers)  # the first session was deleted: room again
        assert r.status_code == 200, r.text

    with http_server(url, "--max-sessions-per-token", "3") as base:
        anyio.run(main, base)
