"""The Settings page's what-if: both replays (views/whatif.py) compared, each count said with its settings (#25)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from memory_core import MemoryService
from memory_core.plain import Obj
from memory_core.rules.settings import SETTINGS
from memory_core.views import whatif
from memory_core.views.text import by_status
from pages._tables import wrapped
from pages._ui import Context, guard, inert, read
from pages._words import caption, cite, markdown, on_off, plural


@dataclass(frozen=True)
class Sides:
    """What the two replays are called: the first under the settings now (`live`) or the scenario's."""

    live: bool
    org_name: str

    @property
    def settings(self) -> str:
        """The settings the first replay ran under (`With …` heads its column)."""
        return "the settings now" if self.live else "the scenario's settings"

    @property
    def short(self) -> str:
        return "now" if self.live else "scenario's"


#: A fact of either replay (views/whatif.py's rows): its weight and status both ways, and what differs.
FACTS = ["graph", "owner", "fact", "as written", "status as written", "what if", "status what if", "difference"]


@st.cache_data(show_spinner=False, max_entries=32)
def replayed(doc_json: str, target: str, alt_json: str, live: bool) -> Obj:
    """Both replays, cached on the history's content and the settings compared (a rerun replays nothing)."""
    return whatif.compare(json.loads(doc_json), target, json.loads(alt_json), always=live)


def switches(source: str, target: str, base: dict[str, bool], sides: Sides) -> dict[str, bool]:
    """The what-if's switches, one a setting, starting at the first replay's settings (said above them)."""
    start = ", ".join(f"{k} {on_off(v)}" for k, v in base.items())
    name = inert(sides.org_name)
    where = f"the settings {name} has now" if sides.live else f"the settings the scenario starts {name} with"
    markdown(f"**What if…** The switches start at {where} ({start}): flip one to replay under it.")
    row = st.container(horizontal=True, gap="medium")  # each setting's whole name, wrapping at a narrow width
    alt = {}
    for s in SETTINGS:
        key = f"wi-{source}-{target}-{s.name}"
        st.session_state.setdefault(key, base[s.name])  # the live ones are set above, to the settings now
        alt[s.name] = row.toggle(s.name, key=key, help=cite(f"{s.meaning} ({s.rule})"))
    return alt


def _behaviour_table(behaviour: Obj, sides: Sides) -> pd.DataFrame:
    keys = list(dict.fromkeys([*behaviour["base"], *behaviour["alt"]]))
    both = [(k, behaviour["base"].get(k, 0), behaviour["alt"].get(k, 0)) for k in keys]
    rows = [(k[0].upper() + k[1:], a, b, f"{b - a:+d}" if a != b else "") for k, a, b in both]
    return pd.DataFrame(rows, columns=["Behaviour", f"With {sides.settings}", "What if", "Difference"])


def compared(ctx: Context, doc: Obj, target: str, alt: dict[str, bool], *, flipped: bool, sides: Sides) -> None:
    """Both replays side by side."""
    with guard(), st.spinner("Replaying both ways…"):
        result = replayed(json.dumps(doc, sort_keys=True), target, json.dumps(alt, sort_keys=True), sides.live)
    if not flipped:
        st.info("Flip a setting above to see what memory would do differently. Nothing differs yet.")
    behaviour = result["behaviour"]
    markdown("**What the runs would do** (claims kept out per rule R8 to R10, runs R11 and R17, steps R14, R22)")
    wrapped(_behaviour_table(behaviour, sides))
    if max(behaviour["base"].get(whatif.ASKED, 0), behaviour["alt"].get(whatif.ASKED, 0)) == 0:
        caption(
            f"No run of {inert(sides.org_name)} asked to be ephemeral, so "
            "AllowEphemeralRuns (R11) and LearnFromEphemeralRuns (R12) change nothing here: their rows stay 0."
        )
    rows = pd.DataFrame(result["rows"], columns=FACTS)  # its columns even when neither replay leaves a fact
    graphs = st.multiselect(
        "Facts of", ["world", "user", "flow"], ["world"], key="wi_graphs", help="World by default; User and Flow apart."
    )
    shown = rows[rows["graph"].isin(graphs)]
    differs = shown[shown["difference"] != ""]
    world = rows[rows["graph"] == "world"]  # the World facts each replay ends with, by status
    base_statuses, alt_statuses = (
        [s for s in world[c] if isinstance(s, str)] for c in ("status as written", "status what if")
    )
    a = b = st.container(horizontal=True, gap="large")  # each count with its whole label (#25)
    every = cite("Every World fact each replay ends with, whatever its status; the map counts only active ones (R18).")
    both = f"{len(base_statuses):,} → {len(alt_statuses):,}"
    a.metric(f"World facts, every status: {sides.short} → what if", both, help=every, width="content")
    b.metric(f"Facts that would differ, in {', '.join(graphs) or 'no graph'}", len(differs), width="content")
    caption(
        f"World facts {sides.short}: {by_status(base_statuses)}; what if: {by_status(alt_statuses)}. "
        "Active facts are the map's count (R18); disputed and retracted ones are not on it (R28)."
    )
    if sides.live:
        beside_memory(ctx, target, base_statuses)
    if differs.empty:
        st.caption("The same facts with the same weights and statuses, in the graphs shown.")
    else:
        facts_table(differs, shown, sides)


def beside_memory(ctx: Context, org: str, replayed_statuses: list[str]) -> None:
    """The replay under the settings now beside memory's active World facts (R18), and why they differ."""
    held = int(read(ctx, MemoryService.org_map, org)["facts"])
    rebuilt = sum(1 for s in replayed_statuses if s == "active")
    said = (
        f"Memory holds {plural(held, 'active World fact')} now (the Overview's and the map's count, R18); "
        f"replayed as it is, it rebuilds {rebuilt:,} active ones"
    )
    caption(
        said + ", the same."
        if held == rebuilt
        else said + ": the replay lacks what its export leaves out (listed below: erased runs and accounts, "
        "whose supports stay in memory, R17, R29 to R31), and facts written without records to replay "
        "(a memory generated in bulk)."
    )


def facts_table(differs: pd.DataFrame, shown: pd.DataFrame, sides: Sides) -> None:
    """The facts either replay leaves, each with its weight and status both ways, and what differs."""
    only = st.checkbox("Only differences", value=True, key="wi_only")
    short = sides.short
    names = {"as written": f"Weight {short}", "status as written": f"Status {short}", "what if": "Weight what if"}
    table = (differs if only else shown).rename(columns=lambda c: names.get(c, c.capitalize()))
    for column in (f"Weight {short}", "Weight what if", f"Status {short}", "Status what if"):
        fmt = ".3f" if column.startswith("Weight") else ""
        table[column] = table[column].map(lambda v, fmt=fmt: "absent" if v is None or v != v else format(v, fmt))
    words = {"only as written": f"only with {sides.settings}", "only what-if": "only in the what-if"}
    table["Difference"] = table["Difference"].map(lambda d: words.get(d, d))
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(
        f"Difference: **status** or **weight** when the fact is in both replays and that differs; **only with "
        f"{sides.settings}** when only the replay with {sides.settings} leaves the fact (the what-if's settings keep "
        "it out, or it has no support left there); **only in the what-if** when only the what-if leaves it."
    )
