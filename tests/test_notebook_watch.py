"""#40: a notebook made from a run goes with the run within seconds while the dashboard runs, whichever
surface erased the run (here a script on the same database, as an agent over MCP would), with no page
run in between: `make run`'s server (serve.py) looks every second (R29-R31)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from backend import ABOVE_THE_STORE
from served import app_env, free_port, running

from memory_core import MemoryService

ROOT = Path(__file__).resolve().parent.parent
NB = "0123456789abcdef0123456789abcdef"


@ABOVE_THE_STORE
def test_a_notebook_of_a_run_erased_behind_the_dashboard_goes_without_a_page_run(tmp_path):
    env = app_env(tmp_path)
    load = [sys.executable, "-m", "memory_core", "load", str(ROOT / "sample_data" / "demo.json")]
    subprocess.run(load, cwd=ROOT, env=env, check=True, capture_output=True)
    folder = Path(env["MEMORY_NOTEBOOK_DIR"])
    folder.mkdir(parents=True)
    svc = MemoryService.at(env["MEMORY_DATABASE_URL"])
    run = next(r for r in svc.runs("acme") if r["person"])
    (folder / f"{NB}.run.json").write_text(json.dumps({"org": "acme", "run": run["id"], "person": run["person"]}))
    (folder / f"{NB}.notebook.json").write_text(json.dumps({"said": f"the text of {run['id']}"}))
    other = folder / "fedcba9876543210fedcba9876543210.run.json"  # a run that stays: its notebook stays
    kept = next(r for r in svc.runs("acme") if r["id"] != run["id"])
    other.write_text(json.dumps({"org": "acme", "run": kept["id"], "person": kept["person"]}))

    port = free_port()
    command = [sys.executable, "serve.py", "--server.headless", "true", "--server.port", str(port)]
    command += ["--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    command += ["--server.fileWatcherType", "none", "--secrets.files", str(tmp_path / "no-secrets.toml")]

    def healthy() -> bool:
        return bool(urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok")

    with running(command, tmp_path / "serve.log", healthy, what="serve.py", cwd=ROOT, env=env):
        time.sleep(3)  # serve.py's own first session has run its page by now: what follows has no page run
        assert (folder / f"{NB}.notebook.json").exists()
        svc.delete_run(run["id"], by=next(o["owner"] for o in svc.organizations() if o["id"] == "acme"))
        deadline = time.monotonic() + 20
        while list(folder.glob(f"{NB}.*")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not list(folder.glob(f"{NB}.*")), "the erased run's notebook is still there"
        assert other.exists()
