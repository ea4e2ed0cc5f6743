"""Overview: the organization's map and World facts at any moment, compared (R32); people, runs, settings, samples."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from memory_core import MemoryService, Refusal
from memory_core.rules.settings import SETTINGS
from memory_core.rules.wording import map_paragraph
from memory_core.usecases.shapes import OrgMap
from memory_core.views import notebook as nbk
from memory_core.views.text import inert, world_table
from pages import _history
from pages._tables import fact_grid, grid, headed, wrapped
from pages._turns import clicked, latest_turns, reads_then, timeline, turns_said
from pages._ui import Context, context, guard, live, memory_in_use, need_org, open_notebook, read, read_or_refusal
from pages._words import SAMPLES, caption, cite, markdown, on_off, plural, yes_no


@st.cache_data(show_spinner=False, max_entries=64)
def sample(name: str, mtime: float) -> tuple[str, int, str]:
    """A sample's title, number of events and description, read once while the file stays as it is."""
    doc = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    return doc.get("title") or Path(name).stem, len(doc.get("events", [])), doc.get("description", "")


def _open_clicked() -> None:
    """A bar of the timeline clicked: its turn is opened on Runs, once this run of the page begins."""
    st.session_state["_ov_open"] = clicked("ov_timeline")


if opened := st.session_state.pop("_ov_open", None):
    st.switch_page("pages/runs_page.py", query_params={"run": opened[0], "turn": opened[1]})
ctx = context()
st.title(inert(ctx.org_name) if ctx.org_name else "Memory Explorer")
memory_in_use(ctx, always=True)
live(ctx, moments="ov")  # redrawn when an agent or another tab changes memory (not at a past moment)

ROWS = 200  # the heaviest World facts listed at a moment
PREFIX = "ov"  # the time control's keys: ov_at, ov_from, ov_play…
BETWEEN = 500  # the moments in between two compared that are listed
SAID = ["Setting", "Value", "Rule"]
RUNS = ["Run", "Person", "Surface", "Ephemeral", "Ended", "Turns"]
WORLD = ["subject", "relation", "object", "status", "weight", "sources", "supports", "disputes"]


def _world_rows(ctx: Context, org: str, clock: int, n: int, now: bool, on_map: int) -> tuple[pd.DataFrame, str]:
    """The World facts, heaviest first, and how many of each status beside the map's count (R32)."""
    if now:  # the Fact weights page's read
        rows = _history.then(ctx, clock, MemoryService.facts_table, org, limit=ROWS, graphs=("world",))
        said = world_table([r["status"] for r in rows], None if len(rows) == ROWS else len(rows), on_map)
        return headed(pd.DataFrame(rows, columns=WORLD)), said
    g = _history.then(ctx, clock, MemoryService.graph_at, "world", org, n, limit=ROWS)
    then = [
        (f["subject"]["name"], f["relation"], f["object"].get("name", f["object"].get("value")), f["status"])
        + (f["weight"], f["sources"], len(f["supports"]), len(f["disputes"]))
        for f in sorted(g["facts"], key=lambda f: -f["weight"])
    ]
    return headed(pd.DataFrame(then, columns=WORLD)), world_table([f["status"] for f in g["facts"]], g["total"], on_map)


def through_time(ctx: Context, org: str) -> None:
    """The time control (R32); the map and the World facts as they stood then; compared with another moment."""
    shown = _history.time_control(ctx, org, PREFIX)
    clock, n, now = shown.clock, shown.n, shown.n == shown.newest
    m: OrgMap
    if now:
        m = read(ctx, MemoryService.org_map, org)
    else:  # the map then, said as the map now is
        then = read(ctx, MemoryService.map_at, org, n)
        m = {**then, "paragraph": map_paragraph(ctx.org_name, then["kinds"], then["facts"])}
    st.markdown(cite("#### The map every root turn carries (R18)") + ("" if now else f", after moment {n}"))
    st.info(inert(m["paragraph"]))
    left, right = st.columns([1, 2])
    with left:
        if m["kinds"]:
            # A Vega-Lite spec as st.bar_chart draws it, without importing altair (0.3 s on the first page)
            kinds = pd.DataFrame({"kind": list(m["kinds"]), "entities": list(m["kinds"].values())})
            x = {"field": "entities", "type": "quantitative", "title": "entities"}
            bars = {"mark": "bar", "encoding": {"y": {"field": "kind", "type": "nominal", "title": None}, "x": x}}
            st.vega_lite_chart(kinds, bars, height=220, width="stretch")
        past = "Memory as it stands now." if now else "A view of the past applies every erasure made since (R33)."
        caption(
            "Entities of active facts by kind, and active facts; disputed and retracted facts are not on the map "
            f"(R18, R28). {past}"
        )
    with right:
        table, said = _world_rows(ctx, org, clock, n, now, int(m["facts"]))
        st.markdown(f"**World facts** {'now' if now else f'as they stood after moment {n}'}, every status")
        fact_grid(table, height=260)
        caption(said)
    reads_then(ctx, org, n)
    compare_with(ctx, org, shown)
    _history.link_moments(PREFIX)


