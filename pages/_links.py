"""Links that reproduce a view: its choices read from and written to the URL's query, its address, the app's pages."""

from __future__ import annotations

import json
from typing import NamedTuple
from urllib.parse import quote

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from memory_core.format.events import MAX_INTEGER
from memory_core.views.text import inert


def _encode(value: object) -> str | None:
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _seen(param: str) -> str:
    """What a link's value was last seen as: the param on this page, not another page's (#25) nor a widget's."""
    return f"{st.session_state.get('_link_page', '')}>{param}"


def from_link(
    params: dict[str, str], *, ints: tuple[str, ...] = (), lists: tuple[str, ...] = (), floats: tuple[str, ...] = ()
) -> set[str]:
    """Before a page draws its widgets: each new `?param=` sets its widget (params: param -> key); the params set."""
    seen = st.session_state.setdefault("_link_seen", {})
    applied: set[str] = set()
    for param, key in params.items():
        raw = st.query_params.get(param)
        if raw is None or seen.get(_seen(param)) == raw:
            continue
        seen[_seen(param)] = raw
        try:
            value = _value(param, raw, ints=ints, lists=lists, floats=floats)
        except ValueError:  # a mangled link: the widget keeps its choice, and the page says why
            wanted = "a number from 0 to 1" if param in floats else f"a whole number from 0 to {MAX_INTEGER:,}"
            st.warning(f"{_this_link(param, raw)} is not {wanted}: the page opened without it.")
            continue
        st.session_state[key] = value
        st.session_state.setdefault(SET_BY_LINK, {})[key] = (param, raw)
        applied.add(param)
    return applied


def _value(
    param: str, raw: str, *, ints: tuple[str, ...], lists: tuple[str, ...], floats: tuple[str, ...]
) -> str | float | list[str]:
    """A link's value as its widget holds it."""
    if param in lists:
        return [v for v in raw.split(",") if v]
    if param in floats:
        return _within(float(raw), 1.0)
    if param in ints:
        return int(_within(int(raw), MAX_INTEGER))
    return raw.lower() if param == "graph" else raw  # graphs are named lowercase; ?graph=Flow still opens (#25)


def _within(value: float, top: float) -> float:
    """ValueError for an id or moment no column holds (32 bits, #26), or a weight past 0…1."""
    if not 0 <= value <= top:
        raise ValueError
    return value


#: Widget key -> (param, value) of each choice a link set in this run (emptied as a run starts, app.py).
SET_BY_LINK = "_link_set"


def dropped(key: str, instead: str) -> None:
    """A choice a link set in this run that names nothing here, said as the page falls back to `instead`."""
    if (came := st.session_state.get(SET_BY_LINK, {}).pop(key, None)) is not None:
        st.warning(f"{_this_link(*came)} names nothing here: the page shows {instead}.")


def _this_link(param: str, raw: str) -> str:
    """A link's parameter as a warning names it: its value as text, cut at 40 characters."""
    return f"This link's {param}={inert(raw[:40])}{'…' if len(raw) > 40 else ''}"


def to_link(params: dict[str, str]) -> None:
    """After a page drew its widgets: their values written to the URL (params maps param -> key)."""
    seen = st.session_state.setdefault("_link_seen", {})
    for param, key in params.items():
        value = _encode(st.session_state.get(key))
        if value is None:
            st.query_params.pop(param, None)
            seen.pop(_seen(param), None)
            continue
        if st.query_params.get(param) != value:
            st.query_params[param] = value
        seen[_seen(param)] = value


def runs_link(run: str, **also: str) -> str:
    """The Runs page on a run (and a turn open, or a record first, R24), as a link's target."""
    return "runs?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in {"run": run, **also}.items())


def record_link(run: str | None, record: str | None, otherwise: str, *, query: str = "") -> str:
    """A record's id as a Markdown link to its row on Runs (R24); `otherwise`, inert, without a pointer (R29)."""
    if run is None or record is None:
        return inert(otherwise)
    return f"[{inert(record)}]({runs_link(run, record=record)}{query})"


def copy_link(label: str = "Link to this view", where: DeltaGenerator | None = None) -> None:
    """The view's address, to copy and share, in a popover `label` (in `where`): it loads its highlighter when opened (B8)."""
    query = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in st.query_params.to_dict().items())
    path = (getattr(st.context, "url", None) or "").split("?", 1)[0]
    with (where or st).popover(label):
        st.code(f"{path}?{query}" if query else path or "(this page)", language=None)
        st.caption(f"{label}: point at it and click the copy icon at its right to share exactly this view.")


