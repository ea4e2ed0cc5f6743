"""Overview: the organization's map as a turn sees it and its World facts, now or as they stood
at any moment (R32: a time control, step, play, and a diff with another moment; the moment in
the URL, ?at=N&from=M), its people, runs, settings, and the samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from memory_core.rules.settings import SETTINGS
from memory_core.rules.wording import map_paragraph
from memory_core.views import notebook as nbk
from pages._history import changes, counts, diff_table, memory_key, moments, snap, world_at, world_now
from pages._ui import (
    NOTEBOOK,
    Context,
    cite,
    context,
    from_link,
    guard,
    inert,
    need_org,
    on_off,
    plural,
    read,
    to_link,
    use_memory,
)

Obj = dict[str, Any]

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


@st.cache_data(show_spinner=False, max_entries=64)
def sample(name: str, mtime: float) -> tuple[str, int, str]:
    """A sample's title, number of events and description, read once while the file stays as it is."""
    doc = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    return doc.get("title") or Path(name).stem, len(doc.get("events", [])), doc.get("description", "")


ctx = context()
st.title(inert(ctx.org_name) if ctx.org_name else "Memory Explorer")
st.caption(f"Memory in use: {inert(ctx.label)}")

ROWS = 200  # the heaviest World facts listed at a moment
PLAY_EVERY = 1.2  # seconds between two moments while playing
LINKED = {"at": "ov_at", "from": "ov_from"}
SHOWN = {"at": "ov_at_link", "from": "ov_from"}  # no ?at= when the moment shown is now
NO_COMPARE = None  # no comparison: no ?from= in the URL


def _step(options: list[int], by: int) -> None:
    """Step (on_click): the moment `by` places later or earlier, within the organization's moments."""
    i = options.index(snap(options, st.session_state.get("ov_at")))
    st.session_state["ov_at"] = options[max(0, min(len(options) - 1, i + by))]


def _play(options: list[int]) -> None:
    """Play or pause (on_click); playing from the last moment starts again at the first."""
    playing = not st.session_state.get("ov_playing", False)
    if playing and snap(options, st.session_state.get("ov_at")) == options[-1]:
        st.session_state["ov_at"] = options[0]
        st.session_state["ov_restart"] = True  # shown as it is, the next tick steps
    st.session_state["ov_playing"] = playing
    st.session_state["ov_play_changed"] = True


def _map_now_or_then(ctx: Context, org: str, n: int, newest: int) -> Obj:
    if n == newest:
        return read(ctx, "org_map", org)
    counts = read(ctx, "map_at", org, n)
    return {**counts, "paragraph": map_paragraph(ctx.org_name, counts["kinds"], counts["facts"])}


def _world_rows(ctx: Context, org: str, clock: int, n: int, newest: int) -> tuple[pd.DataFrame, str]:
    """The World facts, heaviest first, and a sentence of how many: read from the present when the
    moment is now (the Fact weights page's read), from history otherwise (R32)."""
    if n == newest:
        rows, active = world_now(memory_key(ctx), clock, org, ROWS, ctx.svc)
        many = f"The {ROWS} heaviest; the map counts {plural(active, 'active fact')}."
        said = many if len(rows) == ROWS else plural(len(rows), "fact") + "."
        table = [
            {k: r[k] for k in ("subject", "relation", "object", "status", "weight", "sources", "supports", "disputes")}
            for r in rows
        ]
    else:
        g = world_at(memory_key(ctx), clock, org, n, ROWS, ctx.svc)
        total = g["total"]
        said = f"The {ROWS} heaviest of {plural(total, 'fact')}." if total > ROWS else plural(total, "fact") + "."
        table = [
            {
                "subject": f["subject"]["name"],
                "relation": f["relation"],
                "object": f["object"].get("name", f["object"].get("value")),
                "status": f["status"],
                "weight": f["weight"],
                "sources": f["sources"],
                "supports": len(f["supports"]),
                "disputes": len(f["disputes"]),
            }
            for f in sorted(g["facts"], key=lambda f: -f["weight"])
        ]
    df = pd.DataFrame(
        table, columns=["subject", "relation", "object", "status", "weight", "sources", "supports", "disputes"]
    )
    return df.rename(columns=str.capitalize).rename(columns={"Sources": "Independent sources"}), said


