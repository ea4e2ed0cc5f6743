"""The MCP server started as agents reach it, for the tests: a database with the tests' scenario, the
server over HTTP (uvicorn in a subprocess on a free loopback port), the environment a server runs in."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from backend import SERVER, fresh_url
from helpers import scenario

from memory_core import MemoryService, make_engine, parse, replay

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def agent_db(tmp_path: Path) -> Iterator[tuple[str, MemoryService]]:
    url = fresh_url("memory_mcp") if SERVER else f"sqlite:///{tmp_path / 'memory.db'}"
    svc = MemoryService(make_engine(url))
    replay(parse(json.dumps(scenario([]))), svc)
    yield url, svc
    svc.engine.dispose()


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def stdio_server(url: str, token: str, **popen: object) -> subprocess.Popen[str]:
    """`python -m memory_core mcp` over stdio on `url` as the token's holder, its three pipes open."""
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    command = [sys.executable, "-m", "memory_core", "mcp", "--db", url]
    return subprocess.Popen(command, env=env(MEMORY_TOKEN=token), text=True, **pipes, **popen)  # type: ignore[call-overload]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def agent_http(agent_db) -> Iterator[tuple[str, MemoryService, subprocess.Popen[str]]]:
    url, svc = agent_db
    port = _free_port()
    p = subprocess.Popen(
        [sys.executable, "-m", "memory_core", "mcp", "--http", "--port", str(port), "--db", url, "--idle-timeout", "2"],
        env=env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.post(base, json={}, timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    yield base, svc, p
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        p.wait(30)
