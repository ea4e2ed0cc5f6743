"""Graphs: World, User or Flow drawn from a focus (#39), walked by clicking, at any moment (R32)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from memory_core import MemoryService
from memory_core.plain import Obj
from memory_core.rules.wording import possessive
from memory_core.usecases.shapes import FocusPublic, FoundEntity, GraphJson
from memory_core.views import history, viz
from memory_core.views.compare import compare
from pages import _drawing, _history
from pages._history import Between, Shown
from pages._links import copy_link, from_link, to_link
from pages._ui import Context, Version, guard, inert, live, notebook, org_names, page, people_names, read_at, version_at
from pages._words import caption, cite, plural

Changed = tuple[Between, int, int]  # the facts changed between two moments, the earlier and the later
LOADED = 5000  # facts read of a past moment: the heaviest, so a large graph stays fast (B6, B8)


ctx, org = page("Graphs")
live(ctx, moments="g")  # redrawn when an agent or another tab changes memory
PREFIX = "g"  # the time control's keys: g_at, g_from, g_play…
LINKED = {"graph": "g_which", "run": "g_run", "kinds": "g_kinds", "rel": "g_rel", "status": "g_status"}
LINKED |= {"depth": "g_depth", "minw": "g_minw", "focus": "g_focus"}
_drawing.restore_choices()
from_link(LINKED | {"entity": "g_entity"}, ints=("depth",), lists=("kinds", "rel", "status"), floats=("minw",))
if ":" in (st.session_state.get("g_entity") or ""):  # a link from before #39: ?entity=kind:name
    st.session_state["g_focus"] = st.session_state.pop("g_entity").split(":", 1)[1]
st.query_params.pop("entity", None)  # the link says ?focus= now


def _moment(ctx: Context, org: str, graph: str, filters: DeltaGenerator) -> tuple[Shown | None, int | None]:
    """The time control, and "Compare with…" among the filters (R32); the User graph now (R23)."""
    if graph == "user":
        caption(
            "The User graph is drawn as it stands now: its facts are taught in every organization (R20, R23), so "
            "this organization's moments do not date it. World and Flow graphs have a time control."
        )
        st.session_state[f"{PREFIX}_at_link"] = st.session_state[f"{PREFIX}_from"] = None
        _history.link_moments(PREFIX)
        return None, None
    _drawing.moment_from_overview()
    shown = _history.time_control(ctx, org, PREFIX)
    with filters:
        said = "Draw what changed in this graph between the two moments on the later one: facts added, gone, "
        other = _history.compare_choice(PREFIX, shown, said + "weights up or down; and list it below the drawing.")
    _history.link_moments(PREFIX)
    return shown, other


def _graph_chosen(runs: list[str], run: DeltaGenerator) -> tuple[str, str]:
    """The graph drawn and its owner: the World, the person's User or a run's Flow graph (R20), its run in `run`."""
    choices = ["world"] + (["user"] if ctx.person else []) + (["flow"] if runs else [])
    _drawing.only("g_which", choices)
    _drawing.only("g_run", runs)
    said = f"World: {viz.inert(possessive(ctx.org_name))} (R20). User: {viz.inert(ctx.person)}'s, in every "
    said = cite(said + "organization (R20). Flow: one run's, erased with it (R29).")  # Markdown: memory's text inert
    which = st.radio("Graph", choices, horizontal=True, key="g_which", format_func=str.capitalize, help=said)
    if which == "flow":
        return "flow", run.selectbox("Run", runs, key="g_run")
    return which, org if which == "world" else ctx.person or ""


def _loaded(
    at: Version | None, graph: str, owner: str, drawn_at: int | None, clock: int, name: str | None
) -> tuple[FocusPublic | GraphJson, str | None, str]:
    """The focus `name` and the facts around it now, or as they stood after `drawn_at` (R32); its id, how found (#39)."""
    if drawn_at is not None:
        past = _history.then(ctx, clock, MemoryService.graph_at, graph, owner, drawn_at, limit=LOADED, ids=True)
        ends = (e for f in past["facts"] for e in (f["subject"], f["object"]) if "kind" in e)
        found = next((viz.node_id(e) for e in ends if e["name"] == name), None)
        return past, found, "name" if found else "run" if graph == "flow" and not name else "most connected"
    depth = int(st.session_state.get("g_depth") or 1)
    now = read_at(ctx.svc, at, MemoryService.focus, graph, owner, name, depth=depth)
    return now, viz.node_id(cast("Obj", now["focus"])) if now["focus"] else None, now["by"]


def _search(graph: str, owner: str, row: DeltaGenerator) -> None:
    """Entities found as the reader types, by GraphResolve's words (#38), listed in `row`; choosing one focuses it (#39)."""
    text = st.text_input("Find an entity", key="g_find", live=True, placeholder="the start of any word of a name")
    if not text:
        return
    seen = {"world": org} | ({"user": ctx.person} if ctx.person else {}) | ({graph: owner} if graph == "flow" else {})
    found = ctx.svc.find_entities(seen, text)
    with row.container(horizontal=True, vertical_alignment="center", wrap=False):
        if not found:
            each = "a word" if len(text.split()) == 1 else "words"
            st.caption(f"No entity here has {each} beginning with “{viz.inert(text)}”: words match from their start.")
            return
        listed, said = _listed(found)
        st.caption(listed, width="content")
        st.pills("Found", found, key="g_found", format_func=said, on_change=_chosen, label_visibility="collapsed")


def _listed(found: list[FoundEntity]) -> tuple[str, Callable[[FoundEntity], str]]:
    """The row's caption and each entity's words: a graph all share said once, a row wider than 1400 px's said (#39)."""
    one = {e["graph"] for e in found} == {found[0]["graph"]}
    said = lambda e: " · ".join([e["name"], e["kind"], *([] if one else [e["graph"]]), plural(e["facts"], "fact")])
    wide = " (scroll →)" if sum(6 * len(said(e)) + 40 for e in found) > 640 else ""  # px the row shows at 1400
    return f"{len(found)} found{' in ' + found[0]['graph'].capitalize() if one else ''}{wide}:", said


def _chosen() -> None:
    """A found entity chosen: its graph drawn around it, a new walk's first step (#39)."""
    if (chosen := st.session_state.get("g_found")) is not None:
        st.session_state["g_which"], st.session_state["g_focus"] = chosen["graph"], chosen["name"]
        st.session_state["_g_trail"] = {}  # the entity the page opened on was not walked through
        st.session_state["g_find"], st.session_state["g_found"] = "", None


def _said(name: str | None, asked: str | None, by: str, row: DeltaGenerator) -> None:
    """How the focus was found (`by`), when not as asked: above the drawing, in `row` unless the search lists there (#39)."""
    if name is not None and asked != name:
        here = f"**{viz.inert(name)}**, the most connected entity here. "
        found = f"Opened on **{viz.inert(name)}**, found by the words “{viz.inert(asked)}”. " if asked else ""
        missed = f"No entity here matches “{viz.inert(asked)}”: opened on {here}" if asked else ""
        said = (found if by in ("name", "words") else missed) or f"Opened on {here}Search above for another entity."
        (st if st.session_state.get("g_find") else row).caption(said)


def _trail(graph: str, name: str | None, row: DeltaGenerator) -> None:
    """The entities walked in this graph (#39), a breadcrumb in `row`, each a link back; Back keeps the steps ahead."""
    walked = {} if "community" in st.query_params else st.session_state.get("_g_trail", {})  # a community: anew
    steps, here = walked.get(graph, ([], -1))  # another graph's trail goes
    if name in steps:
        here = steps.index(name)
    elif name is not None:  # a new walk: the steps ahead of the one shown go
        steps = [*steps[: here + 1], name][-5:]  # five fit in the row at 1400 px
        here = len(steps) - 1
    st.session_state["_g_trail"] = {graph: (steps, here)}
    if len(steps) < 2 or st.session_state.get("g_find"):  # the row shows what a search found
        return
    with row.container(horizontal=True, gap="small", vertical_alignment="center"):  # wrapped: no name cut
        st.caption("Walked:", width="content")
        for i, step in enumerate(steps):  # a page link keeps the session, its organization and identity
            link = {"graph": graph, "focus": step}
            if i == here:
                st.markdown(f"**{viz.inert(step)}**", width="content")
            else:
                st.page_link("pages/graphs_page.py", label=viz.inert(step), query_params=link)


def _taught(graph: str, owner: str) -> set[str]:
    """The facts of this graph the notebook's last cell changed, drawn in red."""
    nb = notebook()
    if not (nb and ctx.source == "notebook" and nb.cursor):
        return set()
    last = nb.results.get(str(nb.cursor - 1), {})
    return {ch["fact"] for ch in last.get("changes", []) if ch["graph"] == graph and ch["owner"] == owner}


def _say_drawn(plan: viz.Plan, drawn_at: int | None, cmp: viz.Compare | None) -> None:
    """How much the drawing opened with around the focus (a click opens more: #39), at which moment, what went."""
    entities = sum(1 for n in plan.nodes if n["ring"] >= 0)
    gone = f", and **{plural(plan.gone, 'fact')} gone** since moment {cmp.since}, dashed in grey" if cmp else ""
    st.markdown(
        f"Opened with **{entities:,} entities** and **{len(plan.edges) - plan.gone:,} facts**"
        + (f" after moment {drawn_at}" if drawn_at is not None else "")
        + (gone if plan.gone else "")
        + (f"; {plural(plan.hidden, 'neighbour')} more open on a click" if plan.hidden else "")
        + "."
    )


def _drawn_and_changed(
    shown: Shown | None, other: int | None, graph: str, owner: str
) -> tuple[int | None, Changed | None]:
    """The past moment drawn, the later of those compared (None: now); with two, the facts changed between (R32)."""
    if shown is None:
        return None, None
    lo, hi = sorted((shown.n if other is None else other, shown.n))
    drawn_at = None if hi == shown.newest else hi
    if lo == hi:
        return drawn_at, None
    changed = _history.then(ctx, shown.clock, MemoryService.facts_between, lo, hi, graph=(graph, owner))
    return drawn_at, (changed, lo, hi)


def _show(plan: viz.Plan, html: str, taught: set[str]) -> None:
    """The drawing, or why there is nothing to draw, with what the layout left out."""
    if taught:
        st.caption(f"In red: the {len(taught)} facts the last notebook cell changed.")
    if plan.nodes:
        st.iframe(html, height=640)
    else:
        st.info(f"Nothing to draw: {viz.inert(plan.reason)}.")  # names and kinds from memory made inert


def _below(plan: viz.Plan, drawn: pd.DataFrame, file_name: str) -> None:
    """Below the drawing: its GraphML, and the facts drawn as a table on request."""
    graphml = lambda: viz.to_graphml(plan)  # made when asked for, not on every rerun
    st.download_button("Download GraphML", graphml, file_name=file_name, mime="application/xml", key="g_graphml")
    # The table on request: drawn with the page, its thousands of rows held up the drawing (B8, Chromium).
    if st.toggle(f"List the {len(plan.edges):,} facts drawn", key="g_table"):
        st.dataframe(drawn, hide_index=True, width="stretch")


def drawing(bar: DeltaGenerator, row: DeltaGenerator, user: bool) -> None:
    """The page below its title, in a fragment that reruns while Play plays (R32); it writes `bar` and `row` (#39).
    `user`: the User graph was drawn when the page ran whole (a change to or from it runs it whole: Play goes or comes)."""
    row = row.empty()  # written on every run, as Streamlit asks of a fragment writing outside it
    with guard():
        at = version_at(ctx.svc, ctx.memory)  # read first: what is read after it is at least as new
        flow = st.session_state.get("g_which") == "flow"  # the compact bar (#39), a run's beside a Flow graph
        widths = [2.5, 2, 2.6, 1, 1.2] if flow else [2.3, 3.4, 1.1, 1.3]
        *cols, find, depth, filters = bar.columns(widths, vertical_alignment="bottom")
        with cols[0]:
            graph, owner = _graph_chosen(read_at(ctx.svc, at, MemoryService.run_ids, org), cols[-1])
        if (graph == "user") != user:
            st.rerun()
        with find:
            _search(graph, owner, row)
        depth.number_input("Depth", 1, 3, key="g_depth", help="Rings of neighbours drawn around the focus.")
        popover = filters.popover("Filters")
        if _drawing.communities(ctx, at, (graph, owner), _show):
            return
        shown, other = _moment(ctx, org, graph, popover)
        drawn_at, changed = _drawn_and_changed(shown, other, graph, owner)
        cmp = compare(*changed[0], since=changed[1]) if changed else None  # since the earlier moment
        asked = st.session_state.get("g_focus") or None
        data, focus, by = _loaded(at, graph, owner, drawn_at, shown.clock if shown else 0, asked)
        with popover:
            flt = _drawing.filters(data)
        to_link(LINKED)
        taught = _taught(graph, owner)
        marked = tuple(sorted(taught))
        then = (drawn_at, cmp.since if cmp else None)
        if at is None:
            plan, html, drawn = _drawing.build(graph, data, focus, flt, marked, cmp)
        else:
            choice = (focus, *_drawing.chosen(flt))
            plan, html, drawn = _drawing.kept_drawing(at, graph, owner, choice, marked, then, data, flt, cmp)
        _show(plan, html, taught)
        name = next((n["name"] for n in plan.nodes if n["id"] == plan.focus), None)
        _said(name, asked, by, row)
        _trail(graph, name, row)
        _drawing.members(ctx, at, (graph, owner))
        _say_drawn(plan, drawn_at, cmp)
        _drawing.legend(plan, cmp)
        _drawing.open_fact(plan, graph)
        _below(plan, drawn, f"{graph}-{owner}.graphml")
        if changed and shown:  # the same changes as a table, as the Overview lists them
            name = history.named_graph(history.graph_name(graph, owner), org_names(ctx), people_names(ctx))
            _history.show_diff(ctx, *changed, shown=shown, title=f"{inert(name)}, from moment", nothing="this graph")
        copy_link()
        _drawing.keep_choices()


bar = st.container()  # the compact bar (#39), written by the fragment
top = st.container(horizontal=True, vertical_alignment="center")  # Play, what was found or walked, Communities
user = st.session_state.get("g_which") == "user"  # drawn with no time control here: no Play (#39)
with top:
    _history.play_control(ctx, org, PREFIX, offered=not user)
    row = st.container()
_drawing.view_toggle(top)
st.fragment(run_every=_history.PLAY_EVERY if _history.playing(PREFIX) and not user else None)(drawing)(bar, row, user)
