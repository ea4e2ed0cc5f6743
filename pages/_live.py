"""Live pages (B8, #39): a thread per memory reruns the tabs that drew other than pages show now (`drawn`, `follow`;
a heartbeat moves only the version); at a past moment or without a server a page asks by itself (`every`). A page's
run leaves (`unfollow`), a live page follows (pages/_ui.live); reads are kept under memory's version (`read_at`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Concatenate, ParamSpec, TypeVar

import streamlit as st
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.scriptrunner import get_script_run_ctx

from memory_core import MemoryService

P = ParamSpec("P")
R = TypeVar("R")

LIVE_EVERY = 0.5  # seconds between looks at memory's version (an agent over MCP, another tab, a replay move it)

Drawn = tuple[str, str]  # memory's version (MemoryService.version) and what pages show (MemoryService.shown)
_DRAWN: dict[str, Drawn] = {}  # memory (its URL): the last asked


def drawn(svc: MemoryService, memory: str) -> Drawn | None:
    """What a page of `memory` draws now, asked again only when the version moved; None: nothing to watch."""
    version = ""
    for _ in range(3):
        version, kept = svc.version() or "", _DRAWN.get(memory)
        if not version or (kept is not None and kept[0] == version):
            return kept if version else None
        shown = svc.shown()
        if svc.version() == version:  # nothing committed meanwhile: `shown` is what that version holds
            _DRAWN[memory] = (version, shown)
            return _DRAWN[memory]
    return (version, "")  # moving as it is asked: what it shows is not known, so a tab that drew it is rerun


def every(seconds: float, changed: Callable[[], bool]) -> None:
    """Every `seconds`, a fragment asks `changed` and reruns the page if so (not in its first run: the page's click)."""
    with_the_page = [True]

    @st.fragment(run_every=seconds)
    def watch() -> None:
        if with_the_page:
            with_the_page.clear()
        elif changed():
            st.rerun(scope="app")

    watch()


Tab = tuple[Drawn, str]  # what a tab drew, and its page (script hash)
_FOLLOWED: dict[str, dict[str, Tab]] = {}  # memory: session id: its tab
_FOLLOWING = threading.Lock()


def follow(svc: MemoryService, memory: str, shown: Drawn) -> bool:
    """This tab rerun once what `memory`'s pages show moves past `shown`; False without a server to rerun it."""
    run = get_script_run_ctx()
    if run is None or not Runtime.exists():
        return False
    with _FOLLOWING:
        if memory not in _FOLLOWED:
            _FOLLOWED[memory] = {}
            threading.Thread(target=_watch, args=(svc, memory), name="live", daemon=True).start()
        _FOLLOWED[memory][run.session_id] = (shown, run.page_script_hash)
    return True


def unfollow() -> None:
    """This tab no longer rerun when memory moves (a page's run: a live page follows again)."""
    run = get_script_run_ctx()
    with _FOLLOWING:
        for tabs in _FOLLOWED.values():
            tabs.pop(run.session_id if run else "", None)


def _watch(svc: MemoryService, memory: str) -> None:
    """Every LIVE_EVERY seconds while a tab follows `memory`: each that drew what pages no longer show is rerun."""
    while True:
        time.sleep(LIVE_EVERY)
        try:
            now = drawn(svc, memory)
        except Exception:  # noqa: BLE001  (a notebook's memory gone with its files: its tabs are rerun)
            now = None
        with _FOLLOWING:
            tabs = _FOLLOWED[memory]
            for session, tab in list(tabs.items()):
                app = Runtime.instance().get_app_session(session) if Runtime.exists() else None
                if app is None:  # closed, or the server stopped
                    del tabs[session]
                elif now is None or not now[1] or tab[0][1] != now[1]:
                    app._call_soon_on_event_loop(partial(_rerun, app, memory, session, tab))
                else:  # the same shown under another version (a heartbeat): not rerun
                    tabs[session] = (now, tab[1])
            if not tabs:
                del _FOLLOWED[memory]
                return


def _rerun(app: AppSession, memory: str, session: str, tab: Tab) -> None:
    """On the server's event loop: the tab's page rerun at its address; not while it runs (its click): next look."""
    with _FOLLOWING:
        tabs = _FOLLOWED.get(memory, {})
        if app._scriptrunner is not None or tabs.get(session) != tab:  # running, or left or followed again
            return
        del tabs[session]
    again = ClientState()
    again.CopyFrom(app._client_state)  # its address (a fragment's run leaves the app's script as its page)
    again.page_script_hash = tab[1]
    app.request_rerun(again)


# --- answers kept under the memory's version: a rerun that changed nothing reads nothing again ---------

Version = tuple[str, str]  # the memory in use (its URL) and its version (MemoryService.version)
Args = tuple[object, ...]
Kwargs = tuple[tuple[str, object], ...]
Read = Callable[Concatenate[MemoryService, P], R]  # a read use case of the facade, or a view taking the service first


def version_at(svc: MemoryService, memory: str) -> Version | None:
    """The memory and its version now, moved by every commit here or elsewhere; None: keep nothing."""
    version = svc.version()
    return None if version is None else (memory, version)


def read_at(svc: MemoryService, at: Version | None, what: Read[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """`what` kept under `at` (a clock for history, one version for several reads, who acts), else asked now."""
    if at is None:
        return what(svc, *args, **kwargs)
    return _kept(at, f"{what.__module__}.{what.__qualname__}", args, tuple(sorted(kwargs.items())), svc, what)


@st.cache_data(show_spinner=False, max_entries=256)
def _kept(at: Version, name: str, args: Args, kwargs: Kwargs, _svc: MemoryService, _what: Callable[..., R]) -> R:
    return _what(_svc, *args, **dict(kwargs))
