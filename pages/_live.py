"""Live pages (B8): redrawn when memory's version moves, by one thread per memory that asks it for every tab
showing it and reruns a tab that drew another. A fragment in each tab asking every half second kept idle tabs
and their browser busy: five of them took a sixth tab's shared link from 1.5 to 2.0 s. At a past moment, or
without a server (AppTest), a page asks by itself (`every`). Every run of a page leaves (`unfollow`, in the
sidebar); a live page follows (pages/_ui.live)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial

import streamlit as st
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner import get_script_run_ctx

from memory_core import MemoryService

#: How often memory's version is asked (an agent over MCP, another tab, a replay may have moved it).
LIVE_EVERY = 0.5

Version = tuple[str, str | None]  # the memory (its URL) and its version (MemoryService.version)


def every(seconds: float, changed: Callable[[], bool]) -> None:
    """Every `seconds`, a fragment asks `changed` and runs the whole page again when it says so."""
    # Its first run is the page's own and compares nothing: a rerun from it would drop the click the
    # page runs for (under an agent's writes, one click in two on "Open in the Notebook" did nothing).
    with_the_page = [True]

    @st.fragment(run_every=seconds)
    def watch() -> None:
        if with_the_page:
            with_the_page.clear()
        elif changed():
            st.rerun(scope="app")

    watch()


Tab = tuple[Version, str]  # the version a tab drew, and its page (script hash)
_FOLLOWED: dict[str, dict[str, Tab]] = {}  # memory: session id: its tab
_FOLLOWING = threading.Lock()


def follow(svc: MemoryService, memory: str, drawn: Version) -> bool:
    """This tab rerun once `memory`'s version moves past `drawn`; False without a server to rerun it."""
    run = get_script_run_ctx()
    if run is None or not Runtime.exists():
        return False
    with _FOLLOWING:
        if memory not in _FOLLOWED:
            _FOLLOWED[memory] = {}
            threading.Thread(target=_watch, args=(svc, memory), name="live", daemon=True).start()
        _FOLLOWED[memory][run.session_id] = (drawn, run.page_script_hash)
    return True


def unfollow() -> None:
    """This tab no longer rerun when memory moves (a page's run: a live page follows again)."""
    run = get_script_run_ctx()
    with _FOLLOWING:
        for tabs in _FOLLOWED.values():
            tabs.pop(run.session_id if run else "", None)


def _watch(svc: MemoryService, memory: str) -> None:
    """Every LIVE_EVERY seconds while a tab follows `memory`: each that drew another version is rerun."""
    while True:
        time.sleep(LIVE_EVERY)
        try:
            now = (memory, svc.version())
        except Exception:  # noqa: BLE001  (a notebook's memory gone with its files: its tabs are rerun)
            now = None
        with _FOLLOWING:
            tabs = _FOLLOWED[memory]
            for session, tab in list(tabs.items()):
                app = Runtime.instance().get_app_session(session) if Runtime.exists() else None
                if app is None:  # closed, or the server stopped
                    del tabs[session]
                elif tab[0] != now:
                    app._call_soon_on_event_loop(partial(_rerun, app, memory, session, tab))
            if not tabs:
                del _FOLLOWED[memory]
                return


def _rerun(app: AppSession, memory: str, session: str, tab: Tab) -> None:
    """On the server's event loop: the tab's page run again with its address, as Streamlit reruns it when its
    source changed; not while it runs (a click's run: rerunning it would drop the click), the next look then."""
    with _FOLLOWING:
        tabs = _FOLLOWED.get(memory, {})
        if app._scriptrunner is not None or tabs.get(session) != tab:  # running, or left or followed again
            return
        del tabs[session]
    again = ClientState()
    again.CopyFrom(app._client_state)  # its address (a fragment's run leaves the app's script as its page)
    again.page_script_hash = tab[1]
    app.request_rerun(again)
