"""What the pages that look back share (R32): the time control, moments labelled, diffs, a weight through time."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ParamSpec, SupportsInt, TypeVar

import pandas as pd
import streamlit as st

from memory_core import MemoryService
from memory_core.plain import Obj
from memory_core.usecases.shapes import Breakdown, FactThenPublic
from memory_core.views import history
from pages._links import dropped, from_link, to_link
from pages._tables import headed, three_places, wrapped
from pages._ui import Context, Read, inert, org_names, people_names, read, read_at
from pages._words import caption

P = ParamSpec("P")
R = TypeVar("R")

#: A moment as the pages list it: its number, what happened ("t3 completed in r1"), and when.
Moment = tuple[int, str, str | None]
BEFORE = "before history was kept"
Between = tuple[list[FactThenPublic], list[FactThenPublic]]  # the facts changed, as they stood at two moments


def then(ctx: Context, clock: int, what: Read[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """A read of history kept under the memory's clock: a new moment is a new key, a count is not."""
    return read_at(ctx.svc, (ctx.memory, f"moment {clock}"), what, *args, **kwargs)


#: The moments the slider and "Compare with…" list around the one shown (there may be tens of
#: thousands, each a label sent on every rerun); Back, Step, Play and "Go to moment" reach every one.
WINDOW = 200


def _labels(svc: MemoryService, clock: int, org: str, ids: tuple[int, ...]) -> dict[int, Moment]:
    """The moments numbered in `ids`, labelled by what happened (as R33 left them at this clock)."""
    people = {p["id"]: p["name"] for p in svc.people()}
    out: dict[int, Moment] = {0: (0, BEFORE, None)} if 0 in ids else {}
    rows = svc.moments(org=org, last=clock, ids=[i for i in ids if i])
    facts = history.fact_names(svc, rows, org=org)
    return out | {m["n"]: (m["n"], history.moment_label(m, people, facts), m["at"]) for m in rows}


def moments(ctx: Context, org: str) -> tuple[int, list[int]]:
    """The clock now, and the organization's moments (and those of none: setup, erasures), 0 first."""
    clock = read(ctx, MemoryService.clock)
    return clock, [0, *then(ctx, clock, MemoryService.moment_numbers, org=org, last=clock)]


def labelled(ctx: Context, org: str, clock: int, ids: Iterable[int]) -> dict[int, Moment]:
    """Moments by number, with what happened and when, for the moments in `ids`."""
    return then(ctx, clock, _labels, clock, org, tuple(sorted(set(ids))))


