"""Runs at a glance (issue #39.5), on Runs and the Overview: a bar a turn coloured by its status, a tick a
record or read, live with the page; a click on a bar opens that turn on Runs (`?run=R&turn=T`)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from memory_core import MemoryService
from memory_core.views.timeline import capped, chart
from pages._ui import Context, people_names, read
from pages._words import caption


def clicked(key: str) -> tuple[str, str] | None:
    """The run and turn of the bar clicked in the chart under `key` (or of a record's or read's mark in it)."""
    selected = ((st.session_state.get(key) or {}).get("selection") or {}).values()
    chosen = next((points[0] for points in selected if points), None)
    return (chosen["run"], chosen["turn"]) if chosen else None


def timeline(ctx: Context, org: str, *, key: str, on_click: Callable[[], None]) -> None:
    """The organization's newest runs and their turns as a chart; `on_click` is called when a bar is clicked."""
    t = read(ctx, MemoryService.timeline, org)
    if not any(run["turns"] for run in t["runs"]):
        return
    st.vega_lite_chart(chart(t, people_names(ctx)), on_select=on_click, key=key, width="stretch")
    caption(
        "A bar a turn, in the order the turns opened: green completed, blue open, red failed, grey cancelled, "
        "yellow replaced (R1 to R3); inside it a dark tick a record and a purple mark a read, in the order they came. "
        "Click a bar to open its turn. " + capped(t)
    )
