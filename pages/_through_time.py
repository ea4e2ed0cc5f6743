"""Fact weights' chart and table of a weight through time (R32), with each step's cause, and the
helpers the page's tables share."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from memory_core import MemoryService
from memory_core.usecases.shapes import Breakdown
from memory_core.views.history import weight_through_time
from pages._tables import headed, three_places, wrapped
from pages._ui import Context, people_names, read
from pages._words import caption

#: What changed a weight, as the line marks it: each kind's shape (the cause in words on hover).
CAUSES = {
    "correction (R28)": ("triangle-down", ("dispute by", "retracted by")),
    "replacement (R3)": ("diamond", ("withdrawn",)),
    "erasure since (R29, R30)": ("cross", ("erased since", "a deleted account")),
    "record (R1)": ("circle", ("support from",)),
}


#: A step's tooltip, field by field; its weight (three places) is inserted before its status.
TIPS = [("step:O", "Step"), ("moment:Q", "Moment"), ("moment_label:N", "What happened"), ("kind:N", "Kind of cause")]
TIPS += [("cause:N", "Cause"), ("status:N", "Status")]


def cause_kind(cause: str) -> str:
    """The kind of a step's cause, the first of CAUSES its words name (a correction before a record's support)."""
    return next((kind for kind, (_, words) in CAUSES.items() if any(w in cause for w in words)), "record (R1)")


def through_time(ctx: Context, org: str, graph: str, fid: int, b: Breakdown, threshold: float) -> None:
    """The fact's weight after each moment that changed it (R32), each step numbered with its cause (R3, R33)."""
    st.subheader("Its weight through time")
    h = read(ctx, MemoryService.fact_history, fid, org=org)  # as read from this organization: R23 applied by the read
    people = people_names(ctx)
    steps = weight_through_time(h["supports"], h["disputes"], h["retracted_at"], h["moments"], people)
    if not steps:
        st.caption("This fact has no recorded history.")
        return
    now = read(ctx, MemoryService.clock)
    df = pd.DataFrame(steps).assign(step=range(1, len(steps) + 1), kind=[cause_kind(s["cause"]) for s in steps])
    line = pd.concat([df, df.tail(1).assign(moment=max(now, int(df["moment"].iloc[-1])), step=None)])
    x = alt.X("moment:Q", title="Moment (memory's clock)", axis=alt.Axis(tickMinStep=1, format="d"))
    y = alt.Y(
        "weight:Q", title="Weight", scale=alt.Scale(domain=[0, 1.1]), axis=alt.Axis(values=[0, 0.2, 0.4, 0.6, 0.8, 1])
    )
    tips = [alt.Tooltip(field, title=title) for field, title in TIPS]
    tips.insert(-1, alt.Tooltip("weight:Q", title="Weight", format=".3f"))
    shapes = alt.Scale(domain=list(CAUSES), range=[shape for shape, _ in CAUSES.values()])
    causes = alt.Shape("kind:N", title="Cause", scale=shapes)
    chart = (
        alt.Chart(line).mark_line(interpolate="step-after").encode(x=x, y=y)
        + alt.Chart(df)
        .mark_point(filled=True, size=110)
        .encode(x=x, y=y, color=alt.Color("status:N", title="Status"), shape=causes, tooltip=tips)
        + alt.Chart(df).mark_text(dy=-12, fontWeight="bold").encode(x=x, y=y, text="step:O")
        + alt.Chart(pd.DataFrame({"threshold": [threshold]}))
        .mark_rule(strokeDash=[4, 4], color="gray")
        .encode(y="threshold:Q")
    )
    st.altair_chart(chart.properties(height=280), width="stretch")
    caption(
        f"Each numbered step is a moment that changed this weight (R32), marked by its cause (a record's support, a "
        "correction, a replacement, an erasure since; point at it for the cause in words); the line holds to now (moment "
        f"{now} on the memory's clock, which counts every organization's moments). "
        f"Dashed: the shortcut threshold {threshold:.2f} (R22). What was erased since is said so: its run "
        "or account is gone, its vote stays (R29, R30, R33)."
    )
    table = df[["step", "moment", "moment_label", "cause", "weight", "status", "sources"]]
    table = headed(three_places(table, "weight"), moment_label="What happened")
    wrapped(table, height=TALL if len(table) > ROWS else None)  # every cause read whole, wrapped (#25)


#: A table of causes taller than ROWS rows scrolls in place, TALL pixels high.
ROWS, TALL = 12, 480
