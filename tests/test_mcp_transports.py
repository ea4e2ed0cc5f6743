"""The MCP server as agents reach it: `python -m memory_core mcp` over stdio (a subprocess) and over
Streamable HTTP (uvicorn on loopback), through the SDK's own client, on the backend under test:
tokens, 401, sessions that end (closed, deleted, idle, SIGTERM, kill -9), agents teaching at once.
What only the transport decides (a token's check, an idle timeout) runs on SQLite alone
(`ABOVE_THE_STORE`); what writes as sessions end or agents race, and the example agent's story
written back as a scenario, on both."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from agent_servers import ROOT, env, stdio_server
from backend import ABOVE_THE_STORE
from helpers import HQ, HQ_REF, memory_cli, web
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memory_core import MemoryService

Obj = dict[str, Any]


def stdio(url: str, token: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_core", "mcp", "--db", url],
        env=env(MEMORY_TOKEN=token),
        cwd=str(ROOT),
    )


async def call(c: Client, tool: str, args: Obj) -> Obj:
    r = await c.call_tool(tool, args)
    assert not r.is_error, r.structured_content or r.content
    return r.structured_content or {}


async def open_turn(c: Client, claim_host: str | None = None) -> tuple[str, str]:
    run = (await call(c, "start_run", {"workflow": "research"}))["run"]
    turn = (await call(c, "open_turn", {"run": run, "request": "Where is Globex?"}))["turn"]
    if claim_host:
        await call(c, "record", {"turn": turn, **web(f"https://{claim_host}/", HQ)})
    return run, turn


async def elsewhere(c: Client, run: str, turn: str, reason: str) -> None:
    """Another session names a run and a turn it did not start: `not_this_session` for the same
    person's (rule null, a sentence saying each session ends its own runs), else as an unknown id."""
    for tool, args, kind in (
        ("record", {"turn": turn, **web("https://b.example/", HQ)}, "turn"),
        ("end_run", {"run": run}, "run"),
    ):
        r = await c.call_tool(tool, args)
        out = r.structured_content or {}
        assert r.is_error and out["rule"] is None, out
        if reason == "not_this_session":
            assert out["reason"] == reason and "each session ends its own runs" in out["message"], out
        else:
            assert out["reason"] == f"unknown_{kind}" and out["message"].startswith(f"no {kind} has the id"), out


def turn_status(svc: MemoryService, run: str, turn: str) -> str:
    return svc.export_state()["runs"][run]["turns"][turn]["status"]


def ended(svc: MemoryService, run: str, turn: str, *, within: float = 30) -> str:
    """The turn's status once it is no longer open, or `open` after `within` seconds (a session's
    end is noticed by the server as the client goes: its runs end right after)."""
    deadline = time.monotonic() + within
    while (status := turn_status(svc, run, turn)) == "open" and time.monotonic() < deadline:
        time.sleep(0.05)
    return status


# --- stdio ---------------------------------------------------------------------------------------


