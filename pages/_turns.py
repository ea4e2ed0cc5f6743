"""Runs as people look for them (#38.7, #38.8, #39.5): turns titled by request, the latest, a timeline, their reads."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

import streamlit as st

from memory_core import MemoryService
from memory_core.rules.turns import teaches
from memory_core.rules.wording import claim_label
from memory_core.usecases.shapes import RunDetail, RunRow, TurnDetail
from memory_core.views.reads_trace import asked, trace_lines
from memory_core.views.timeline import capped, chart
from memory_core.views.timeline import titled as by_request
from pages._links import runs_link
from pages._ui import Context, inert, people_names, read
from pages._words import caption, cite, markdown, plural

LATEST = 5  # the organization's most recent turns, shown as they go
STATUS = {
    "open": "open",
    "completed": "completed",
    "failed": "failed: teaches nothing (R2)",
    "cancelled": "cancelled: teaches nothing (R2)",
    "replaced": "replaced: what it taught was withdrawn (R3)",
}


def turns_said(run: RunRow) -> str:
    """A run's turns in a cell of a table of runs: each turn's id and status."""
    return ", ".join(f"{t['id']} {t['status']}" for t in run["turns"]) or "none"


def titled(turn: TurnDetail) -> str:
    """A turn by its request (the person's record, `TURN#0`, R24), shortened, its id beside it."""
    return by_request(turn["id"], next((r["excerpt"] for r in turn["records"] if r["number"] == 0), None))


def _turn_said(turn: TurnDetail, cap: int | None) -> str:
    """A turn as it goes: status, records, reads (R21), what it taught (R1), what its latest record claims."""
    used = turn["probes_used"]
    reads = f"{used} of {cap} MemoryProbes used" if cap is not None else f"{used} reads, no cap"
    said = f"{STATUS.get(turn['status'], turn['status'])}, {plural(len(turn['records']), 'record')}, {reads} (R21)"
    if teaches(turn["status"]):
        taught = turn["taught"]
        said += f"; taught {plural(taught['world'], 'World support')}, {plural(taught['flow'], 'Flow support')} (R1)"
    if turn["records"] and turn["records"][-1]["claims"]:
        claims = "; ".join(claim_label(c) for c in turn["records"][-1]["claims"][:3])
        said += f"; latest record claims {inert(claims)}"
    return said


def _turn_line(run: RunDetail, turn_id: str, client: str | None) -> list[str]:
    """A turn of the latest, as a line of the list linked to it (none when the run no longer holds it)."""
    via = f" (via MCP: {client})" if client is not None else ""
    return [
        f"- [{inert(titled(t))}]({runs_link(run['id'], turn=t['id'])}) in {inert(run['id'])}{inert(via)}: "
        f"{_turn_said(t, run['cap'])}."
        for t in run["turns"]
        if t["id"] == turn_id
    ]


def latest_turns(ctx: Context, org: str) -> None:
    """The organization's most recent turns, each as it goes (the page is live) and linked to its turn."""
    recent = [(r, t) for r in read(ctx, MemoryService.runs, org) for t in r["turns"]][-LATEST:]
    if not recent:
        return
    clients = read(ctx, MemoryService.run_clients, [r["id"] for r, _ in recent])
    details = {r["id"]: read(ctx, MemoryService.run_detail, org, r["id"]) for r, _ in recent}
    lines = [line for r, t in reversed(recent) for line in _turn_line(details[r["id"]], t["id"], clients.get(r["id"]))]
    markdown("**Latest turns**, as they go:\n" + "\n".join(lines))


# --- runs at a glance (#39.5): a bar a turn coloured by its status, a tick a record or read, live with the page ---


def clicked(key: str) -> tuple[str, str] | None:
    """The run and turn of the bar clicked in the chart under `key` (or of a record's or read's mark in it)."""
    selected = ((st.session_state.get(key) or {}).get("selection") or {}).values()
    chosen = next((points[0] for points in selected if points), None)
    return (chosen["run"], chosen["turn"]) if chosen else None


def timeline(ctx: Context, org: str, *, key: str, on_click: Callable[[], None]) -> None:
    """The organization's newest runs and their turns as a chart; `on_click` is called when a bar is clicked."""
    t = read(ctx, MemoryService.timeline, org)
    if not any(run["turns"] for run in t["runs"]):
        caption("No turn yet: each turn an agent opens is drawn here as a bar, as it goes.")
        return
    spec = chart(t, people_names(ctx))
    clicks = [layer["name"] for layer in spec["layer"] if "params" in layer]  # heard: a click, not pointing (#39)
    st.vega_lite_chart(spec, on_select=on_click, selection_mode=clicks, key=key, width="stretch")
    caption(
        "A bar a turn, in the order they opened, coloured by its status (R1 to R3); inside it a tick a record and a "
        "mark a read, in order. Point at a bar to read it under the chart. Click a bar to open its turn. " + capped(t)
    )


# --- what turns read (#38.7): a turn's reads in order, a fact's readers, the reads up to a moment ---


def to_weights(text: str, q: str | None = None, graph: str | None = None) -> str:
    """`text` linked to Fact weights, which lists the facts holding `q` (the text if None) in `graph`."""
    return f"[{inert(text)}](fact-weights?{f'graph={graph}&' if graph else ''}q={quote(q or text)})"


def turn_reads(ctx: Context, turn_id: str) -> None:
    """The turn's reads as they were made: asked, by whom, told (names linked to their weights) or refused."""
    reads = read(ctx, MemoryService.turn_reads, turn_id)
    if not reads:
        return
    st.markdown(cite("**What it read and was told**, in order (being read never supports a fact, R25):"))
    st.markdown("\n".join(f"{i}. {line}" for i, line in enumerate(trace_lines(reads, inert, to_weights), 1)))


def fact_readers(ctx: Context, org: str, fact_id: int) -> None:
    """The turns that read a fact ("read by"), each linked to its run; being read never supports it."""
    readers = read(ctx, MemoryService.fact_readers, org, fact_id)
    said = "; ".join(
        f"[{inert(r['turn'])}]({runs_link(r['run'])}) by {r['call']}"
        + (f" at {r['weight']:.6g}" if r["weight"] is not None else "")
        for r in readers
    )
    st.markdown(
        cite(f"**Read by**: {said or 'no turn yet'}. Being read never supports a fact: a read adds no support (R25).")
    )


def reads_then(ctx: Context, org: str, n: int) -> None:
    """The reads made up to moment `n` (R32): how many, and the latest, each with what it asked."""
    count, latest = read(ctx, MemoryService.reads_then, org, n)
    if not count:
        return
    lines = [f"{inert(r['turn'])}: {asked(r, inert)} ({inert(r['outcome'])})" for r in latest]
    st.caption(cite(f"Reads made up to moment {n}: {count}; the latest: " + "; ".join(lines) + "."))