def compare_with(ctx: Context, org: str, shown: _history.Shown) -> None:
    """The diff between the moment shown and another (R32): facts added, gone, changed."""
    said = "What changed in the World graph and the runs' Flow graphs between the two moments."
    other = _history.compare_choice(PREFIX, shown, said)
    if other is None:
        return
    lo, hi = sorted((other, shown.n))
    changed = _history.then(ctx, shown.clock, MemoryService.facts_between, lo, hi, org=org)  # World and Flow (R20)
    _history.show_diff(ctx, changed, lo, hi, shown=shown, title="From moment", nothing="these graphs")
    between = [o for o in shown.options if lo < o <= hi]
    with st.expander(f"The {plural(len(between), 'moment')} in between"):
        listed = _history.labelled(ctx, org, shown.clock, between[:BETWEEN])
        table = pd.DataFrame([(o, listed[o][1]) for o in between[:BETWEEN]], columns=["Moment", "What happened"])
        st.dataframe(table, hide_index=True)
        if len(between) > BETWEEN:
            st.caption(f"The first {BETWEEN:,} are listed; step through the rest with the time control.")


with guard():
    if need_org(ctx):
        assert ctx.org is not None
        # #39: a product team opens the Overview for what its agents do, so their runs come first, live, in the
        # first screen; then what memory holds and held (R32); then who may act, the settings and every run
        markdown("### Runs at a glance")
        timeline(ctx, ctx.org, key="ov_timeline", on_click=_open_clicked)
        latest_turns(ctx, ctx.org)  # each linked to its turn on the Runs page (#38.8)
        markdown("### Memory through time (R32)")
        _history.play_control(ctx, ctx.org, PREFIX)
        st.fragment(run_every=_history.PLAY_EVERY if _history.playing(PREFIX) else None)(through_time)(ctx, ctx.org)
        right, people = st.columns(2)
        with right:
            markdown("**Settings** now (the owner's alone, R15)")
            settings = read_or_refusal(ctx, MemoryService.get_settings, ctx.org, by=ctx.person or "")
            if not isinstance(settings, Refusal):  # each setting's rule a link to it, its title on hover
                wrapped(pd.DataFrame([(s.name, on_off(settings[s.name]), s.rule) for s in SETTINGS], columns=SAID))
            else:
                caption("Only the owner reads them (R15).")
        with people:
            st.markdown("**People**")
            members = pd.DataFrame(read(ctx, MemoryService.members, ctx.org), columns=["name", "id", "role"])
            st.dataframe(members.rename(columns=str.capitalize), hide_index=True)
        st.markdown("**Runs** and their turns (every record: the Runs page)")  # whole width: their turns read (#25)
        rows = [
            (r["id"], r["person"] or "erased (R30)", r["surface"], on_off(r["ephemeral"]), yes_no(r["ended"]))
            + (turns_said(r),)
            for r in read(ctx, MemoryService.runs, ctx.org)
        ]
        grid(pd.DataFrame(rows, columns=RUNS), first=("Run", "Turns"))

st.subheader("Sample scenarios")
st.caption("Each is a story about one memory rule. Open one in the Notebook and run it cell by cell.")
files = sorted(SAMPLES.glob("*.json"))
cols = st.columns(2)
for i, path in enumerate(files):
    title, events, description = sample(path.name, path.stat().st_mtime)
    with cols[i % 2].container(border=True):
        st.markdown(f"**{title}**  \n`{path.name}` · {events} events")
        caption(inert(description))
        if st.button("Open in the Notebook", key=f"open-{path.stem}"):
            with guard():
                doc = json.loads(path.read_text(encoding="utf-8"))
                open_notebook(nbk.new(doc, path.name))
                st.switch_page("pages/notebook_page.py")