@ABOVE_THE_STORE
@pytest.mark.parametrize("token", [None, "mem_nobody"])
def test_stdio_without_a_live_token_exits_2_with_a_sentence(agent_db, token):
    url, _ = agent_db
    extra = {"MEMORY_TOKEN": token} if token else {}
    environ = {k: v for k, v in env(**extra).items() if token or k != "MEMORY_TOKEN"}
    p = subprocess.run(
        [sys.executable, "-m", "memory_core", "mcp", "--db", url],
        env=environ,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert "MEMORY_TOKEN" in p.stderr and "Traceback" not in p.stderr


def test_stdio_serves_a_turn_and_closing_the_client_cancels_what_is_open(agent_db):
    url, svc = agent_db
    token = svc.issue_token("dana", org="acme")

    async def main() -> tuple[str, str, str, str]:
        async with Client(stdio(url, token)) as c:
            assert len((await c.list_tools()).tools) == 14
            run, done = await open_turn(c, "a.example")
            assert (await call(c, "end_turn", {"turn": done, "status": "completed"}))["taught"]["world"] == 1
            left = (await call(c, "open_turn", {"run": run, "request": "more"}))["turn"]
            await call(c, "record", {"turn": left, **web("https://b.example/", HQ)})
            return run, done, left, c.server_info.name if c.server_info else ""

    run, done, left, name = anyio.run(main)
    assert name == "memory-explorer"
    assert turn_status(svc, run, done) == "completed"
    assert ended(svc, run, left) == "cancelled"  # the client closed: its open turn teaches nothing (R17)
    (fact,) = svc.export_state()["organizations"]["acme"]["world"]["facts"]
    assert fact["sources"] == 1


def test_stdio_another_session_of_the_same_person_is_told_so_a_stranger_is_not(agent_db):
    """#38.2: a one-shot client's next session (same token) learns the run is its person's, in
    another session; another person learns nothing (R20)."""
    url, svc = agent_db
    token = svc.issue_token("dana", org="acme")

    async def main() -> None:
        async with Client(stdio(url, token)) as c:
            run, turn = await open_turn(c)
            async with Client(stdio(url, token)) as other:
                await elsewhere(other, run, turn, "not_this_session")
            async with Client(stdio(url, svc.issue_token("lee", org="acme"))) as stranger:
                await elsewhere(stranger, run, turn, "unknown")
            await call(c, "end_run", {"run": run})

    anyio.run(main)


def _server_pid(marker: str) -> int:
    """The pid of the `memory_core mcp` process whose command line holds `marker`."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"memory_core" in cmd and b"mcp" in cmd and marker.encode() in b" ".join(cmd):
                return int(proc.name)
    raise AssertionError(f"no server for {marker}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_stdio_server_stopped_ends_its_runs_or_the_next_start_does(agent_db, sig, tmp_path):
    url, svc = agent_db
    token = svc.issue_token("dana", org="acme")
    opened: dict[str, str] = {}

    async def main() -> None:
        async with Client(stdio(url, token)) as c:
            opened["run"], opened["turn"] = await open_turn(c, "a.example")
            os.kill(_server_pid(url), sig)
            with anyio.fail_after(30):
                while True:  # the server is gone: the next call fails
                    try:
                        await c.call_tool("GraphResolve", {"turn": opened["turn"], "name": "x"})
                    except Exception:  # noqa: BLE001  (the SDK's own way to say the connection closed)
                        return
                    await anyio.sleep(0.1)

    try:
        anyio.run(main)
    except Exception:  # noqa: BLE001  (closing a client whose server is gone)
        pass
    if sig == signal.SIGTERM:
        assert turn_status(svc, opened["run"], opened["turn"]) == "cancelled"
        return
    assert turn_status(svc, opened["run"], opened["turn"]) == "open"  # kill -9: nothing could end it
    p = subprocess.Popen(
        [sys.executable, "-m", "memory_core", "mcp", "--db", url],
        env=env(MEMORY_TOKEN=token),
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = p.stderr.readline() if p.stderr else ""
    p.stdin.close() if p.stdin else None
    p.wait(30)
    assert "no longer runs" in line and opened["run"] in line, line
    assert turn_status(svc, opened["run"], opened["turn"]) == "cancelled"


# --- HTTP ----------------------------------------------------------------------------------------


def over_http(base: str, token: str) -> Client:
    return Client(
        streamable_http_client(base, http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}))
    )


@ABOVE_THE_STORE
def test_http_401_without_a_live_token(agent_http):
    base, svc, _ = agent_http
    for headers in ({}, {"Authorization": "Bearer mem_nobody"}, {"Authorization": "Basic x"}):
        r = httpx.post(base, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
        assert r.status_code == 401, headers
        assert (
            r.headers["www-authenticate"].startswith("Bearer")
            and "resource_metadata" not in r.headers["www-authenticate"]
        )
    for metadata in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        assert httpx.get(base.removesuffix("/mcp") + metadata).status_code == 404, metadata  # no OAuth (#38.5)


def test_http_serves_each_session_its_own_runs_and_a_deleted_session_ends_them(agent_http):
    base, svc, _ = agent_http
    token = svc.issue_token("dana", org="acme")

    async def main() -> tuple[str, str]:
        async with over_http(base, token) as c:
            run, turn = await open_turn(c, "a.example")
            async with over_http(base, token) as other:  # the same person's other session
                await elsewhere(other, run, turn, "not_this_session")
            async with over_http(base, svc.issue_token("lee", org="acme")) as stranger:
                await elsewhere(stranger, run, turn, "unknown")
            return run, turn

    run, turn = anyio.run(main)
    assert ended(svc, run, turn) == "cancelled"  # the client deleted its session on closing (R17)
    assert svc.run_clients([run]) == {run: "mcp 0.1.0"}


@ABOVE_THE_STORE
def test_http_revoking_a_token_stops_the_next_call(agent_http):
    base, svc, _ = agent_http
    token = svc.issue_token("dana", org="acme")

    async def main() -> tuple[str, str]:
        async with over_http(base, token) as c:
            run, turn = await open_turn(c)
            svc.revoke_token(token)
            with pytest.raises(Exception, match="error response"):  # the SDK's words for the 401
                await c.call_tool("start_run", {"workflow": "research"})
            return run, turn

    run, turn = anyio.run(main)
    r = httpx.post(
        base, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert r.status_code == 401
    # Nothing can reach the session with a revoked token, its DELETE included: it ends when idle (R17).
    assert ended(svc, run, turn) == "cancelled"


@ABOVE_THE_STORE
def test_http_a_session_idle_past_the_timeout_ends_its_runs(agent_http):
    base, svc, _ = agent_http
    token = svc.issue_token("dana", org="acme")
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}

    def rpc(method: str, params: Obj, sid: str | None = None, ident: int = 1) -> tuple[Any, httpx.Response]:
        h = {**headers, **({"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"} if sid else {})}
        r = httpx.post(base, json={"jsonrpc": "2.0", "id": ident, "method": method, "params": params}, headers=h)
        data = [line[5:] for line in r.text.splitlines() if line.startswith("data:")]
        return (json.loads(data[-1]) if data else r.json()), r

    info = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-agent", "version": "1"}}
    _, r = rpc("initialize", info)
    sid = r.headers["mcp-session-id"]
    httpx.post(
        base,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={**headers, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"},
    )
    started, _ = rpc("tools/call", {"name": "start_run", "arguments": {"workflow": "research"}}, sid, 2)
    run = started["result"]["structuredContent"]["run"]
    opened, _ = rpc("tools/call", {"name": "open_turn", "arguments": {"run": run, "request": "x"}}, sid, 3)
    turn = opened["result"]["structuredContent"]["turn"]
    assert ended(svc, run, turn) == "cancelled"  # the server was started with --idle-timeout 2; the client went silent
    assert svc.run_clients([run]) == {run: "raw-agent 1"}


def test_http_four_agents_teach_one_fact_at_once_nothing_lost(agent_http):
    base, svc, _ = agent_http
    tokens = [svc.issue_token(p, org="acme") for p in ("dana", "lee")]

    async def agent(i: int) -> None:
        async with over_http(base, tokens[i % 2]) as c:
            _, turn = await open_turn(c, f"host{i}.example")
            await call(c, "end_turn", {"turn": turn, "status": "completed"})

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(agent, i)

    anyio.run(main)
    (fact,) = svc.export_state()["organizations"]["acme"]["world"]["facts"]
    assert fact["sources"] == 4 and len(fact["supports"]) == 4
    assert {"subject": fact["subject"], "relation": fact["relation"], "object": fact["object"]} == HQ_REF


def test_http_sigterm_ends_every_open_session_s_runs(agent_http):
    base, svc, p = agent_http
    token = svc.issue_token("dana", org="acme")
    opened: dict[str, str] = {}

    async def main() -> None:
        async with over_http(base, token) as c:
            opened["run"], opened["turn"] = await open_turn(c, "a.example")
            p.send_signal(signal.SIGTERM)
            p.wait(30)

    try:
        anyio.run(main)
    except Exception:  # noqa: BLE001  (the client's DELETE finds the server gone)
        pass
    assert p.returncode in (0, -signal.SIGTERM)  # uvicorn stops gracefully, then ends as the signal asks
    assert turn_status(svc, opened["run"], opened["turn"]) == "cancelled"


def test_the_example_agent_tells_its_story_and_its_session_exports_and_replays_to_the_same_state(agent_db, tmp_path):
    """The example agent (examples/agent.py) over stdio tells its story, refused nowhere, and teaches
    what it says; then the export (issue #23): what it did over MCP, written back as a scenario,
    replays to the state the database holds (each turn's probes_used aside: reads are not stored).
    The agent and its server run as processes of their own; export and replay through `main`."""
    url, svc = agent_db
    token = svc.issue_token("dana", org="acme")
    story = [sys.executable, str(ROOT / "examples" / "agent.py"), "--stdio", "--db", url, "--workflow", "research"]
    p = subprocess.run(
        [*story, "--pause", "0"], env=env(MEMORY_TOKEN=token), capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    assert "REFUSED" not in p.stdout
    assert "a failed turn teaches nothing, R2" in p.stdout
    facts = {(f["relation"], f["sources"]) for f in svc.export_state()["organizations"]["acme"]["world"]["facts"]}
    assert facts == {("supplies", 3), ("headquartered_in", 2)}
    (run,) = svc.run_clients([r["id"] for r in svc.runs("acme")]).values()
    assert run == "example-research-agent 1.0"

    exported = memory_cli("export", "--db", url)
    assert exported.returncode == 0, exported.stderr
    (tmp_path / "agent.json").write_text(exported.stdout)
    again = memory_cli("replay", str(tmp_path / "agent.json"), "--json")
    assert again.returncode == 0, again.stderr

    def without_probes(state: dict) -> dict:
        for run in state["runs"].values():
            for turn in run["turns"].values():
                turn.pop("probes_used")
        return {k: v for k, v in state.items() if k not in ("reads", "refused")}

    assert without_probes(json.loads(again.stdout)) == without_probes(svc.export_state())


@ABOVE_THE_STORE
def test_stdio_a_revoked_token_is_answered_then_the_server_stops_with_2(agent_db):
    """The call after a revocation is answered `unauthorized`; the server then ends its runs (R17)
    and exits 2 even though the client keeps its pipe open."""
    url, svc = agent_db
    token = svc.issue_token("dana", org="acme")
    p = stdio_server(url, token)
    assert p.stdin and p.stdout

    def send(ident: int, method: str, params: Obj) -> Obj:
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n")
        p.stdin.flush()
        while True:
            msg = json.loads(p.stdout.readline())
            if msg.get("id") == ident:
                return msg

    info = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    send(1, "initialize", info)
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    p.stdin.flush()
    run = send(2, "tools/call", {"name": "start_run", "arguments": {"workflow": "research"}})["result"]
    run_id = run["structuredContent"]["run"]
    turn = send(3, "tools/call", {"name": "open_turn", "arguments": {"run": run_id, "request": "x"}})["result"]
    svc.revoke_token(token)
    refused = send(4, "tools/call", {"name": "start_run", "arguments": {"workflow": "research"}})["result"]
    assert refused["isError"] and refused["structuredContent"]["reason"] == "unauthorized"
    assert p.wait(30) == 2  # the pipe is still open: the server left by itself
    assert turn_status(svc, run_id, turn["structuredContent"]["turn"]) == "cancelled"