#: A link that names what to show scrolls to it (#25); the app's page is same-origin with its frames.
_SCROLL = """<script>
(function () {
  var tries = 0, timer = setInterval(function () {
    var found = Array.prototype.find.call(window.parent.document.querySelectorAll("h1, h2, h3, summary p"),
      function (h) { return h.textContent.trim().indexOf(%s) === 0; });
    if (found) { found.style.scrollMarginTop = "60px"; found.scrollIntoView({block: "start"}); }
    if (found || ++tries > 100) { clearInterval(timer); }
  }, 50);
})();
</script>"""


def scroll_to(heading: str) -> None:
    """Scroll to the heading (or expander's label) starting with `heading`, under the app's 60 px header (5 s at most)."""
    st.iframe(_SCROLL % json.dumps(heading), height=1)


#: A link in a page's text to another page of the app opens in the same tab and session (#25: a new tab
#: started cold, 4-5 s): the address is moved and Streamlit told, as its back button does (popstate).
#: A click with a modifier key, and links elsewhere, are left to the browser.
_SAME_TAB = """<script>
(function () {
  if (window.__memorySameTab) { return; }
  window.__memorySameTab = true;
  var pages = %s;
  document.addEventListener("click", function (e) {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) { return; }
    var a = e.target && e.target.closest ? e.target.closest("a[href]") : null;
    if (!a || !a.closest("[data-testid='stMarkdownContainer']")) { return; }
    var url = new URL(a.getAttribute("href"), document.baseURI);
    var page = url.pathname.replace(/\\/+$/, "").split("/").pop();
    if (url.origin !== window.location.origin || pages.indexOf(page) < 0) { return; }
    e.preventDefault();
    e.stopPropagation();
    window.history.pushState(null, "", url.pathname + url.search);
    window.dispatchEvent(new PopStateEvent("popstate"));
    document.querySelectorAll("[data-testid='stMain'], [data-testid='stAppViewContainer']").forEach(
      function (el) { el.scrollTo(0, 0); });  // the page opened from its top, as a link opens it
  }, true);
})();
</script>"""


class Page(NamedTuple):
    """A page of the app: its script, its title in the navigation, its address (a link's path)."""

    script: str
    title: str
    address: str


#: The app's pages in the navigation's order (app.py, links and tests read it): a new page is its script
#: and one line here. The first is served at `/`. A script's name differs from its address
#: (docs/decisions.md d-page-files).
PAGES = (
    Page("pages/overview_page.py", "Overview", "_overview"),
    Page("pages/notebook_page.py", "Notebook", "notebook"),
    Page("pages/graphs_page.py", "Graphs", "graphs"),
    Page("pages/settings_page.py", "Settings", "settings"),
    Page("pages/runs_page.py", "Runs", "runs"),
    Page("pages/fact_weights_page.py", "Fact weights", "fact-weights"),
    Page("pages/memory_reads_page.py", "Memory reads", "reads"),
    Page("pages/erasure_page.py", "Erasure", "erasure"),
    Page("pages/rules_page.py", "Rules", "rules"),
)
#: The pages' addresses until #37 -> their address now: links people shared open that page, with their
#: choices (`/home?at=7`, `/facts?graph=user`; app.py).
OLD_ADDRESSES = {
    "home": "_overview",
    "overview": "_overview",
    "overview-page": "_overview",
    "cells": "notebook",
    "draw": "graphs",
    "preferences": "settings",
    "runlog": "runs",
    "facts": "fact-weights",
    "probe": "reads",
    "erase": "erasure",
    "rulebook": "rules",
}


def addresses() -> tuple[str, ...]:
    """The app's pages by their address, old ones too: the only links taken in the same tab."""
    return (*(page.address for page in PAGES[1:]), *OLD_ADDRESSES)


#: Cells wrap at spaces, inside a word too long for its column (#25), text unchanged; headers' and row keys' words whole (#39).
#: Graphs' entities found show their scrollbar (Streamlit hides it; a row wider than the window gave no cue, #39).
_WRAP = "<style>[data-testid='stTable'] :is(th, td, th *, td *) { white-space: normal !important; overflow-wrap: anywhere !important; } [data-testid='stTable'] :is(th, th *, td:first-child, td:first-child *) { overflow-wrap: break-word !important; } .st-key-g_found [data-testid='stButtonGroup'] > div { scrollbar-width: thin !important; scrollbar-color: #8a8a8a transparent !important; }</style>"


def same_tab() -> None:
    """Links to the app's own pages open in this tab and session; tables' cells wrap within their frame."""
    st.html(_SAME_TAB % json.dumps(addresses()), unsafe_allow_javascript=True)
    st.html(_WRAP)
