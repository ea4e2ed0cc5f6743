"""The Graphs page's drawing, kept so a rerun that changed nothing draws nothing again; its filters and choices."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import astuple
from pathlib import Path

import pandas as pd
import streamlit as st
from streamlit.components.v1 import declare_component
from streamlit.delta_generator import DeltaGenerator

from memory_core import MemoryService
from memory_core.usecases.shapes import FocusPublic, GraphJson
from memory_core.views import viz
from memory_core.views.communities import Overview, drawn, overview
from memory_core.views.focus import VIS, library_dir
from pages._links import dropped
from pages._ui import Context, Version, read_at
from pages._words import caption, cite, plural


def library() -> str:
    """vis-network's address, relative to the page: a folder Streamlit serves as a component's (never drawn as one), so
    the drawing's page does not carry its 468 kB and the browser compiles it off the page's thread (B8)."""
    served = declare_component("vis", path=library_dir())  # registered anew by each run that draws: the same
    return f"component/{served.name}/{Path(VIS).name}"


def build(
    graph: str,
    data: Mapping[str, object],
    focus: str | None,
    flt: viz.Filters,
    highlight: tuple[str, ...],
    cmp: viz.Compare | None = None,
) -> tuple[viz.Plan, str, pd.DataFrame]:
    """What the page draws around `focus`: the plan, its HTML and the table of the facts drawn."""
    plan = viz.plan(data, focus, flt, highlight=highlight, compare=cmp)
    html = viz.to_html(plan, graph=graph, library=library()) if plan.nodes else ""
    rows = [(e["title"].split("\n")[0], e["weight"], e["status"], e["change"]) for e in plan.edges]
    table = pd.DataFrame(rows, columns=["Fact", "Weight", "Status", "Change"])
    return plan, html, table if cmp else table.drop(columns="Change")


@st.cache_data(show_spinner=False, max_entries=16)
def kept_drawing(
    at: Version,
    graph: str,
    owner: str,
    choice: tuple,
    highlight: tuple[str, ...],
    then: tuple[int | None, int | None],
    _data: Mapping[str, object],
    _flt: viz.Filters,
    _cmp: viz.Compare | None = None,
) -> tuple[viz.Plan, str, pd.DataFrame]:
    """The drawing kept under the version, graph, focus, filters (`choice`) and moments (`then`)."""
    return build(graph, _data, choice[0], _flt, highlight, _cmp)


#: The Graphs page's choices, kept when the reader leaves the page (Streamlit forgets them) and restored (#25).
KEPT = ("g_which", "g_run", "g_kinds", "g_rel", "g_status", "g_minw", "g_focus", "g_depth")


def restore_choices() -> None:
    """Before the page reads its link: the choices it had when the reader left it (a link still wins)."""
    for key, value in st.session_state.get("_g_kept", {}).items():
        st.session_state.setdefault(key, value)


def keep_choices() -> None:
    st.session_state["_g_kept"] = {key: st.session_state[key] for key in KEPT if key in st.session_state}


def moment_from_overview() -> None:
    """The Overview's moment and comparison, newly chosen there, carry over unless the link names its own (#25)."""
    for here, there, param in (("g_at", "ov_at_link", "at"), ("g_from", "ov_from", "from")):
        chosen = st.session_state.get(there)
        brought = f"_{here}_from_ov"
        if param not in st.query_params and isinstance(chosen, int) and st.session_state.get(brought) != chosen:
            st.session_state[here] = chosen
        st.session_state[brought] = chosen


def only(key: str, options: list) -> None:
    """A choice from a link that is not an option here is dropped, not an error."""
    value = st.session_state.get(key)
    if isinstance(value, list):
        if any(v not in options for v in value):  # written only when it changes: Streamlit warns otherwise
            st.session_state[key] = [v for v in value if v in options]
            dropped(key, "the rest of it" if st.session_state[key] else "none of it")
    elif value is not None and value not in options:
        del st.session_state[key]
        dropped(key, "its first choice")


STATUSES = ["active", "disputed", "retracted"]


def filters(data: FocusPublic | GraphJson) -> viz.Filters:
    """The filters over the facts read: kinds, relations, weight, status (R28)."""
    facts = data["facts"]
    kinds = sorted({f["subject"]["kind"] for f in facts} | {f["object"].get("kind", "value") for f in facts})
    relations = sorted({f["relation"] for f in facts})
    only("g_kinds", kinds)
    only("g_rel", relations)
    only("g_status", STATUSES)
    # Defaults as the session's first values, not the widgets' own: a link sets them too (from_link),
    # and Streamlit warns about a widget given a default whose value the session also set.
    for key, first in {"g_minw": 0.0, "g_status": ["active", "disputed"]}.items():
        st.session_state.setdefault(key, first)
    help_ = cite("Retracted facts are hidden unless asked for (R28).")
    return viz.Filters(  # the widgets in the Filters popover, in this order
        kinds=set(st.multiselect("Kinds", kinds, key="g_kinds", placeholder="all kinds")) or None,
        relations=set(st.multiselect("Relations", relations, key="g_rel", placeholder="all relations")) or None,
        min_weight=st.slider("Minimum weight", 0.0, 1.0, step=0.05, key="g_minw"),
        statuses=set(st.multiselect("Status", STATUSES, key="g_status", help=help_)),
        depth=int(st.session_state.get("g_depth") or 1),
    )


