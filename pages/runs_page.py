"""Runs: each run, its turns, every record kept as evidence (R2, R24: `?run=r1&record=t1%232`); Open in the Notebook."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from memory_core import MemoryService, Refusal
from memory_core.plain import Obj
from memory_core.rules.turns import teaches
from memory_core.rules.wording import claim_label, fact_label
from memory_core.usecases.shapes import RecordPublic, TurnDetail
from memory_core.views.notebook import notebook_of, run_export
from pages._links import copy_link, dropped, from_link, scroll_to, to_link
from pages._tables import download, grid, headed, wrapped
from pages._turns import STATUS, clicked, latest_turns, timeline, titled, turn_reads, turns_said
from pages._ui import guard, inert, keep, live, open_notebook, page, people_names, read, read_or_refusal
from pages._words import caption, cite, markdown, on_off, plural, probes_used, yes_no

#: The table of runs, a row a run (each run's person by name, its turns by status).
COLUMNS = ["Run", "Person", "Via", "Surface", "Ephemeral asked", "Stored as ephemeral", "Ended", "Turns"]
LINKED = {"run": "runs_run", "record": "runs_record", "turn": "runs_turn", "person": "runs_people", "via": "runs_via"}
WHY_NOTHING = {
    "open": "it is still open; a turn teaches when it completes (R1)",
    "failed": "it failed (R2)",
    "cancelled": "it was cancelled (R2)",
    "replaced": "it was replaced, and what it taught was withdrawn (R3)",
}


def step_text(step: Obj) -> str:
    sc = step.get("shortcut")
    if step.get("ran", True) or not sc:
        return f"{step['step']}: ran"
    f = sc["fact"]
    return (
        f"{step['step']}: skipped by a shortcut (R22), memory answered {fact_label(f)} "
        f"({f['graph']}, {sc['weight']:.3f})"
    )


MANY, TALL = 15, 640  # a turn of more records than MANY scrolls in place, TALL pixels high


def _taught(t: TurnDetail) -> None:
    """The map a turn took at open (R18), and what it taught (R1) or why nothing (R2, R3)."""
    m = t["map"] or {}
    kinds = ", ".join(f"{n} {k}" for k, n in sorted((m.get("kinds") or {}).items())) or "no entities"
    markdown(f"**Map taken at open** (R18): {inert(kinds)}; {plural(m.get('facts', 0), 'fact')}.")
    if teaches(t["status"]):
        supports = [plural(t["taught"][g], f"{g.capitalize()} support") for g in ("world", "user", "flow")]
        markdown(f"**Taught** (R1, R7 to R9): {', '.join(supports)}.")
    else:
        markdown(f"**Taught nothing**: {WHY_NOTHING.get(t['status'], t['status'])}.")


def _turn(t: TurnDetail, cap: int | None, linked: str | None) -> None:
    """A turn: its map (R18), what it taught (R1) or why not, reads (R21), steps, nested work, records."""
    _taught(t)
    if t["skipped"]:
        markdown("**Claims kept out** of World or User, and the rule that kept each out:")
        wrapped(headed(pd.DataFrame(t["skipped"], columns=["record", "label", "rule"]), label="Claim"))
    markdown(f"**Reads**: {probes_used(t['probes_used'], cap)} (R21).")
    turn_reads(ctx, t["id"])
    if t["steps"]:
        markdown("**Steps**: " + "; ".join(inert(step_text(s)) for s in t["steps"]) + ".")
    if t["work"]:
        work = ", ".join(f"{w['work']} ({w['status']})" for w in t["work"])
        markdown(f"**Nested work** (R4, R5, learned from once, with its turn): {inert(work)}.")
    if t["records"]:
        _records(t, linked)
    else:
        st.caption("No records.")


def _record(r: RecordPublic) -> dict[str, str]:
    """A record as a row of its turn's table: its source (R26, R4), claims and excerpt, in four columns (#39)."""
    said = [r["origin"]]
    if r["reliability"] is not None:
        said.append(f"reliability {r['reliability']:.2f}")
    if r["nested"]:
        said.append(f"from {r['nested']}")
    return {
        "Record": r["id"],
        "Source (origin; reliability if set, R26; nested work, R4)": f"{r['source'] or ''} ({', '.join(said)})".lstrip(),
        "Claims": "; ".join(claim_label(c) for c in r["claims"]) or "none",
        "Excerpt": r["excerpt"] if r["excerpt"] is not None else "(none)",
    }


def _records(t: TurnDetail, linked: str | None) -> None:
    """A turn's records, the linked one first (R24), each claim and excerpt read whole (#25)."""
    rows = [_record(r) for r in t["records"]]
    if linked:
        rows.sort(key=lambda row: row["Record"] != linked)
        st.success(f"Record {inert(linked)} (linked) is first.")
    wrapped(pd.DataFrame(rows), height=TALL if len(rows) > MANY else None)


def _open_clicked() -> None:
    """A bar of the timeline clicked: its run chosen, whatever the filters (as a link to it), its turn open."""
    if chosen := clicked("runs_timeline"):
        st.session_state["runs_run"], st.session_state["runs_turn"] = chosen
        st.session_state.update(runs_people=[], runs_via=[], runs_record=None, runs_scroll=True)


ctx, org = page("Runs")
live(ctx)  # redrawn when an agent or another tab changes memory: an open turn as it goes
caption(
    "Every run of this organization, its turns and what each taught, and every record its turns kept. "
    "A failed or cancelled turn teaches nothing, but its records stay as evidence (R2)."
)
linked_now = from_link(LINKED, lists=("person", "via"))
if linked_now & {"run", "person", "via"} == {"run"}:  # a link to a run: unfiltered
    st.session_state["runs_people"] = st.session_state["runs_via"] = []
