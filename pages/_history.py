"""What the pages that look back share (R32): the memory's moments labelled as people name them,
a graph as it stood, and what changed between two moments as a table. Reads are cached on the
memory in use and its clock (a new moment is a new key), so stepping through moments or a rerun
that changed nothing reads nothing again. Everything here goes through the facade and views."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from memory_core import MemoryService, database_url
from memory_core.views import history
from pages._ui import NOTEBOOK, Context, notebook, read

Obj = dict[str, Any]
#: A moment as the pages list it: its number, what happened ("t3 completed in r1"), and when.
Moment = tuple[int, str, str | None]
BEFORE = "before history was kept"


def memory_key(ctx: Context) -> str:
    """Which memory is in use: the notebook's scratch database or the configured one."""
    nb = notebook()
    return str(nb["db"]) if ctx.source == NOTEBOOK and nb is not None else database_url()


def names(svc: MemoryService) -> dict[str, str]:
    return {p["id"]: p["name"] for p in svc.people()}


@st.cache_data(show_spinner=False, max_entries=16)
def _moments(where: str, clock: int, org: str, _svc: MemoryService) -> list[Moment]:
    people = names(_svc)
    first: Moment = (0, BEFORE, None)
    return [first] + [(m["n"], history.moment_label(m, people), m["at"]) for m in _svc.moments(org=org, last=clock)]


def moments(ctx: Context, org: str) -> tuple[int, list[Moment]]:
    """The memory's clock now, and the moments of this organization (and of no organization: the
    setup, an account deleted), oldest first, moment 0 first."""
    clock = read(ctx, "clock")
    return clock, _moments(memory_key(ctx), clock, org, ctx.svc)


def snap(options: list[int], wanted: Any) -> int:
    """The moment to show for a wanted one: itself if listed, else the last listed before it (a
    link may name a moment of another organization), else the first."""
    if wanted in options:
        return int(wanted)
    try:
        n = int(wanted)
    except (TypeError, ValueError):
        return options[-1]
    earlier = [o for o in options if o <= n]
    return earlier[-1] if earlier else options[0]


@st.cache_data(show_spinner=False, max_entries=16)
def world_now(where: str, clock: int, org: str, limit: int, _svc: MemoryService) -> tuple[list[Obj], int]:
    """The organization's heaviest World facts now (the Fact weights page's read), and the map's
    count of active facts; every change to memory is a new moment, so the clock keys it."""
    return _svc.facts_table(org, limit=limit, graphs=("world",)), int(_svc.org_map(org)["facts"])


@st.cache_data(show_spinner=False, max_entries=64)
def world_at(where: str, clock: int, org: str, n: int, limit: int, _svc: MemoryService) -> Obj:
    """The organization's World graph as it stood after moment `n`: its heaviest facts and how many."""
    return _svc.graph_at("world", org, n, limit=limit)


@st.cache_data(show_spinner=False, max_entries=64)
def changes(where: str, clock: int, org: str, a: int, b: int, _svc: MemoryService) -> Obj:
    """What changed in the organization's World graph and its runs' Flow graphs from moment a to
    moment b (the earlier first), per graph (views.history.diff over facts_between)."""
    runs = {r["id"] for r in _svc.runs(org)}
    lo, hi = sorted((a, b))
    before, after = _svc.facts_between(lo, hi)

    def ours(f: Obj) -> bool:
        return (f["graph"] == "world" and f["owner"] == org) or (f["graph"] == "flow" and f["owner"] in runs)

    return history.diff([f for f in before if ours(f)], [f for f in after if ours(f)])


def _w(weight: float | None) -> str:
    return "absent" if weight is None else f"{weight:.3f}"


DIFF_COLUMNS = [
    "Graph",
    "Fact",
    "Change",
    "Weight before",
    "Weight after",
    "↑↓",
    "Status before",
    "Status after",
    "Supports that came",
    "Supports withdrawn",
    "Disputes",
]


def diff_table(d: Obj) -> pd.DataFrame:
    """A diff as one table: every fact changed, gone or added (in that order, the changes people
    look for first), with the weight's arrow and the supports and disputes that moved it."""
    rows: list[list[Any]] = []
    for graph, parts in d.items():
        for f in parts["added"]:
            rows.append(
                [graph, f["fact"], "added", _w(None), _w(f["weight"]), "new", "—", f["status"]]
                + ["; ".join(f["supports"]), "", str(f["disputes"]) if f["disputes"] else ""]
            )
        for f in parts["gone"]:
            rows.append([graph, f["fact"], "gone", _w(f["weight"]), _w(None), "gone", f["status"], "—", "", "", ""])
        for f in parts["changed"]:
            (wa, wb), (sa, sb) = f["weight"], f["status"]
            what = "status changed" if sa != sb else "weight changed" if wa != wb else "supports changed"
            rows.append(
                [graph, f["fact"], what, _w(wa), _w(wb), history.arrow(wa, wb), sa, sb]
                + ["; ".join(f["supports_added"]), "; ".join(f["supports_withdrawn"])]
                + [f"+{f['disputes_added']}" if f["disputes_added"] else ""]
            )
    first = {"status changed": 0, "weight changed": 1, "supports changed": 2, "gone": 3, "added": 4}
    rows.sort(key=lambda r: first[r[2]])  # stable: graph by graph within each kind
    return pd.DataFrame(rows, columns=DIFF_COLUMNS)


def counts(d: Obj) -> str:
    """`3 added, 1 gone, 2 changed` over every graph of a diff."""
    n = {k: sum(len(p[k]) for p in d.values()) for k in ("added", "gone", "changed")}
    return ", ".join(f"{v} {k}" for k, v in n.items())
