"""Graphs: the World graph, the acting person's User graph, or a run's Flow graph, drawn with pyvis;
the World and Flow graphs now or as they stood at any moment, stepped or played (R32), and what
changed since another moment drawn on the graph and listed (?at=N&from=M)."""

from __future__ import annotations

import streamlit as st

from memory_core import MemoryService
from memory_core.rules.wording import possessive
from memory_core.usecases.shapes import Drawing, GraphJson
from memory_core.views import history, viz
from memory_core.views.compare import compare
from pages._drawing import build, expanded, keep_choices, kept_drawing, moment_from_overview, restore_choices
from pages._history import (
    PLAY_EVERY,
    Shown,
    compare_choice,
    counts,
    graph_changes,
    graph_names,
    graph_then,
    link_moments,
    play_control,
    playing,
    show_diff,
    time_control,
)
from pages._links import copy_link, dropped, from_link, to_link
from pages._ui import Context, guard, inert, live, notebook, page, read_at, version_at
from pages._words import cite, plural

CHOICES = 300  # drawn facts listed to open from the keyboard
LOADED = 5000  # facts loaded for a page: the heaviest, so a large graph stays fast (B6, B8)


ctx, org = page("Graphs")
live(ctx, moments="g")  # redrawn when an agent or another tab changes memory
PREFIX = "g"  # the time control's keys: g_at, g_from, g_play…
LINKED = {"graph": "g_which", "run": "g_run", "kinds": "g_kinds", "rel": "g_rel", "status": "g_status"}
LINKED |= {"depth": "g_depth", "cap": "g_cap", "minw": "g_minw", "expand": "g_expand"}
restore_choices()
lists = ("kinds", "rel", "status", "expand")
from_link(LINKED | {"entity": "g_entity"}, ints=("depth", "cap"), lists=lists, floats=("minw",))


def _only(key: str, options: list) -> None:
    """A choice from a link that is not an option here is dropped, not an error."""
    value = st.session_state.get(key)
    if isinstance(value, list):
        if any(v not in options for v in value):  # written only when it changes: Streamlit warns otherwise
            st.session_state[key] = [v for v in value if v in options]
            dropped(key, "the rest of it" if st.session_state[key] else "none of it")
    elif value is not None and value not in options:
        del st.session_state[key]
        dropped(key, "its first choice")


def _moment(ctx: Context, org: str, graph: str) -> tuple[Shown | None, int | None]:
    """The time control and "Compare with…" for the World and Flow graphs (R32); the User graph is
    drawn as it stands now: its facts come from turns in any organization (R23), so this
    organization's moments do not date it."""
    if graph == "user":
        st.caption(
            cite(
                "The User graph is drawn as it stands now: its facts are taught in every organization "
                "(R20, R23), so this organization's moments do not date it. World and Flow graphs "
                "have a time control."
            )
        )
        st.session_state[f"{PREFIX}_at_link"] = st.session_state[f"{PREFIX}_from"] = None
        link_moments(PREFIX)
        return None, None
    moment_from_overview()
    shown = time_control(ctx, org, PREFIX)
    other = compare_choice(
        PREFIX,
        shown,
        "Draw what changed in this graph between the two moments on the later one: facts added, gone, "
        "weights up or down; and list it below the drawing.",
    )
    link_moments(PREFIX)
    return shown, other


def _changes_table(
    ctx: Context, shown: Shown, graph: str, owner: str, before: list, after: list, lo: int, hi: int
) -> None:
    """The same changes as a table, as the Overview lists them (views.history.diff)."""
    d = history.diff(before, after)
    st.markdown(
        f"**{inert(history.named_graph(history.graph_name(graph, owner), *graph_names(ctx)))}, from moment {lo}** "
        f"({inert(shown.what(lo))}) "
        f"**to moment {hi}** ({inert(shown.what(hi))}): " + (counts(d) if d else "nothing changed in this graph") + "."
    )
    show_diff(ctx, d)


