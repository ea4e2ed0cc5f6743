"""What the pages that look back share (R32): the memory's moments labelled as people name them,
a graph as it stood, and what changed between two moments as a table. Reads are cached on the
memory in use and its clock (a new moment is a new key) in the one cache every page reads through
(pages/_ui.read), so stepping through moments or a rerun that changed nothing reads nothing again. Everything here goes through the facade and views."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import SupportsInt

import pandas as pd
import streamlit as st

from memory_core import MemoryService
from memory_core.plain import Obj
from memory_core.usecases.shapes import FactPublic, FactThenPublic, GraphJson
from memory_core.views import history
from pages._links import dropped, from_link, to_link
from pages._ui import Context, Version, inert, org_names, people_names, read, read_at
from pages._words import cite

#: A moment as the pages list it: its number, what happened ("t3 completed in r1"), and when.
Moment = tuple[int, str, str | None]
BEFORE = "before history was kept"


def at_clock(ctx: Context, clock: int) -> Version:
    """History's reads are kept in the one cache every page reads through (pages/_ui.read), under
    the memory in use and its clock: a new moment is a new key, while a read counted or another
    database's commit (which moves the version) reads nothing again."""
    return (ctx.memory, f"moment {clock}")


def names(svc: MemoryService) -> dict[str, str]:
    return {p["id"]: p["name"] for p in svc.people()}


#: The moments the slider and "Compare with…" list: a window around the one shown (an organization may
#: have tens of thousands; each listed is a label sent to the browser on every rerun). Back, Step, Play
#: and "Go to moment" reach every one.
WINDOW = 200


def _numbers(svc: MemoryService, clock: int, org: str) -> list[int]:
    return [0, *svc.moment_numbers(org=org, last=clock)]


def _labels(svc: MemoryService, clock: int, org: str, ids: tuple[int, ...]) -> dict[int, Moment]:
    """The moments numbered in `ids`, labelled by what happened (an erasure is a new moment: the clock
    keys what R33 took out of them)."""
    people = names(svc)
    out: dict[int, Moment] = {0: (0, BEFORE, None)} if 0 in ids else {}
    for m in svc.moments(org=org, last=clock, ids=[i for i in ids if i]):
        out[m["n"]] = (m["n"], history.moment_label(m, people), m["at"])
    return out


def moments(ctx: Context, org: str) -> tuple[int, list[int]]:
    """The memory's clock now, and the numbers of the moments of this organization (and of no
    organization: the setup, an account deleted), oldest first, moment 0 first."""
    clock = read(ctx, MemoryService.clock)
    return clock, read_at(ctx.svc, at_clock(ctx, clock), _numbers, clock, org)


def labelled(ctx: Context, org: str, clock: int, ids: Iterable[int]) -> dict[int, Moment]:
    """Moments by number, with what happened and when, for the moments in `ids`."""
    return read_at(ctx.svc, at_clock(ctx, clock), _labels, clock, org, tuple(sorted(set(ids))))


def _among(options: list[int], n: object) -> bool:
    """Whether n is one of the (sorted) moments."""
    if not isinstance(n, int):
        return False
    i = bisect.bisect_left(options, n)
    return i < len(options) and options[i] == n


