"""The Graphs page's drawing: a plan from the views (viz.plan), its layout and HTML, kept under
the memory's version, the graph, the filters and the moments, so a rerun that changed none of
them draws nothing again."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

import pandas as pd
import streamlit as st

from memory_core.views import viz
from pages._ui import Version


@st.cache_data(show_spinner=False, max_entries=32)
def _positions(digest: str, _plan: viz.Plan) -> viz.layout.Drawing:
    """Positions of a drawing, computed once for its entities, facts, sizes and names (the same input, the
    same picture), kept under a digest of them (Streamlit's own hashing of thousands of pairs took longer
    than the layout)."""
    return viz.layout_of(_plan)


def _laid_out(plan: viz.Plan) -> viz.layout.Drawing:
    return _positions(hashlib.sha256(json.dumps(plan.key).encode("utf-8")).hexdigest(), plan)


def build(
    graph: str, data: Mapping[str, Any], flt: viz.Filters, highlight: tuple[str, ...], cmp: viz.Compare | None = None
) -> tuple[viz.Plan, str, pd.DataFrame]:
    """What the page draws: the plan, its HTML and the table of the facts drawn."""
    plan = viz.plan(data, flt, highlight=highlight, compare=cmp)
    html = viz.to_html(plan, drawing=_laid_out(plan), graph=graph) if plan.nodes else ""
    table = pd.DataFrame(
        [
            {"Fact": e["title"].split("\n")[0], "Weight": e["weight"], "Status": e["status"], "Change": e["change"]}
            for e in plan.edges
        ],
        columns=["Fact", "Weight", "Status", "Change"],
    )
    if cmp is None:
        table = table.drop(columns="Change")
    return plan, html, table


@st.cache_data(show_spinner=False, max_entries=16)
def kept_drawing(
    at: Version,
    graph: str,
    owner: str,
    choice: tuple,
    highlight: tuple[str, ...],
    then: tuple[int | None, int | None],
    _data: Mapping[str, Any],
    _flt: viz.Filters,
    _cmp: viz.Compare | None = None,
) -> tuple[viz.Plan, str, pd.DataFrame]:
    """The drawing kept under the memory's version, the graph, the filters (`choice`) and the moments
    (`then`: the moment drawn, None for now, and the moment compared with): a rerun that changed none
    of them lays out and builds nothing."""
    return build(graph, _data, _flt, highlight, _cmp)


#: The Graphs page's choices, kept when the reader leaves the page and restored when they come back
#: (Streamlit forgets a widget's value once a page without it runs): issue #25.
KEPT = ("g_which", "g_run", "g_kinds", "g_rel", "g_status", "g_minw", "g_focus", "g_depth", "g_cap", "g_expand")


def restore_choices() -> None:
    """Before the page reads its link: the choices it had when the reader left it (a link still wins)."""
    for key, value in st.session_state.get("_g_kept", {}).items():
        if key not in st.session_state:
            st.session_state[key] = value
    which = st.session_state.get("g_which")
    if isinstance(which, str) and which != which.lower():  # kept by a session from before #25 ("Flow")
        st.session_state["g_which"] = which.lower()


def keep_choices() -> None:
    st.session_state["_g_kept"] = {key: st.session_state[key] for key in KEPT if key in st.session_state}


def moment_from_overview() -> None:
    """The Overview's moment and its comparison carry over: a past moment, or a moment to compare with,
    chosen there (and not yet brought here) is the one drawn, unless the link names its own (?at=,
    ?from=). One chosen here stays until another is chosen there (#25)."""
    for here, there, param in (("g_at", "ov_at_link", "at"), ("g_from", "ov_from", "from")):
        chosen = st.session_state.get(there)
        brought = f"_{here}_from_ov"
        if param not in st.query_params and isinstance(chosen, int) and st.session_state.get(brought) != chosen:
            st.session_state[here] = chosen
        st.session_state[brought] = chosen


def expanded(focus: str | None) -> tuple[str, ...]:
    """The entities opened by a double-click (?expand=), closed all when the focus changes."""
    if st.session_state.get("_g_focus_was", focus) != focus:
        st.session_state["g_expand"] = []
    st.session_state["_g_focus_was"] = focus
    value = st.session_state.get("g_expand") or []  # each id with its "%" and "," escaped (templates.py)
    return tuple(unquote(v) for v in value) if focus else ()