def drawing() -> None:
    """The page below its title, in a fragment that reruns every PLAY_EVERY seconds while the time
    control plays, so the graph is drawn again moment by moment."""
    with guard():
        at = version_at(ctx.svc, ctx.memory)  # read first: what is read after it is at least as new
        runs = read_at(ctx.svc, at, MemoryService.run_ids, org)
        choices = ["world"] + (["user"] if ctx.person else []) + (["flow"] if runs else [])
        _only("g_which", choices)
        _only("g_run", runs)
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
            graph, owner = "world", org
        elif which == "user":
            graph, owner = "user", ctx.person or ""
        else:
            graph, owner = "flow", st.selectbox("Run", runs, key="g_run")
        shown, other = _moment(ctx, org, graph)
        # The moment drawn: the one shown, or the later of the two compared (what changed is drawn on it).
        drawn_at = None if shown is None else max(shown.n, other if other is not None else shown.n)
        past = shown is not None and drawn_at != shown.newest
        cmp: viz.Compare | None = None
        if shown is not None and other is not None and other != shown.n:
            lo, hi = sorted((other, shown.n))
            before, after = graph_changes(ctx, shown.clock, graph, owner, lo, hi)
            cmp = compare(before, after, lo)
        data: Drawing | GraphJson
        if past:
            assert shown is not None and drawn_at is not None
            data = graph_then(ctx, shown.clock, graph, owner, drawn_at, LOADED)
        else:  # now: the heaviest facts with what the drawing shows of them (ids: a drawn fact links to its weight)
            data = read_at(ctx.svc, at, MemoryService.graph_drawing, graph, owner, limit=LOADED)
        if data["total"] > len(data["facts"]):
            st.caption(
                f"This graph {'held' if past else 'holds'} {data['total']:,} facts"
                + (f" after moment {drawn_at}" if past else "")
                + f"; the {len(data['facts']):,} heaviest are loaded for filtering and drawing."
            )

        facts = data["facts"]
        kinds = sorted({f["subject"]["kind"] for f in facts} | {f["object"].get("kind", "value") for f in facts})
        relations = sorted({f["relation"] for f in facts})
        _only("g_kinds", kinds)
        _only("g_rel", relations)
        _only("g_status", ["active", "disputed", "retracted"])
        # Defaults as the session's first values, not the widgets' own: a link sets them too (from_link),
        # and Streamlit warns about a widget given a default whose value the session also set.
        for key, first in (("g_minw", 0.0), ("g_status", ["active", "disputed"]), ("g_depth", 1)):
            st.session_state.setdefault(key, first)
        st.session_state.setdefault("g_cap", viz.DEFAULT_CAP)
        c = [*st.columns(2), *st.columns(2)]  # two a row: a chosen status's chip whole at any width (#25)
        pick_kinds = c[0].multiselect("Kinds", kinds, key="g_kinds", placeholder="all kinds")
        pick_rel = c[1].multiselect("Relations", relations, key="g_rel", placeholder="all relations")
        min_w = c[2].slider("Minimum weight", 0.0, 1.0, step=0.05, key="g_minw")
        statuses = c[3].multiselect(
            "Status",
            ["active", "disputed", "retracted"],
            key="g_status",
            help=cite("Retracted facts are hidden unless asked for (R28)."),
        )
        names = sorted({(e["name"], e["kind"]) for e in data["entities"]})
        linked = st.session_state.pop("g_entity", None)  # ?entity=kind:name, from a link
        if linked and ":" in linked:
            kind_, name_ = linked.split(":", 1)
            if (name_, kind_) in names:
                st.session_state["g_focus"] = (name_, kind_)
        _only("g_focus", [None, *names])
        c2 = st.columns([3, 1, 1])
        focus = c2[0].selectbox(
            "Focus on an entity and its neighbourhood",
            [None, *names],
            key="g_focus",
            format_func=lambda e: "(whole graph)" if e is None else f"{e[0]} ({e[1]})",
        )
        depth = c2[1].number_input("Depth", 1, 4, key="g_depth")
        cap = c2[2].number_input("Entity cap", 10, 2000, step=50, key="g_cap")
        flt = viz.Filters(
            kinds=set(pick_kinds) or None,
            relations=set(pick_rel) or None,
            min_weight=min_w,
            statuses=set(statuses),
            focus=f"{focus[1]}:{focus[0]}" if focus else None,
            depth=int(depth),
            cap=int(cap),
            expanded=expanded(f"{focus[1]}:{focus[0]}" if focus else None),
        )
        st.session_state["g_entity"] = flt.focus  # the focus as ?entity=kind:name
        to_link(LINKED | {"entity": "g_entity"})
        st.session_state.pop("g_entity", None)

        nb = notebook()
        taught = set()
        if nb and ctx.source == "notebook" and nb["cursor"]:
            last = nb["results"].get(str(nb["cursor"] - 1), {})
            taught = {ch["fact"] for ch in last.get("changes", []) if ch["graph"] == graph and ch["owner"] == owner}
        choice = (
            tuple(sorted(pick_kinds)),
            tuple(sorted(pick_rel)),
            float(min_w),
            tuple(sorted(statuses)),
            flt.focus,
            flt.depth,
            flt.cap,
            flt.expanded,
        )
        marked = tuple(sorted(taught))
        then = (drawn_at if past else None, cmp.since if cmp else None)
        with st.spinner("Laying out the graph…"):
            if at is None:
                plan, html, drawn = build(graph, data, flt, marked, cmp)
            else:
                plan, html, drawn = kept_drawing(at, graph, owner, choice, marked, then, data, flt, cmp)
        st.markdown(
            f"Showing **{len(plan.nodes):,} entities** and **{len(plan.edges) - plan.gone:,} facts** "
            + (
                f"of the {len(facts):,} heaviest loaded"
                if data["total"] > len(facts)
                else f"of the {len(facts):,} facts in this graph"
            )
            + (f" after moment {drawn_at}" if past else "")
            + (
                f", and **{plural(plan.gone, 'fact')} gone** since moment {cmp.since}, dashed in grey"
                if cmp and plan.gone
                else ""
            )
            + "."
        )
        if plan.note:
            st.warning(plan.note)
        if taught:
            st.caption(f"In red: the {len(taught)} facts the last notebook cell changed.")
        if plan.nodes:
            st.iframe(html, height=640)
        else:
            st.info(f"Nothing to draw: {viz.inert(plan.reason)}.")  # names and kinds from memory made inert
        legend = viz.legend(plan)
        if legend:
            st.markdown(viz.legend_html(plan), unsafe_allow_html=True)  # kinds escaped there
            st.caption(
                "Nodes sized by their facts; edges as wide as their weight; disputed facts dashed. "
                + (
                    "Every name is shown. "
                    if len(plan.nodes) <= viz.LABEL_ALL
                    else f"The {viz.LABEL_TOP} heaviest entities are named; point at any other for its name. "
                )
                + "Click a fact's edge to open its weight; double-click an entity to explore from it, to open "
                "its neighbours, or to close them again."
            )
        if cmp is not None:
            assert shown is not None and drawn_at is not None
            st.markdown(
                f"<span style='color:{viz.ADDED_COLOR}'>━</span> added since moment {cmp.since} · "
                f"<span style='color:{viz.MOVED_COLOR}'>━</span> weight moved (↑ or ↓ on hover) · "
                f"<span style='color:{viz.GONE_COLOR}'>╌</span> gone since moment {cmp.since}",
                unsafe_allow_html=True,  # our colours and numbers only
            )
        # The keyboard's way to a fact's weight: the heaviest drawn (a list of thousands is no choice to
        # scroll, and its labels held up the drawing in the browser, B8); a click on any edge opens the rest.
        heaviest = sorted((e for e in plan.edges if e["fact"] is not None), key=lambda e: (-e["weight"], e["fact"]))
        linked = {e["fact"]: e["title"].split("\n")[0] for e in heaviest[:CHOICES]}
        if len(heaviest) > CHOICES:
            st.caption(f"The {CHOICES} heaviest of the {len(heaviest):,} facts drawn are listed below; click any edge.")
        if linked:
            _only("g_open_fact", list(linked))  # a fact of another moment or graph is no option here
            c3 = st.columns([3, 1], vertical_alignment="bottom")
            fact = c3[0].selectbox(
                "Open a fact's weight", list(linked), format_func=linked.__getitem__, key="g_open_fact"
            )
            c3[1].page_link(
                "pages/facts_page.py", label="Why this weight?", query_params={"fact": str(fact), "graph": graph}
            )
        st.download_button(
            "Download GraphML",
            lambda: viz.to_graphml(plan),  # made when asked for, not on every rerun
            file_name=f"{graph}-{owner}.graphml",
            mime="application/xml",
            key="g_graphml",
        )
        # The table on request: drawn with the page, its thousands of rows held up the drawing (B8, Chromium).
        if st.toggle(f"List the {len(plan.edges):,} facts drawn", key="g_table"):
            st.dataframe(drawn, hide_index=True, width="stretch")
        if cmp is not None:
            assert shown is not None
            _changes_table(ctx, shown, graph, owner, before, after, cmp.since, hi)
        with st.popover("Link to this view"):
            copy_link()
        keep_choices()


play_control(ctx, org, PREFIX)
st.fragment(run_every=PLAY_EVERY if playing(PREFIX) else None)(drawing)()
