"""The dashboard served as `make run` serves it: `streamlit run app.py` on a free loopback port over
a SQLite file that holds a scenario, ready once serve.py's first session ran; for the Chromium tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def app_env(tmp: Path) -> dict[str, str]:
    """The environment of an app whose database and notebooks are under `tmp`."""
    return {
        **os.environ,
        "MEMORY_DATABASE_URL": f"sqlite:///{tmp / 'memory.db'}",
        "MEMORY_NOTEBOOK_DIR": str(tmp / "notebooks"),
    }


@contextmanager
def streamlit(
    tmp: Path, env: dict[str, str], *, port: int | None = None, options: tuple[str, ...] = ()
) -> Iterator[str]:
    """The app served on a loopback port with `env`, until the block ends; its address. `port`: one
    chosen beforehand (a sign-in's redirect address names it), else a free one; `options`: more of
    Streamlit's (`--secrets.files PATH`)."""
    port = port or free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    command += ["--server.fileWatcherType", "none"]
    command += list(options or ("--secrets.files", str(tmp / "no-secrets.toml")))  # never a developer's secrets.toml
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        return bool(urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok")

    with running(command, tmp / "streamlit.log", healthy, what="streamlit", cwd=ROOT, env=env):
        # serve.py's first session, as `make run` has it: Streamlit knows the app's pages from then on,
        # so a first tab sent straight to a page finds it (streamlit/streamlit#9992)
        sys.path.insert(0, str(ROOT))
        import serve

        assert serve._first_session(url.replace("http://", "ws://") + "/_stcore/stream", within=60)
        yield url


@contextmanager
def served(
    tmp: Path, scenario: Path, *, port: int | None = None, options: tuple[str, ...] = ()
) -> Iterator[tuple[str, dict[str, str]]]:
    """The app's URL and its environment, over a fresh database holding `scenario`; stopped after."""
    env = app_env(tmp)
    subprocess.run(
        [sys.executable, "-m", "memory_core", "load", str(scenario)], cwd=ROOT, env=env, check=True, capture_output=True
    )
    with streamlit(tmp, env, port=port, options=options) as url:
        yield url, env


@contextmanager
def running(
    command: list[str], log_path: Path, ready: Callable[[], bool], *, what: str, **popen: Any
) -> Iterator[subprocess.Popen]:
    """A server process started with `command` (its output in `log_path`), once `ready()` answers
    true (an OSError while it starts up is a no); terminated, or killed, after."""
    log = open(log_path, "w")  # noqa: SIM115  (closed when the process is)
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **popen)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if ready():
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start: {log_path.read_text()}")
            time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextmanager
def mcp_http(url: str) -> Iterator[str]:
    """`python -m memory_core mcp --http` over `url` on a free port, answering (401 without a token): its /mcp address."""
    import urllib.error

    port = free_port()
    base = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen(
        [sys.executable, "-m", "memory_core", "mcp", "--http", "--port", str(port), "--db", url],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(base, timeout=1)
            except urllib.error.HTTPError:
                break  # it answers
            except OSError:
                time.sleep(0.05)
        yield base
    finally:
        server.terminate()
        server.wait(30)
