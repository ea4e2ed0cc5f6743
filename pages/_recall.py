"""The recall trace on the Runs page (issue #38, point 7): what a turn read and was told, in order."""

from __future__ import annotations

from urllib.parse import quote

import streamlit as st

from memory_core import MemoryService
from memory_core.views.reads_trace import asked, trace_lines
from pages._ui import Context, inert, read
from pages._words import cite


def _linked(name: str) -> str:
    """A name linked to Fact weights, filtered on it."""
    return f"[{inert(name)}](fact-weights?q={quote(name)})"


def turn_reads(ctx: Context, turn_id: str) -> None:
    """The turn's reads as they were made: asked, by whom, told (names linked to their weights) or refused."""
    reads = read(ctx, MemoryService.turn_reads, turn_id)
    if not reads:
        return
    st.markdown(cite("**What it read and was told**, in order (being read never supports a fact, R25):"))
    lines = trace_lines(reads, inert, _linked)
    st.markdown("\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1)))


def fact_readers(ctx: Context, org: str, fact_id: int) -> None:
    """The turns that read a fact ("read by"), each linked to its run; being read never supports it."""
    readers = read(ctx, MemoryService.fact_readers, org, fact_id)
    said = "; ".join(
        f"[{inert(r['turn'])}](runs?run={quote(r['run'])}) by {r['call']}"
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