def through_time(ctx: Context, org: str) -> None:
    """The time control (R32): the organization's moments, labelled by what happened; the map and
    the World facts as they stood then; step, play, and compare with another moment."""
    if st.session_state.pop("ov_play_changed", False):
        st.rerun()  # the whole page again, so the timer starts or stops with it
    clock, listed = moments(ctx, org)
    options = [n for n, _, _ in listed]
    label = {n: f"{n} · {what}" for n, what, _ in listed}
    when = {n: at for n, _, at in listed}
    newest = options[-1]
    from_link(LINKED, ints=("at", "from"))
    before = st.session_state.get("ov_newest")
    if before is not None and st.session_state.get("ov_at") == before:
        st.session_state["ov_at"] = newest  # "now" follows the present as memory changes
    st.session_state["ov_at"] = snap(options, st.session_state.get("ov_at", newest))
    if st.session_state.get("ov_playing") and not st.session_state.pop("ov_restart", False):
        i = options.index(st.session_state["ov_at"])
        if i + 1 < len(options):
            st.session_state["ov_at"] = options[i + 1]
        if i + 2 >= len(options):
            st.session_state["ov_playing"] = False
            st.session_state["ov_play_changed"] = True
    st.markdown(cite("### Memory through time (R32)"))
    if len(options) > 1:
        st.select_slider(
            "Moment",
            options,
            format_func=lambda n: label[n] + (" (now)" if n == newest else ""),
            key="ov_at",
            help="Each moment is one change to memory: a turn ended, a setting changed, a run deleted…",
        )
    else:
        st.caption("No moment recorded yet: memory has not changed since its history was kept.")
    n = int(st.session_state["ov_at"])
    st.session_state["ov_newest"] = newest
    st.session_state["ov_at_link"] = None if n == newest else n
    b = st.columns([1, 1, 1, 5])
    b[0].button("◀ Back", key="ov_back", on_click=_step, args=(options, -1), disabled=n == options[0])
    b[1].button("Step ▶", key="ov_step", on_click=_step, args=(options, 1), disabled=n == newest)
    playing = bool(st.session_state.get("ov_playing"))
    b[2].button("⏸ Pause" if playing else "▶ Play", key="ov_play", on_click=_play, args=(options,))
    position = options.index(n) + 1
    at = when[n]
    stamp = f" · {at[:19].replace('T', ' ')} UTC" if at else ""
    b[3].caption(
        f"Moment {position} of {len(options)} for {inert(ctx.org_name)}{stamp}: **{inert(label[n])}**"
        + (" (now)" if n == newest else "")
    )
    cite_caption = cite(
        "A view of the past applies every erasure made since (R33)." if n != newest else "Memory as it stands now."
    )
    m = _map_now_or_then(ctx, org, n, newest)
    st.markdown(cite("#### The map every root turn carries (R18)") + ("" if n == newest else f", after moment {n}"))
    st.info(inert(m["paragraph"]))
    left, right = st.columns([1, 2])
    with left:
        if m["kinds"]:
            # A Vega-Lite spec as st.bar_chart draws it, without importing altair (0.3 s on the first page)
            st.vega_lite_chart(
                pd.DataFrame({"kind": list(m["kinds"]), "entities": list(m["kinds"].values())}),
                {
                    "mark": {"type": "bar"},
                    "encoding": {
                        "y": {"field": "kind", "type": "nominal", "title": None},
                        "x": {"field": "entities", "type": "quantitative", "title": "entities"},
                    },
                },
                height=220,
                width="stretch",
            )
        st.caption(
            cite(
                "Entities of active facts by kind, and active facts; disputed and retracted facts "
                "are not on the map (R18, R28). "
            )
            + cite_caption
        )
    with right:
        table, said = _world_rows(ctx, org, clock, n, newest)
        st.markdown(f"**World facts** {'now' if n == newest else f'as they stood after moment {n}'}")
        st.dataframe(
            table,
            hide_index=True,
            width="stretch",
            height=260,
            column_config={
                "Weight": st.column_config.ProgressColumn("Weight", min_value=0, max_value=1, format="%.3f")
            },
        )
        st.caption(said)
    compare_with(ctx, org, clock, options, label, n)
    to_link(SHOWN)