def window(options: list[int], n: int, size: int = WINDOW) -> list[int]:
    """The `size` moments listed around moment `n` (which is listed), the newest when it is near."""
    lo = max(0, min(bisect.bisect_left(options, n) - size // 2, len(options) - size))
    return options[lo : lo + size]


def snap(options: list[int], wanted: object) -> int:
    """The moment to show for a wanted one: itself if listed, else the last before it, else the first."""
    if not isinstance(wanted, str | SupportsInt):  # None, or no number at all: the newest
        return options[-1]
    try:
        n = int(wanted)
    except (TypeError, ValueError):
        return options[-1]
    i = bisect.bisect_right(options, n)  # options are sorted: tens of thousands need no scan each rerun
    return options[i - 1] if i else options[0]


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


def play_control(ctx: Context, org: str, prefix: str, *, offered: bool = True) -> None:
    """▶ Play / ⏸ Pause, above the fragment that plays: a click on a button it redraws could be lost (#25)."""
    _, options = moments(ctx, org) if offered else (None, [])  # not offered (Graphs' User graph): nothing read
    if len(options) > 1:
        st.button(
            "⏸ Pause" if playing(prefix) else "▶ Play",
            key=f"{prefix}_play",
            on_click=_play,
            args=(prefix, options),
            help="Step through the moments by themselves, one every second or so.",
        )


def time_control(ctx: Context, org: str, prefix: str) -> Shown:
    """The time control (R32): the moments labelled, "now" by default, Back, Step, the link's `?at=N`."""
    if st.session_state.pop(f"{prefix}_play_changed", False):
        st.rerun()  # the whole page again, so the timer starts or stops with it
    clock, options = moments(ctx, org)
    n = _settle(prefix, options)
    listed = window(options, n)
    other = st.session_state.get(f"{prefix}_from")  # the moment compared with (`?from=`): one of the organization's
    if other is not None and snap(options, other) != other:  # another organization's: no comparison
        other = st.session_state[f"{prefix}_from"] = None
    found = labelled(ctx, org, clock, [*listed, *([other] if other is not None else [])])
    shown = Shown(clock, options, {k: f"{k} · {what}" for k, (_, what, _) in found.items()}, n, listed)
    _slider(shown, key=f"{prefix}_at")
    st.session_state[f"{prefix}_newest"] = shown.newest
    st.session_state[f"{prefix}_at_link"] = None if n == shown.newest else n
    _steps(prefix, shown, stamp=found[n][2], org_name=ctx.org_name)
    return shown


def _slider(shown: Shown, *, key: str) -> None:
    """The slider of the moments listed, the newest said to be now; or that there is no moment yet."""
    if len(shown.options) <= 1:
        st.caption("No moment recorded yet: memory has not changed since its history was kept.")
        return
    st.select_slider(
        "Moment",
        shown.listed,
        format_func=lambda k: inert(shown.label[k]) + (" (now)" if k == shown.newest else ""),
        key=key,
        help="Each moment is one change to memory: a turn ended, a setting changed, a run deleted…",
    )


def _settle(prefix: str, options: list[int]) -> int:
    """The moment to show: the link's (?at=), else the one before ("now" follows); one later while playing."""
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
        st.session_state[at] = options[min(i + 1, len(options) - 1)]
        if i + 2 >= len(options):
            st.session_state[f"{prefix}_playing"] = False
            st.session_state[f"{prefix}_play_changed"] = True
    return int(st.session_state[at])


def _steps(prefix: str, shown: Shown, *, stamp: str | None, org_name: str) -> None:
    """Back, Step, the moment shown and its place, and "Go to moment" past the slider's window."""
    options, n, newest, listed = shown.options, shown.n, shown.newest, shown.listed
    # One row that wraps, not columns: each button keeps its whole label at any width (#25).
    row = st.container(horizontal=True, vertical_alignment="center")
    row.button("◀ Back", key=f"{prefix}_back", on_click=_step, args=(prefix, options, -1), disabled=n == options[0])
    row.button("Step ▶", key=f"{prefix}_step", on_click=_step, args=(prefix, options, 1), disabled=n == newest)
    # inert: "07:09:39" read as Markdown holds ":09:", an emoji's shortcode to Streamlit, which loads 250 kB
    # of emoji for it on a page's first open (B8); escaped, the same text shows
    said = f" · {inert(stamp[:19].replace('T', ' '))} UTC" if stamp else ""
    row.caption(  # the label carries the moment's number; its place in the list is said apart from it
        f"**{inert(shown.label[n])}**"
        + (" (now)" if n == newest else "")
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


def compare_choice(prefix: str, shown: Shown, help: str) -> int | None:
    """ "Compare with…": another of the organization's moments (?from=M), or none."""
    other = st.session_state.get(f"{prefix}_from")  # one of the organization's moments (time_control saw to it)
    choices = [None, *sorted({*shown.listed, *([other] if other is not None else [])})]
    other = st.selectbox(
        "Compare with…",
        choices,
        format_func=lambda o: "(no comparison)" if o is None else shown.label[o],  # no ?from= in the URL
        key=f"{prefix}_from",
        help=help,
    )
    return None if other is None else int(other)


def link_moments(prefix: str) -> None:
    """After the page drew its time control: the moment (only a past one) and the comparison in the URL."""
    to_link({"at": f"{prefix}_at_link", "from": f"{prefix}_from"})


def _w(weight: float | None) -> str:
    return "absent" if weight is None else f"{weight:.3f}"


DIFF_COLUMNS = ["Graph", "Fact", "Change", "Weight before", "Weight after", "↑↓", "Status before", "Status after"]
DIFF_COLUMNS += ["Supports that came", "Supports withdrawn", "Disputes"]
WIDE = ("Fact", "Supports that came", "Supports withdrawn")  # read whole: their column is large


def diff_table(d: Obj, orgs: dict[str, str], people: dict[str, str]) -> pd.DataFrame:
    """A diff as one table: facts changed, gone, then added, each graph named by its owner's name."""
    rows: list[list[object]] = []
    for key, parts in d.items():
        graph = history.named_graph(key, orgs, people)
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


def show_diff(ctx: Context, between: Between, lo: int, hi: int, *, shown: Shown, title: str, nothing: str) -> None:
    """What changed from moment lo to hi (`between`: facts_between's answer), as the pages list it: a row a fact."""
    d = history.diff(*between)
    n = {k: sum(len(p[k]) for p in d.values()) for k in ("added", "gone", "changed")}  # over every graph
    st.markdown(
        f"**{title} {lo}** ({inert(shown.what(lo))}) **to moment {hi}** ({inert(shown.what(hi))}): "
        + (", ".join(f"{v} {k}" for k, v in n.items()) if d else f"nothing changed in {nothing}")
        + "."
    )
    if d:
        st.dataframe(
            diff_table(d, org_names(ctx), people_names(ctx)),
            hide_index=True,
            width="stretch",
            column_config={c: st.column_config.TextColumn(width="large") for c in WIDE},
        )
    caption(
        "↑ heavier, ↓ lighter. Supports come with completed turns (R1); a replacement withdraws the "
        "supports its turn replaced (R3); disputes and retractions lower a weight (R28); what was "
        "erased since is absent at both moments (R33)."
    )


# --- a fact's weight through time (Fact weights), each step with its cause ---------------------------

#: What changed a weight, as the line marks it: each kind's shape and colour, neither the line's (#39: a disputed step
#: was a light blue triangle on the blue line), the cause in words on hover.
CAUSES = {
    "correction (R28)": ("triangle-down", "#c62828", ("dispute by", "retracted by")),
    "replacement (R3)": ("diamond", "#f9a825", ("withdrawn",)),
    "erasure since (R29, R30)": ("cross", "#7b1fa2", ("erased since", "a deleted account")),
    "record (R1)": ("circle", "#2e7d32", ("support from",)),
}
LINE = "#546e7a"  # the weight's line: a slate no cause is drawn in


#: A step's tooltip, field by field; its weight (three places) is inserted before its status.
TIPS = [("step:O", "Step"), ("moment:Q", "Moment"), ("moment_label:N", "What happened"), ("kind:N", "Kind of cause")]
TIPS += [("cause:N", "Cause"), ("status:N", "Status")]


def cause_kind(cause: str) -> str:
    """The kind of a step's cause, the first of CAUSES its words name (a correction before a record's support)."""
    return next((kind for kind, (*_, words) in CAUSES.items() if any(w in cause for w in words)), "record (R1)")


def through_time(ctx: Context, org: str, graph: str, fid: int, b: Breakdown, threshold: float) -> None:
    """The fact's weight after each moment that changed it (R32), each step numbered with its cause (R3, R33)."""
    import altair as alt  # here, not on the Overview's first run (0.3 s)

    st.subheader("Its weight through time")
    h = read(ctx, MemoryService.fact_history, fid, org=org)  # as read from this organization: R23 applied by the read
    people = people_names(ctx)
    if not (steps := history.weight_through_time(h, people)):
        st.caption("This fact has no recorded history.")
        return
    now = read(ctx, MemoryService.clock)
    df = pd.DataFrame(steps).assign(step=range(1, len(steps) + 1), kind=[cause_kind(s["cause"]) for s in steps])
    line = pd.concat([df, df.tail(1).assign(moment=max(now, int(df["moment"].iloc[-1])), step=None)])
    x = alt.X("moment:Q", title="Moment (memory's clock)", axis=alt.Axis(tickMinStep=1, format="d"))
    tenths = alt.Axis(values=[0, 0.2, 0.4, 0.6, 0.8, 1])
    y = alt.Y("weight:Q", title="Weight", scale=alt.Scale(domain=[0, 1.1]), axis=tenths)
    tips = [alt.Tooltip(field, title=title) for field, title in TIPS]
    tips.insert(-1, alt.Tooltip("weight:Q", title="Weight", format=".3f"))
    shapes = alt.Scale(domain=list(CAUSES), range=[shape for shape, _, _ in CAUSES.values()])
    colours = alt.Scale(domain=list(CAUSES), range=[colour for _, colour, _ in CAUSES.values()])
    chart = (
        alt.Chart(line).mark_line(interpolate="step-after", color=LINE).encode(x=x, y=y)
        + alt.Chart(df)
        .mark_point(filled=True, size=150, opacity=1)  # one legend: each cause as it is marked
        .encode(x=x, y=y, shape=alt.Shape("kind:N", title="Cause", scale=shapes), tooltip=tips)
        .encode(color=alt.Color("kind:N", title="Cause", scale=colours))
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
