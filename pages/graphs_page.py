"""Graphs: the World, the acting person's User or a run's Flow graph, drawn with pyvis, now or as it stood
at any moment (R32), and what changed since another moment drawn and listed (?at=N&from=M)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memory_core import MemoryService
from memory_core.rules.wording import possessive
from memory_core.usecases.shapes import DrawingPublic, GraphJson
from memory_core.views import history, viz
from memory_core.views.compare import compare
from pages import _drawing, _history
from pages._history import Shown
from pages._links import copy_link, from_link, to_link
from pages._ui import Context, Version, guard, inert, live, notebook, org_names, page, people_names, read_at, version_at
from pages._words import caption, cite, plural

LOADED = 5000  # facts loaded for a page: the heaviest, so a large graph stays fast (B6, B8)


ctx, org = page("Graphs")
live(ctx, moments="g")  # redrawn when an agent or another tab changes memory
PREFIX = "g"  # the time control's keys: g_at, g_from, g_play…
LINKED = {"graph": "g_which", "run": "g_run", "kinds": "g_kinds", "rel": "g_rel", "status": "g_status"}
LINKED |= {"depth": "g_depth", "cap": "g_cap", "minw": "g_minw", "expand": "g_expand"}
_drawing.restore_choices()
lists = ("kinds", "rel", "status", "expand")
from_link(LINKED | {"entity": "g_entity"}, ints=("depth", "cap"), lists=lists, floats=("minw",))


def _moment(ctx: Context, org: str, graph: str) -> tuple[Shown | None, int | None]:
    """The time control and "Compare with…" for the World and Flow graphs (R32); the User graph now (R23)."""
    if graph == "user":
        caption(
            "The User graph is drawn as it stands now: its facts are taught in every organization "
            "(R20, R23), so this organization's moments do not date it. World and Flow graphs "
            "have a time control."
        )
        st.session_state[f"{PREFIX}_at_link"] = st.session_state[f"{PREFIX}_from"] = None
        _history.link_moments(PREFIX)
        return None, None
    _drawing.moment_from_overview()
    shown = _history.time_control(ctx, org, PREFIX)
    other = _history.compare_choice(
        PREFIX,
        shown,
        "Draw what changed in this graph between the two moments on the later one: facts added, gone, "
        "weights up or down; and list it below the drawing.",
    )
    _history.link_moments(PREFIX)
    return shown, other


def _graph_chosen(runs: list[str]) -> tuple[str, str]:
    """The graph drawn and its owner: the World, the person's User or a run's Flow graph (R20)."""
    choices = ["world"] + (["user"] if ctx.person else []) + (["flow"] if runs else [])
    _drawing.only("g_which", choices)
    _drawing.only("g_run", runs)
    which = st.radio(
        "Graph",
        choices,
        horizontal=True,
        key="g_which",
        format_func=str.capitalize,  # the link says world, user, flow
        captions=[
            cite(f"{viz.inert(possessive(ctx.org_name))} (R20)"),  # captions are Markdown: memory's text made inert
            cite(f"{viz.inert(ctx.person)}'s, in every organization (R20)"),
            cite("one run's, erased with it (R29)"),
        ][: len(choices)],
    )
    if which == "world":
        return "world", org
    if which == "user":
        return "user", ctx.person or ""
    return "flow", st.selectbox("Run", runs, key="g_run")


def _loaded(at: Version | None, graph: str, owner: str, drawn_at: int | None, clock: int) -> DrawingPublic | GraphJson:
    """The graph's heaviest facts, as they stood after moment `drawn_at` (R32) or now; said when it holds more."""
    if drawn_at is not None:
        data: DrawingPublic | GraphJson = _history.then(
            ctx, clock, MemoryService.graph_at, graph, owner, drawn_at, limit=LOADED, ids=True
        )
    else:
        data = read_at(ctx.svc, at, MemoryService.graph_drawing, graph, owner, limit=LOADED)
    if data["total"] > len(data["facts"]):
        st.caption(
            f"This graph {'held' if drawn_at is not None else 'holds'} {data['total']:,} facts"
            + (f" after moment {drawn_at}" if drawn_at is not None else "")
            + f"; the {len(data['facts']):,} heaviest are loaded for filtering and drawing."
        )
    return data


def _taught(graph: str, owner: str) -> set[str]:
    """The facts of this graph the notebook's last cell changed, drawn in red."""
    nb = notebook()
    if not (nb and ctx.source == "notebook" and nb.cursor):
        return set()
    last = nb.results.get(str(nb.cursor - 1), {})
    return {ch["fact"] for ch in last.get("changes", []) if ch["graph"] == graph and ch["owner"] == owner}