def compare_with(ctx: Context, org: str, clock: int, options: list[int], label: dict[int, str], n: int) -> None:
    """The diff between the moment shown and another (R32): facts added, gone, changed."""
    choices = [NO_COMPARE, *options]
    if st.session_state.get("ov_from") not in choices:
        st.session_state["ov_from"] = NO_COMPARE
    other = st.selectbox(
        "Compare with…",
        choices,
        format_func=lambda o: "(no comparison)" if o == NO_COMPARE else label[o],
        key="ov_from",
        help="What changed in the World graph and the runs' Flow graphs between the two moments.",
    )
    if other == NO_COMPARE:
        return
    lo, hi = sorted((other, n))
    d = changes(memory_key(ctx), clock, org, lo, hi, ctx.svc)
    st.markdown(
        f"**From moment {lo}** ({inert(label[lo].split(' · ', 1)[1])}) "
        f"**to moment {hi}** ({inert(label[hi].split(' · ', 1)[1])}): "
        + (counts(d) if d else "nothing changed in these graphs")
        + "."
    )
    if d:
        st.dataframe(
            diff_table(d),
            hide_index=True,
            width="stretch",
            column_config={
                "Fact": st.column_config.TextColumn(width="large"),
                "Supports that came": st.column_config.TextColumn(width="large"),
                "Supports withdrawn": st.column_config.TextColumn(width="large"),
            },
        )
    st.caption(
        cite(
            "↑ heavier, ↓ lighter. Supports come with completed turns (R1); a replacement withdraws the "
            "supports its turn replaced (R3); disputes and retractions lower a weight (R28); what was "
            "erased since is absent at both moments (R33)."
        )
    )
    between = [(o, label[o]) for o in options if lo < o <= hi]
    with st.expander(f"The {plural(len(between), 'moment')} in between"):
        st.dataframe(pd.DataFrame(between, columns=["Moment", "What happened"]), hide_index=True, width="stretch")


with guard():
    if need_org(ctx):
        assert ctx.org is not None
        st.fragment(run_every=PLAY_EVERY if st.session_state.get("ov_playing") else None)(through_time)(ctx, ctx.org)
        right, people, runs = st.columns([2, 2, 3])
        with right:
            settings = read(ctx, "settings_view", ctx.org)
            st.markdown(cite("**Settings** now (the owner's alone, R15)"))
            st.dataframe(
                pd.DataFrame(
                    [{"Setting": s.name, "Value": on_off(settings[s.name]), "Rule": s.rule} for s in SETTINGS]
                ),
                hide_index=True,
                width="stretch",
            )
        with people:
            st.markdown("**People**")
            people_rows = [{"Name": m["name"], "Id": m["id"], "Role": m["role"]} for m in read(ctx, "members", ctx.org)]
            st.dataframe(pd.DataFrame(people_rows), hide_index=True, width="stretch")
        with runs:
            st.markdown("**Runs** and their turns (every record: the Runs page)")
            rows = [
                {
                    "Run": r["id"],
                    "Person": r["person"] or "erased (R30)",
                    "Surface": r["surface"],
                    "Ephemeral": on_off(r["ephemeral"]),
                    "Ended": "yes" if r["ended"] else "no",
                    "Turns": ", ".join(f"{t['id']} {t['status']}" for t in r["turns"]) or "none",
                }
                for r in read(ctx, "runs", ctx.org)
            ]
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")

st.subheader("Sample scenarios")
st.caption("Each is a story about one memory rule. Open one in the Notebook and run it cell by cell.")
files = sorted(SAMPLES.glob("*.json"))
cols = st.columns(2)
for i, path in enumerate(files):
    title, events, description = sample(path.name, path.stat().st_mtime)
    with cols[i % 2].container(border=True):
        st.markdown(f"**{title}**  \n`{path.name}` · {events} events")
        st.caption(cite(inert(description)))
        if st.button("Open in the Notebook", key=f"open-{path.stem}"):
            with guard():
                doc = json.loads(path.read_text(encoding="utf-8"))
                st.session_state["notebook"] = nbk.new(doc, path.name)
                st.session_state["notebook_file"] = path.name
                use_memory(NOTEBOOK)
                st.switch_page("pages/notebook.py")
