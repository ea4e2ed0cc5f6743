"""serve.py, which `make run` starts: `streamlit run app.py` with the pages' libraries loaded meanwhile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.backend_free  # no test database: the same on every backend

ROOT = Path(__file__).resolve().parent.parent


def test_serve_passes_its_arguments_to_streamlit_run_app():
    out = subprocess.run([sys.executable, "serve.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Usage: streamlit run" in out.stdout


def test_what_serve_loads_beforehand_imports():
    code = "import sys; import serve; serve._warm(); print(all(m in sys.modules for m in ('memory_core', 'pandas')))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True", out.stderr


def test_after_serve_s_first_session_a_link_to_any_page_opens_it(tmp_path):
    """#25: Streamlit knows an app's pages once a script ran (streamlit/streamlit#9992), so the first
    browser sent straight to Runs saw "Page not found". serve.py runs the default page in a session of
    its own as the server comes up; a session asking for Runs then finds it."""
    from served import served

    import serve

    with served(tmp_path, ROOT / "sample_data" / "demo.json") as (url, _):
        stream = url.replace("http://", "ws://") + "/_stcore/stream"
        assert serve._first_session(stream, within=60)
        assert "page_not_found" not in serve._session(stream, "runlog")
        assert "page_not_found" not in serve._session(stream, "preferences")


def test_serve_s_first_session_reaches_a_server_that_speaks_tls(tmp_path):
    """`make run` with `--server.sslCertFile`: the first session asks over TLS (wss), of this machine's own
    server, whose certificate names another host; before, it tried plain ws for 120 s and gave up."""
    import ssl
    import urllib.request

    from served import app_env, free_port, running
    from streamlit import config

    import serve

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=memory.example", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    port = free_port()
    tls = ["--server.sslCertFile", str(cert), "--server.sslKeyFile", str(key)]
    was = config.get_option("server.port")
    config.set_option("server.port", port)
    config.set_option("server.sslCertFile", str(cert))
    try:
        stream = serve._stream_url()
    finally:
        config.set_option("server.sslCertFile", None)
        config.set_option("server.port", was)
    assert stream == f"wss://127.0.0.1:{port}/_stcore/stream"
    unverified = ssl._create_unverified_context()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port"]
    command += [str(port), "--server.address", "127.0.0.1", "--secrets.files", str(tmp_path / "none.toml"), *tls]

    def healthy() -> bool:
        return urllib.request.urlopen(f"https://127.0.0.1:{port}/_stcore/health", context=unverified).read() == b"ok"

    with running(command, tmp_path / "streamlit.log", healthy, what="streamlit", cwd=ROOT, env=app_env(tmp_path)):
        assert serve._first_session(stream, within=30)
        assert "page_not_found" not in serve._session(stream, "runlog")


def test_make_run_starts_without_a_warning(tmp_path):
    """#39: every `make run` printed "An update to the [server] config option section was detected ... please
    restart streamlit": serve.py's first session read Streamlit's options before Streamlit read the command
    line's (the default port, 8501), and Streamlit, reading them again, saw the server's options change."""
    import os
    import signal
    import time
    import urllib.request

    from served import app_env, free_port

    import serve

    port, log = free_port(), tmp_path / "run.log"
    env = {k: v for k, v in app_env(tmp_path).items() if k not in ("MEMORY_LISTEN", "STREAMLIT_SERVER_ADDRESS")}
    command = ["make", "-s", "-o", ".venv/.base", "run", f"PY={sys.executable}", f"PORT={port}"]  # -o: no install
    with open(log, "w") as out:
        make = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 90
        while "URL: " not in log.read_text():
            assert make.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10).read() == b"ok"
        assert "script_finished" in serve._session(f"ws://127.0.0.1:{port}/_stcore/stream")
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=30)
    said = log.read_text()
    assert "Uvicorn server started" in said
    assert not [line for line in said.splitlines() if "warning" in line.lower() or "restart" in line.lower()], said