def _say_drawn(plan: viz.Plan, loaded: tuple[int, int], drawn_at: int | None, cmp: viz.Compare | None) -> None:
    """How much is drawn of how much was loaded (`loaded`: facts, total), at which moment, and what went."""
    facts, total = loaded
    gone = f", and **{plural(plan.gone, 'fact')} gone** since moment {cmp.since}, dashed in grey" if cmp else ""
    st.markdown(
        f"Showing **{len(plan.nodes):,} entities** and **{len(plan.edges) - plan.gone:,} facts** "
        + (f"of the {facts:,} heaviest loaded" if total > facts else f"of the {facts:,} facts in this graph")
        + (f" after moment {drawn_at}" if drawn_at is not None else "")
        + (gone if plan.gone else "")
        + "."
    )


def _changed(shown: Shown | None, other: int | None, graph: str, owner: str) -> tuple[list, list, int, int] | None:
    """With a moment to compare with (R32): the changed facts at the earlier moment and the later, and both."""
    if shown is None or other is None or other == shown.n:
        return None
    lo, hi = sorted((other, shown.n))
    return (*_history.then(ctx, shown.clock, MemoryService.facts_between, lo, hi, graph=(graph, owner)), lo, hi)


def _show(plan: viz.Plan, html: str, taught: set[str]) -> None:
    """The drawing, or why there is nothing to draw, with what the layout left out."""
    if plan.note:
        st.warning(plan.note)
    if taught:
        st.caption(f"In red: the {len(taught)} facts the last notebook cell changed.")
    if plan.nodes:
        st.iframe(html, height=640)
    else:
        st.info(f"Nothing to draw: {viz.inert(plan.reason)}.")  # names and kinds from memory made inert


def _drawn_at(shown: Shown | None, other: int | None) -> int | None:
    """The past moment drawn: the one shown, or the later of the two compared; None when that is now."""
    if shown is None:
        return None
    drawn_at = max(shown.n, other if other is not None else shown.n)
    return None if drawn_at == shown.newest else drawn_at


def _below(plan: viz.Plan, drawn: pd.DataFrame, file_name: str) -> None:
    """Below the drawing: its GraphML, and the facts drawn as a table on request."""
    st.download_button(
        "Download GraphML",
        lambda: viz.to_graphml(plan),  # made when asked for, not on every rerun
        file_name=file_name,
        mime="application/xml",
        key="g_graphml",
    )
    # The table on request: drawn with the page, its thousands of rows held up the drawing (B8, Chromium).
    if st.toggle(f"List the {len(plan.edges):,} facts drawn", key="g_table"):
        st.dataframe(drawn, hide_index=True, width="stretch")


def drawing() -> None:
    """The page below its title, in a fragment that reruns while the time control plays (R32)."""
    with guard():
        at = version_at(ctx.svc, ctx.memory)  # read first: what is read after it is at least as new
        graph, owner = _graph_chosen(read_at(ctx.svc, at, MemoryService.run_ids, org))
        shown, other = _moment(ctx, org, graph)
        drawn_at = _drawn_at(shown, other)
        changed = _changed(shown, other, graph, owner)
        cmp = compare(*changed[:3]) if changed else None  # before, after, since the earlier moment
        data = _loaded(at, graph, owner, drawn_at, shown.clock if shown else 0)
        flt = _drawing.filters(data)
        to_link(LINKED | {"entity": "g_entity"})
        st.session_state.pop("g_entity", None)
        taught = _taught(graph, owner)
        marked = tuple(sorted(taught))
        then = (drawn_at, cmp.since if cmp else None)
        with st.spinner("Laying out the graph…"):
            if at is None:
                plan, html, drawn = _drawing.build(graph, data, flt, marked, cmp)
            else:
                plan, html, drawn = _drawing.kept_drawing(
                    at, graph, owner, _drawing.chosen(flt), marked, then, data, flt, cmp
                )
        _say_drawn(plan, (len(data["facts"]), data["total"]), drawn_at, cmp)
        _show(plan, html, taught)
        _drawing.legend(plan, cmp)
        _drawing.open_fact(plan, graph)
        _below(plan, drawn, f"{graph}-{owner}.graphml")
        if changed and shown:  # the same changes as a table, as the Overview lists them
            name = history.named_graph(history.graph_name(graph, owner), org_names(ctx), people_names(ctx))
            d, lo, hi = history.diff(*changed[:2]), changed[2], changed[3]
            _history.show_diff(
                ctx, d, shown=shown, lo=lo, hi=hi, title=f"{inert(name)}, from moment", nothing="this graph"
            )
        with st.popover("Link to this view"):
            copy_link()
        _drawing.keep_choices()


_history.play_control(ctx, org, PREFIX)
st.fragment(run_every=_history.PLAY_EVERY if _history.playing(PREFIX) else None)(drawing)()