# a turn opened by a click on its bar or by a link is scrolled to, once: it lies far below the timeline (#39)
scroll = st.session_state.pop("runs_scroll", False) or "turn" in linked_now

with guard():
    runs = read(ctx, MemoryService.runs, org)[::-1]  # newest first: agents' runs are what people come to see
    if not runs:
        st.info("No runs yet in this organization: run a scenario in the Notebook.")
        st.stop()
    timeline(ctx, org, key="runs_timeline", on_click=_open_clicked)
    clients = read(ctx, MemoryService.run_clients, [r["id"] for r in runs])  # runs an agent started over MCP
    via = {r["id"]: f"MCP: {clients[r['id']]}" if r["id"] in clients else "not via MCP" for r in runs}
    names = people_names(ctx)
    latest_turns(ctx, org)
    people = sorted({r["person"] or "" for r in runs})
    by, through = st.columns(2)
    named = lambda p: names.get(p, p) or "erased (R30)"
    who = by.multiselect("Person", people, key="runs_people", format_func=named, placeholder="Anyone")
    chosen = through.multiselect("Via", sorted(set(via.values())), key="runs_via", placeholder="Any client")
    runs = [r for r in runs if (r["person"] or "") in (who or people) and via[r["id"]] in (chosen or via.values())]
    ids = [r["id"] for r in runs]
    if not runs:
        to_link(LINKED)
        st.info("No run matches these filters.")
        st.stop()
    if st.session_state.get("runs_run") not in ids and "run" in st.query_params:
        st.warning(f"No run {inert(st.query_params['run'])!s} here: filtered out, deleted (R29), or never was.")
    keep("runs_run", ids)
    rows = [
        (r["id"], named(r["person"]), via[r["id"]], r["surface"], on_off(r["requested_ephemeral"]))
        + (on_off(r["ephemeral"]), yes_no(r["ended"]), turns_said(r))
        for r in runs
    ]
    wider = {"Via": st.column_config.TextColumn(width="medium")}
    grid(pd.DataFrame(rows, columns=COLUMNS), first=("Run", "Turns", "Person", "Via"), column_config=wider)
    run_id = st.selectbox(
        "Run", ids, key="runs_run", format_func=lambda i: f"{i} · via MCP: {clients[i]}" if i in clients else i
    )
    run = read(ctx, MemoryService.run_detail, org, run_id)
    turn_records = [rec["id"] for t in run["turns"] for rec in t["records"]]
    wanted = st.session_state.get("runs_record")
    if wanted and wanted not in turn_records:
        st.session_state["runs_record"] = None
        dropped("runs_record", f"run {inert(run_id)} with no record shown first")
    if st.session_state.get("runs_turn") not in {t["id"] for t in run["turns"]}:
        st.session_state["runs_turn"] = None
        dropped("runs_turn", f"run {inert(run_id)} with no turn open")
    to_link(LINKED)

    markdown(
        f"**{inert(run['id'])}**: by {inert(names.get(run['person'], run['person']) if run['person'] else 'an erased account (R30)')}, "
        f"surface {inert(run['surface'])}, ephemeral asked {on_off(run['requested_ephemeral'])}, "
        f"stored as ephemeral {on_off(run['ephemeral'])} (R11, R17), "
        f"{'ended' if run['ended'] else 'not ended'}"
        f"{'; started by an agent via MCP: ' + inert(clients[run_id]) if run_id in clients else ''}; "
        f"{plural(len(run['turns']), 'turn')}, {plural(len(turn_records), 'record')}."
    )
    exported = read(ctx, run_export, org, run_id)
    # R15: the run's scenario carries the organization's settings and their audit: the owner's alone
    owners = not isinstance(read_or_refusal(ctx, MemoryService.audit, org, by=ctx.person or ""), Refusal)
    opener = said = st.container(horizontal=True, vertical_alignment="center")  # the button's label whole (#25)
    if opener.button(
        "Open in the Notebook",
        key="runs_notebook",
        disabled=not exported["opens"] or not owners,
        help="This run's events as the cells of a new notebook, on a scratch memory of its own: replay the session "
        "cell by cell and what-if its settings. The database is not changed.",
    ):
        with guard():
            nb = notebook_of(exported, run_id)
            open_notebook(nb)
            st.switch_page("pages/notebook_page.py", query_params={"mem": "notebook", "nb": nb.id})
    if not owners:
        said.caption(
            cite(
                f"Only the owner opens a run in the Notebook: its scenario carries {inert(ctx.org_name)}'s settings "
                "and who changed them, which the owner alone reads (R15)."
            )
        )
    elif exported["sentence"]:
        said.warning(cite(inert(exported["sentence"])))
    else:
        said.caption(
            "Every event of this run can be written back: the notebook replays it as it happened, reads included."
        )
    for t in run["turns"]:
        linked = wanted if wanted in {r["id"] for r in t["records"]} else None
        opened = t["id"] == st.session_state["runs_turn"]  # a link's turn: a title of its own, so it opens
        head = f"{inert(titled(t))} · {STATUS.get(t['status'], t['status'])} · {plural(len(t['records']), 'record')}"
        with st.expander(
            cite(head + (" · linked" if opened else "")), expanded=bool(linked) or opened or len(run["turns"]) == 1
        ):
            _turn(t, run["cap"], linked)
        if opened and scroll:
            scroll_to(titled(t))  # the turn's label, once drawn
    c1, c2 = st.columns([1, 3])
    as_json = json.dumps(run, ensure_ascii=False, indent=2)
    download(c1.download_button, "This run as JSON", as_json, file_name=f"run-{run_id}.json", key="runs_json")
    copy_link("Link to this run", c2)