def window(options: list[int], n: int, size: int = WINDOW) -> list[int]:
    """The `size` moments listed around moment `n` (which is listed), the newest when it is near."""
    i = bisect.bisect_left(options, n)
    lo = max(0, min(i - size // 2, len(options) - size))
    return options[lo : lo + size]


def snap(options: list[int], wanted: object) -> int:
    """The moment to show for a wanted one: itself if listed, else the last listed before it (a
    link may name a moment of another organization), else the first."""
    if not isinstance(wanted, str | SupportsInt):  # None, or no number at all: the newest
        return options[-1]
    try:
        n = int(wanted)
    except (TypeError, ValueError):
        return options[-1]
    i = bisect.bisect_right(options, n)  # options are sorted: tens of thousands need no scan each rerun
    return options[i - 1] if i else options[0]


def world_now(ctx: Context, clock: int, org: str, limit: int) -> tuple[list[FactPublic], int]:
    """The organization's heaviest World facts now (the Fact weights page's read), and the map's
    count of active facts; every change to memory is a new moment, so the clock keys it."""
    return read_at(ctx.svc, at_clock(ctx, clock), _world_now, org, limit)


def _world_now(svc: MemoryService, org: str, limit: int) -> tuple[list[FactPublic], int]:
    return svc.facts_table(org, limit=limit, graphs=("world",)), int(svc.org_map(org)["facts"])


def world_at(ctx: Context, clock: int, org: str, n: int, limit: int) -> GraphJson:
    """The organization's World graph as it stood after moment `n`: its heaviest facts and how many."""
    return read_at(ctx.svc, at_clock(ctx, clock), MemoryService.graph_at, "world", org, n, limit=limit)


def changes(ctx: Context, clock: int, org: str, a: int, b: int) -> Obj:
    """What changed in the organization's World graph and its runs' Flow graphs from moment a to
    moment b (the earlier first), per graph (views.history.diff over facts_between)."""
    return read_at(ctx.svc, at_clock(ctx, clock), _changes, org, *sorted((a, b)))


def _changes(svc: MemoryService, org: str, lo: int, hi: int) -> Obj:
    return history.diff(*svc.facts_between(lo, hi, org=org))  # the organization's graphs only (R20)


def graph_then(ctx: Context, clock: int, graph: str, owner: str, n: int, limit: int) -> GraphJson:
    """One graph as it stood after moment `n`, as the Graphs page draws it: its `limit` heaviest
    facts then, with their ids, and `total`, how many it held."""
    return read_at(ctx.svc, at_clock(ctx, clock), MemoryService.graph_at, graph, owner, n, limit=limit, ids=True)


def graph_changes(
    ctx: Context, clock: int, graph: str, owner: str, a: int, b: int
) -> tuple[list[FactThenPublic], list[FactThenPublic]]:
    """The facts of one graph that some moment from a to b (the earlier first) changed, as they
    stood at a and at b (facts_between, this graph's only): what the Graphs page draws and lists."""
    lo, hi = sorted((a, b))
    return read_at(ctx.svc, at_clock(ctx, clock), MemoryService.facts_between, lo, hi, graph=(graph, owner))


# --- the time control (R32): one for every page that looks back, its keys under a page's prefix ------

PLAY_EVERY = 1.2  # seconds between two moments while playing


@dataclass(frozen=True)
class Shown:
    """What the time control chose: the moment shown (`n`), among the organization's moments."""

    clock: int
    options: list[int]  # every moment of the organization, by number
    label: dict[int, str]  # "12 · t3 completed in r1" for those listed, the one shown and the one compared
    n: int
    listed: list[int]  # those the slider and "Compare with…" list: a window around n

    @property
    def newest(self) -> int:
        return self.options[-1]

    @property
    def now(self) -> bool:
        return self.n == self.newest

    def what(self, n: int) -> str:
        """What happened at moment n, without its number."""
        return self.label[n].split(" · ", 1)[1]


def playing(prefix: str) -> bool:
    """Whether the page's time control plays (its fragment then reruns every PLAY_EVERY seconds)."""
    return bool(st.session_state.get(f"{prefix}_playing"))


def _step(prefix: str, options: list[int], by: int) -> None:
    """Step (on_click): the moment `by` places later or earlier, within the organization's moments."""
    i = options.index(snap(options, st.session_state.get(f"{prefix}_at")))
    st.session_state[f"{prefix}_at"] = options[max(0, min(len(options) - 1, i + by))]


def _play(prefix: str, options: list[int]) -> None:
    """Play or pause (on_click); playing from the last moment starts again at the first."""
    on = not st.session_state.get(f"{prefix}_playing", False)
    if on and snap(options, st.session_state.get(f"{prefix}_at")) == options[-1]:
        st.session_state[f"{prefix}_at"] = options[0]
        st.session_state[f"{prefix}_restart"] = True  # shown as it is, the next tick steps
    st.session_state[f"{prefix}_playing"] = on
    st.session_state[f"{prefix}_play_changed"] = True


def _go(prefix: str, options: list[int]) -> None:
    """Go to moment (on_change): the moment typed, or the organization's last one before it."""
    st.session_state[f"{prefix}_at"] = snap(options, st.session_state.get(f"{prefix}_goto"))


def play_control(ctx: Context, org: str, prefix: str) -> None:
    """▶ Play / ⏸ Pause, drawn above the fragment that plays (not in it): a tick of play redraws
    the fragment every PLAY_EVERY seconds, and a click on a button it redraws could be lost (#25)."""
    _, options = moments(ctx, org)
    if len(options) > 1:
        st.button(
            "⏸ Pause" if playing(prefix) else "▶ Play",
            key=f"{prefix}_play",
            on_click=_play,
            args=(prefix, options),
            help="Step through the moments by themselves, one every second or so.",
        )


def time_control(ctx: Context, org: str, prefix: str, heading: str = "") -> Shown:
    """The time control (R32), drawn in a fragment that reruns while playing: the organization's
    moments labelled by what happened, "now" last and chosen by default (it follows the present as
    memory changes), Back, Step, Play, and the moment from the link (`?at=N`). The slider lists the
    WINDOW moments around the one shown; past that many, "Go to moment" reaches any. Its widgets'
    keys are `{prefix}_at`, `{prefix}_back`…; `link_moments(prefix)` writes the choice back to the URL."""
    if st.session_state.pop(f"{prefix}_play_changed", False):
        st.rerun()  # the whole page again, so the timer starts or stops with it
    at, newest_key = f"{prefix}_at", f"{prefix}_newest"
    clock, options = moments(ctx, org)
    newest = options[-1]
    n = _settle(prefix, options)
    listed = window(options, n)
    other = _compared(prefix, options)
    found = labelled(ctx, org, clock, [*listed, *([other] if other is not None else [])])
    label = {k: f"{k} · {what}" for k, (_, what, _) in found.items()}
    if heading:
        st.markdown(cite(heading))
    _slider(options, listed, label, key=at)
    st.session_state[newest_key] = newest
    st.session_state[f"{prefix}_at_link"] = None if n == newest else n
    shown = f"**{inert(label[n])}**" + (" (now)" if n == newest else "")
    _steps(prefix, options, n, shown=shown, stamp=found[n][2], org_name=ctx.org_name)
    return Shown(clock, options, label, n, listed)


def _compared(prefix: str, options: list[int]) -> int | None:
    """The moment compared with (`?from=`), if it is one of the organization's (else no comparison)."""
    other = st.session_state.get(f"{prefix}_from")
    if other is not None and not _among(options, other):  # a moment of another organization: no comparison
        other = st.session_state[f"{prefix}_from"] = NO_COMPARE
    return other


def _slider(options: list[int], listed: list[int], label: dict[int, str], *, key: str) -> None:
    """The slider of the moments listed, the newest said to be now; or that there is no moment yet."""
    if len(options) <= 1:
        st.caption("No moment recorded yet: memory has not changed since its history was kept.")
        return
    st.select_slider(
        "Moment",
        listed,
        format_func=lambda k: inert(label[k]) + (" (now)" if k == options[-1] else ""),
        key=key,
        help="Each moment is one change to memory: a turn ended, a setting changed, a run deleted…",
    )


def _settle(prefix: str, options: list[int]) -> int:
    """The moment to show: the link's (?at=), else the one shown before, "now" following the present
    as memory changes; one later while playing (stopping at the last)."""
    at, newest = f"{prefix}_at", options[-1]
    from_link({"at": at, "from": f"{prefix}_from"}, ints=("at", "from"))
    before = st.session_state.get(f"{prefix}_newest")
    if before is not None and st.session_state.get(at) == before:
        st.session_state[at] = newest  # "now" follows the present as memory changes
    wanted = st.session_state.get(at, newest)
    st.session_state[at] = snap(options, wanted)
    if isinstance(wanted, int) and wanted > newest:
        dropped(at, f"now (moment {newest}, the last)")
    if st.session_state.get(f"{prefix}_playing") and not st.session_state.pop(f"{prefix}_restart", False):
        i = options.index(st.session_state[at])
        if i + 1 < len(options):
            st.session_state[at] = options[i + 1]
        if i + 2 >= len(options):
            st.session_state[f"{prefix}_playing"] = False
            st.session_state[f"{prefix}_play_changed"] = True
    return int(st.session_state[at])


def _steps(prefix: str, options: list[int], n: int, *, shown: str, stamp: str | None, org_name: str) -> None:
    """Back, Step, the moment shown (`shown`, at `stamp`) and its place, and "Go to moment" when the
    slider lists only a window of the moments."""
    newest, listed = options[-1], window(options, n)
    # One row that wraps, not columns: each button keeps its whole label at any width (#25).
    row = st.container(horizontal=True, vertical_alignment="center")
    row.button("◀ Back", key=f"{prefix}_back", on_click=_step, args=(prefix, options, -1), disabled=n == options[0])
    row.button("Step ▶", key=f"{prefix}_step", on_click=_step, args=(prefix, options, 1), disabled=n == newest)
    said = f" · {stamp[:19].replace('T', ' ')} UTC" if stamp else ""
    row.caption(  # the label carries the moment's number; its place in the list is said apart from it
        shown
        + f" · {options.index(n) + 1:,} of {len(options):,} moments listed for {inert(org_name)}{said}"
        + (f"; the slider holds the {len(listed)} around it" if len(options) > len(listed) else "")
    )
    if len(options) > len(listed):
        st.session_state[f"{prefix}_goto"] = n
        row.number_input(
            "Go to moment",
            width=160,
            min_value=0,
            max_value=newest,
            step=1,
            key=f"{prefix}_goto",
            on_change=_go,
            args=(prefix, options),
            help="Any moment by its number: the organization's last one at or before it is shown.",
        )


NO_COMPARE = None  # no comparison: no ?from= in the URL


def compare_choice(prefix: str, shown: Shown, help: str) -> int | None:
    """ "Compare with…": another of the organization's moments (`{prefix}_from`, ?from=M), or none."""
    other = st.session_state.get(f"{prefix}_from")  # one of the organization's moments (time_control saw to it)
    choices = [NO_COMPARE, *sorted({*shown.listed, *([other] if other is not None else [])})]
    other = st.selectbox(
        "Compare with…",
        choices,
        format_func=lambda o: "(no comparison)" if o == NO_COMPARE else shown.label[o],
        key=f"{prefix}_from",
        help=help,
    )
    return None if other is None else int(other)


def link_moments(prefix: str) -> None:
    """After the page drew its time control: the moment (only a past one) and the comparison in the URL."""
    to_link({"at": f"{prefix}_at_link", "from": f"{prefix}_from"})


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


def graph_names(ctx: Context) -> tuple[dict[str, str], dict[str, str]]:
    """The organizations' and the people's names, to name a diff's graphs (views.history.named_graph)."""
    return org_names(ctx), people_names(ctx)


def diff_table(d: Obj, names: tuple[dict[str, str], dict[str, str]] = ({}, {})) -> pd.DataFrame:
    """A diff as one table: every fact changed, gone or added (in that order, the changes people
    look for first), with the weight's arrow and the supports and disputes that moved it; each
    graph named by its organization's or person's name (`names`: graph_names)."""
    rows: list[list[object]] = []
    for key, parts in d.items():
        graph = history.named_graph(key, *names)
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
    rows.sort(key=lambda r: first[str(r[2])])  # stable: graph by graph within each kind
    return pd.DataFrame(rows, columns=DIFF_COLUMNS)


def counts(d: Obj) -> str:
    """`3 added, 1 gone, 2 changed` over every graph of a diff."""
    n = {k: sum(len(p[k]) for p in d.values()) for k in ("added", "gone", "changed")}
    return ", ".join(f"{v} {k}" for k, v in n.items())


def show_diff(ctx: Context, d: Obj) -> None:
    """A diff (views.history.diff) as the pages list it: one row a fact, and what the arrows mean."""
    if d:
        st.dataframe(
            diff_table(d, graph_names(ctx)),
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