def chosen(flt: viz.Filters) -> tuple[object, ...]:
    """The filters as a key of the kept drawing (each set sorted)."""
    return tuple(tuple(sorted(v)) if isinstance(v, set) else v for v in astuple(flt))


def legend(plan: viz.Plan, cmp: viz.Compare | None) -> None:
    """The kinds' colours and how to read the drawing; with a comparison, its colours."""
    if viz.legend(plan):
        st.html(viz.legend_html(plan))  # kinds escaped there
        st.caption(
            "The focus is the large yellow dot; edges as wide as their weight (on hover), disputed facts dashed; "
            "values (amounts, dates) in grey boxes beside their entity. Click an entity to open its neighbours "
            "around it, or a “+N more” box to open those; double-click an entity to walk to it; click a fact's "
            "edge to open its weight."
        )
    if cmp is not None:
        st.html(
            f"<span style='color:{viz.ADDED_COLOR}'>━</span> added since moment {cmp.since} · "
            f"<span style='color:{viz.MOVED_COLOR}'>━</span> weight moved (↑ or ↓ on hover) · "
            f"<span style='color:{viz.GONE_COLOR}'>╌</span> gone since moment {cmp.since}"  # our colours and numbers
        )


CHOICES = 300  # drawn facts listed to open from the keyboard


def open_fact(plan: viz.Plan, graph: str) -> None:
    """The keyboard's way to a fact's weight: the heaviest drawn (B8); a click on any edge opens the rest."""
    heaviest = sorted((e for e in plan.edges if e["fact"] is not None), key=lambda e: (-e["weight"], e["fact"]))
    linked = {e["fact"]: e["title"].split("\n")[0] for e in heaviest[:CHOICES]}
    if len(heaviest) > CHOICES:
        st.caption(f"The {CHOICES} heaviest of the {len(heaviest):,} facts drawn are listed below; click any edge.")
    if linked:
        only("g_open_fact", list(linked))  # a fact of another moment or graph is no option here
        c3 = st.columns([3, 1], vertical_alignment="bottom")
        fact = c3[0].selectbox("Open a fact's weight", list(linked), format_func=linked.__getitem__, key="g_open_fact")
        link = {"fact": str(fact), "graph": graph}
        c3[1].page_link("pages/fact_weights_page.py", label="Why this weight?", query_params=link)


def _overview(ctx: Context, at: Version | None, shown: tuple[str, str]) -> Overview:
    """The graph as its communities (views/communities.py, MemoryService.communities), kept under the version."""
    return overview(read_at(ctx.svc, at, MemoryService.communities, *shown))


def view_toggle(where: DeltaGenerator) -> None:
    """ "Communities" (?view=communities), beside Play above the drawing: the whole graph as its communities (#39)."""
    view = st.query_params.get("view")
    if st.session_state.get("_g_view") != view:  # a link's view, once
        st.session_state["_g_view"], st.session_state["g_comm"] = view, view == "communities"
    on = where.toggle("Communities", key="g_comm", help="The whole graph, each community one node (Louvain).")
    st.session_state["_g_view"] = "communities" if on else None
    if on:
        st.query_params["view"] = "communities"
    else:
        st.query_params.pop("view", None)


def communities(ctx: Context, at: Version | None, shown: tuple[str, str], show: Callable[..., None]) -> bool:
    """With "Communities" on, the whole graph as its communities (#39); True when drawn."""
    if not st.session_state.get("g_comm"):
        return False
    ov = _overview(ctx, at, shown)
    plan = drawn(ov)
    caption(
        f"{plural(len(ov.communities), 'community', 'communities')} of {ov.entities:,} entities and {ov.facts:,} facts, as they "
        "stand now (networkx's Louvain, seeded: the same memory, the same communities). Each is named by its most "
        "connected entities and joined to the two it shares most facts with; click one to open it around its most "
        "connected entity."
    )
    show(plan, viz.to_html(plan, graph=shown[0], library=library()) if plan.nodes else "", set())
    return True


def members(ctx: Context, at: Version | None, shown: tuple[str, str]) -> None:
    """Opened from the communities (?community=N): that community's members listed."""
    which = st.query_params.get("community")
    if not (which and which.isdigit()):
        return
    c = next((c for c in _overview(ctx, at, shown).communities if c.id == int(which)), None)
    if c is not None:
        more = f" and {c.size - len(c.members):,} more" if c.size > len(c.members) else ""
        caption(f"Community **{viz.inert(c.label)}**: " + ", ".join(viz.inert(m) for m in c.members) + more + ".")
