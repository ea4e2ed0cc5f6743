"""The Graphs page's drawing: a plan from the views (viz.plan), its layout and HTML, kept under
the memory's version, the graph, the filters and the moments, so a rerun that changed none of
them draws nothing again."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

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
