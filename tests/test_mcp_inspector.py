"""A client nobody on the team wrote: the MCP Inspector's command line (npm
`@modelcontextprotocol/inspector`, installed in tests/inspector on first use) lists the tools and calls
them, over stdio and over HTTP. Skipped where Node is missing; with CI=true it fails instead. What it
checks is the protocol as a stranger speaks it, above the store: the SQLite pass runs it
(`ABOVE_THE_STORE`); test_mcp.py holds the tools on both backends."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from agent_servers import ROOT, env
from backend import ABOVE_THE_STORE

HERE = Path(__file__).resolve().parent / "inspector"
CLI = HERE / "node_modules" / ".bin" / "mcp-inspector"
pytestmark = ABOVE_THE_STORE


@pytest.fixture(scope="module")
def inspector() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Node and npm are needed for the MCP Inspector test (CI=true)")
        pytest.skip("Node and npm are missing here: the MCP Inspector test needs them")
    with open(HERE / ".install.lock", "w") as lock:  # one install when the passes or workers start at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not CLI.exists():
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE, check=True, timeout=300
            )
    return CLI


def inspect(cli: Path, *args: str, tmp: Path) -> dict:
    p = subprocess.run(
        [str(cli), "--cli", *args], capture_output=True, text=True, timeout=120, env={**env(), "HOME": str(tmp)}
    )
    assert p.stdout.strip(), p.stderr
    return json.loads(p.stdout)


def test_inspector_lists_and_calls_over_stdio(inspector, agent_db, tmp_path):
    url, svc = agent_db
    served = ["--", sys.executable, "-m", "memory_core", "mcp", "--db", url]
    token = ["-e", f"MEMORY_TOKEN={svc.issue_token('dana', org='acme')}", "-e", f"PYTHONPATH={ROOT}"]
    tools = inspect(inspector, *token, "--method", "tools/list", *served, tmp=tmp_path)["tools"]
    assert len(tools) == 14 and {t["name"] for t in tools} >= {"start_run", "GraphResolve", "end_turn", "workflows"}
    reads = {t["name"]: t["annotations"].get("readOnlyHint") for t in tools}
    assert reads["GraphSource"] is True and reads["record"] is False and reads["workflows"] is True
    run = inspect(
        inspector,
        *token,
        "--method",
        "tools/call",
        "--tool-name",
        "start_run",
        "--tool-arg",
        "workflow=research",
        *served,
        tmp=tmp_path,
    )
    assert run["isError"] is False and run["structuredContent"]["run"].startswith("run-")
    assert svc.export_state()["runs"][run["structuredContent"]["run"]]["ended"] is True  # its session ended it (R17)


def test_inspector_calls_over_http_and_sees_a_refusal(inspector, agent_http, tmp_path):
    base, svc, _ = agent_http
    header = ["--header", f"Authorization: Bearer {svc.issue_token('dana', org='acme')}"]
    p = subprocess.run(
        [
            str(inspector),
            "--cli",
            *header,
            "--method",
            "tools/call",
            "--tool-name",
            "start_run",
            "--tool-arg",
            "workflow=nope",
            "--",
            base,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env(), "HOME": str(tmp_path)},
    )
    shown, _ = json.JSONDecoder().raw_decode(p.stdout.strip() or "null")
    assert shown is not None, p.stderr
    assert shown["isError"] is True
    assert shown["structuredContent"] == {
        "reason": "unknown_workflow",
        "rule": None,
        "message": "organization 'acme' has no workflow 'nope'; its workflows: 'free', 'research'",
    }


def test_inspector_one_shot_calls_are_told_not_this_session(inspector, agent_http, tmp_path):
    """#38.2: each Inspector CLI call is a session of its own; the next call of the same token on the
    run the last one started is told so (not an id that never existed)."""
    base, svc, _ = agent_http
    header = ["--header", f"Authorization: Bearer {svc.issue_token('dana', org='acme')}"]

    def call(tool: str, *args: str) -> dict:
        return inspect(
            inspector, *header, "--method", "tools/call", "--tool-name", tool, *args, "--", base, tmp=tmp_path
        )

    run = call("start_run", "--tool-arg", "workflow=research")["structuredContent"]["run"]
    shown = call("open_turn", "--tool-arg", f"run={run}", "--tool-arg", "request=Where is Globex?")
    assert shown["isError"] is True
    assert shown["structuredContent"]["reason"] == "not_this_session" and shown["structuredContent"]["rule"] is None
    assert "each session ends its own runs" in shown["structuredContent"]["message"]
