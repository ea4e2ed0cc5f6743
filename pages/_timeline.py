"""Runs at a glance (issue #39.5), on Runs and the Overview: a bar a turn coloured by its status, a tick a
record or read, live with the page; a click on a bar opens that turn on Runs (`?run=R&turn=T`)."""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import pandas as pd
import streamlit as st

from memory_core import MemoryService
from memory_core.views.timeline import STATUSES, capped, rows
from pages._ui import Context, people_names, read
from pages._words import caption

LANE = 30  # pixels a run's row


def clicked(key: str) -> tuple[str, str] | None:
    """The run and turn of the bar clicked in the chart under `key`, if one is."""
    selected = ((st.session_state.get(key) or {}).get("selection") or {}).values()
    chosen = next((points[0] for points in selected if points), None)  # a bar's, or a record's or read's in it
    return (chosen["run"], chosen["turn"]) if chosen else None


def timeline(ctx: Context, org: str, *, key: str, on_click: Callable[[], None]) -> None:
    """The organization's newest runs and their turns as a chart; `on_click` is called when a bar is clicked."""
    t = read(ctx, MemoryService.timeline, org)
    bars, ticks, lanes = rows(t, people_names(ctx))
    if not bars:
        return
    y = alt.Y("lane:N", sort=lanes, title=None, axis=alt.Axis(labelLimit=260))
    x = alt.X("x:Q", title="Turns, in the order they opened", axis=None)
    status = alt.Color(
        "status:N",
        title="Turn",
        scale=alt.Scale(domain=list(STATUSES), range=list(STATUSES.values())),
        legend=alt.Legend(orient="top"),
    )
    tips = [alt.Tooltip(f"{f}:N", title=f.capitalize()) for f in ("title", "status", "records", "reads")]
    drawn = (
        alt.Chart(pd.DataFrame(bars))
        .mark_bar(height={"band": 0.7}, cursor="pointer")
        .properties(name="turns")  # its marks, one a turn, are `g.turns_marks` in the SVG (tests count them)
        .encode(x=x, x2="x2:Q", y=y, color=status, tooltip=tips)
        .add_params(alt.selection_point(name="turn", fields=["run", "turn"], on="click"))
    )

    def kinds(*, legend: bool) -> alt.Color:  # one legend names both (each layer's colours are its own)
        scale = alt.Scale(domain=["record", "read"], range=["#212121", "#7b1fa2"])
        shown = alt.Legend(orient="top", symbolType="triangle-down") if legend else None
        return alt.Color("kind:N", title="Inside a turn", scale=scale, legend=shown)

    # a click on a record's tick or a read's mark (above the bar) opens its turn too; each says what it was on hover
    marks = {
        "record": alt.MarkDef("tick", thickness=1, size=LANE * 0.4, cursor="pointer"),
        "read": alt.MarkDef(
            "point", shape="triangle-down", filled=True, size=50, yOffset=-LANE * 0.42, cursor="pointer"
        ),
    }
    inside = [
        alt.Chart(pd.DataFrame(shown), mark=mark)
        .encode(x=x, y=y, color=kinds(legend=kind == "read"), tooltip=alt.Tooltip("what:N", title="What"))
        .add_params(alt.selection_point(name=kind, fields=["run", "turn"], on="click"))
        for kind, mark in marks.items()
        if (shown := [t for t in ticks if t["kind"] == kind])
    ]
    drawn = alt.layer(drawn, *inside)
    chart = drawn.resolve_scale(color="independent").properties(
        height=LANE * len(lanes) + 20, usermeta={"embedOptions": {"renderer": "svg"}}
    )
    st.altair_chart(chart, on_select=on_click, key=key, width="stretch")
    caption(
        "A bar a turn, in the order the turns opened: green completed, blue open, red failed, grey cancelled, "
        "yellow replaced (R1 to R3); inside it a dark tick a record and a purple mark a read, in the order they came. "
        "Click a bar to open its turn. " + capped(t)
    )
