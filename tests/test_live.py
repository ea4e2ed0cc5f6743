"""Live pages and heartbeats (#39): an MCP server's heartbeat moves memory's version every few seconds and nothing
a page shows, so an open live tab is not rerun by it; a moment, a record, a read kept or a session is shown."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import test_memory_version
from helpers import HQ, web

from memory_core import MemoryService, make_engine

ROOT = Path(__file__).resolve().parent.parent

svc = test_memory_version.svc  # the same memory: a taught turn and an open one, on a file and the backend


def test_what_pages_show_stays_through_heartbeats_and_moves_with_each_change(svc):
    shown = svc.shown()
    svc.agent_server_started("srv-a", host="elsewhere", pid=1, transport="http", now=0.0)
    for beat in range(1, 4):
        svc.agent_server_alive("srv-a", now=5.0 * beat)
    assert svc.shown() == shown  # the heartbeats moved nothing a page shows
    changes = [
        lambda: svc.agent_session_opened("ses-a", server="srv-a", client="agent 1", transport="http", now=6.0),
        lambda: svc.start_run("r2", org="acme", person="dana", session="ses-a"),  # a moment
        lambda: svc.record("t2", record=web("https://b.example/", HQ)),  # a record in an open turn, no moment
        lambda: svc.read("t2", call="GraphResolve", args={"name": "Globex"}),  # a read kept
        lambda: svc.agent_session_ended("ses-a", why="closed", now=7.0),
    ]
    for change in changes:
        change()
        assert svc.shown() != shown
        shown = svc.shown()


def _frames(ws, until: float) -> list[str]:
    """The kinds of message the app's server sent on `ws` until `until` (monotonic), or its script's end."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    kinds: list[str] = []
    while time.monotonic() < until and (not kinds or kinds[-1] != "script_finished"):
        try:
            raw = ws.recv(timeout=max(0.01, until - time.monotonic()))
        except TimeoutError:
            break
        said = ForwardMsg()
        said.ParseFromString(raw)
        kinds.append(str(said.WhichOneof("type")))
    return kinds


@pytest.mark.backend_free  # a SQLite file behind `make run`'s server: the watcher is the same on every backend
def test_an_open_live_tab_is_not_rerun_by_a_heartbeat_and_is_by_a_record(tmp_path):
    """A tab on Runs (a live page) while an MCP server beats every 0.2 s: it hears nothing from the server while
    memory's version moved at least five times; then a record in an open turn reruns it within seconds."""
    from served import served
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from websockets.sync.client import connect

    with served(tmp_path, ROOT / "sample_data" / "demo.json") as (url, env):
        svc = MemoryService(make_engine(env["MEMORY_DATABASE_URL"]))
        svc.start_run("run-live", org="acme", person="lee", workflow="company_profile")
        svc.open_turn("turn-live", run="run-live", request={"text": "Who supplies our servo drives?", "claims": []})
        svc.agent_server_started("srv-beat", host="elsewhere", pid=1, transport="http", now=0.0)
        stop, versions = threading.Event(), set()

        def beat() -> None:
            while not stop.wait(0.2):
                svc.agent_server_alive("srv-beat", now=time.time())
                versions.add(svc.version())

        with connect(url.replace("http://", "ws://") + "/_stcore/stream", subprotocols=["streamlit"]) as ws:
            run = BackMsg()
            run.rerun_script.query_string, run.rerun_script.page_name = "run=run-live", "runs"
            ws.send(run.SerializeToString())
            assert _frames(ws, time.monotonic() + 60)[-1] == "script_finished"
            while _frames(ws, time.monotonic() + 1):  # what follows the run (its status), until a second of quiet
                pass
            beating = threading.Thread(target=beat)
            beating.start()
            try:
                deadline = time.monotonic() + 30
                while len(versions) < 6 and time.monotonic() < deadline:  # five beats past the first, then heard?
                    assert _frames(ws, time.monotonic() + 0.2) == [], "a heartbeat reran the tab"
                assert len(versions) >= 6, versions
                svc.record("turn-live", record={**web("https://b.example/", HQ), "reliability": None, "within": None})
                assert "script_finished" in _frames(ws, time.monotonic() + 10)  # rerun by the record
            finally:
                stop.set()
                beating.join()
                svc.engine.dispose()
