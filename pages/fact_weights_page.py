"""Fact weights: a graph's facts, and any weight explained to each source (R24 to R28) and through time (R32)."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from memory_core import MemoryService
from memory_core.rules.shortcuts import DEFAULT_MIN_WEIGHT
from memory_core.rules.weights import WEIGHT_DECIMALS
from memory_core.rules.wording import possessive
from memory_core.views import csv_safe
from pages._history import through_time
from pages._links import copy_link, dropped, from_link, record_link, scroll_to, to_link
from pages._tables import download, fact_grid, headed, rules_help, three_places, wrapped
from pages._turns import fact_readers
from pages._ui import guard, inert, keep, live, page, read
from pages._words import caption, cite, markdown, plural

ROWS = 3000  # the heaviest facts listed, so a large memory stays fast (B6)
GRAPHS = {"world": "World (the organization's)", "user": "User (yours)", "flow": "Flow (one run's)"}
LINKED = {"graph": "w_graphs", "status": "w_status", "q": "w_text", "fact": "w_fact"}
ELSEWHERE = "another organization's (R23)"


ctx, org = page("Fact weights")
live(ctx)  # redrawn when an agent or another tab changes memory
from_link_now = from_link(LINKED, ints=("fact",), lists=("status",))
if st.session_state.get("w_graphs") not in GRAPHS:
    st.session_state["w_graphs"] = "world"
    dropped("w_graphs", "the World graph (a graph is world, user or flow)")

with guard():
    world = "World by default: what the organization knows."
    graph = st.radio("Graph", list(GRAPHS), format_func=GRAPHS.get, horizontal=True, key="w_graphs", help=world)
    if graph == "flow":
        caption(
            "A run's Flow graph keeps every claim its completed turns made (R7), whatever the settings "
            "keep out of World and User (R8 to R10); so a Flow copy of a World fact may weigh differently."
        )
    with st.spinner("Loading facts…"):
        rows = read(ctx, MemoryService.facts_table, org, person=ctx.person, limit=ROWS, graphs=(graph,))
    where = {
        "world": f"the World graph of {inert(ctx.org_name)}",
        "user": f"{inert(ctx.person)}'s User graph",
        "flow": f"the Flow graphs of {inert(possessive(ctx.org_name))} runs",
    }[graph]
    capped = len(rows) == ROWS  # the graph holds more than are listed
    wanted = st.session_state.get("w_fact")
    if isinstance(wanted, int) and wanted not in {r["id"] for r in rows}:  # a linked fact past the heaviest
        one = read(ctx, MemoryService.facts_table, org, person=ctx.person, graphs=(graph,), fact=wanted) if rows else []
        if one:
            rows = [*rows, *one]
            st.caption(f"Listed last: the linked fact, which is not among the {ROWS:,} heaviest.")
        elif "fact" in from_link_now:
            st.warning(
                f"The link names fact {wanted}, which {where} does not hold: it may be in another graph or "
                "organization, or have gone since the link was made (a replaced claim takes its facts with it, "
                "R3; so does deleting its run, R29)."
            )
    if not rows:
        st.info(f"No facts in {where} yet: run a scenario in the Notebook, or pick another graph.")
        to_link(LINKED)
        st.stop()
    df = pd.DataFrame(rows)
    c = st.columns([2, 3, 1])
    statuses = c[0].multiselect("Status", ["active", "disputed", "retracted"], key="w_status", placeholder="all")
    text = c[1].text_input("Subject, relation or object contains", key="w_text")
    min_w = c[2].number_input("Min weight", 0.0, 1.0, 0.0, 0.05, key="w_min")
    shown = df[df["weight"] >= min_w]
    if statuses:
        shown = shown[shown["status"].isin(statuses)]
    if text:
        hay = shown["subject"] + " " + shown["relation"] + " " + shown["object"].astype(str)
        shown = shown[hay.str.contains(text, case=False, regex=False)]
    if capped:
        st.caption(f"The {ROWS:,} heaviest facts are listed; filter to look among them.")
    if isinstance(wanted, int) and wanted in set(df["id"]) and wanted not in set(shown["id"]):
        st.caption(f"The linked fact ({wanted}) is hidden by these filters; widen them to see it.")
    caption(
        f"{len(shown)} of {plural(len(df), 'fact')} listed. Independent sources count once each however often "
        "they repeat (R25); erased pointers are supports whose run was deleted (R29), their votes kept."
    )
    cols = ["subject", "relation", "object", "status", "weight", "log_odds", "sources", "supports", "disputes"]
    cols += ["erased"] + (["owner"] if graph == "flow" else [])
    table = headed(shown[cols], owner="Run")
    fact_grid(table, more={"Log-odds L": st.column_config.NumberColumn(format="%.3f")})
    as_csv = lambda: csv_safe.csv_text(table)  # written when asked for, not on every rerun
    download(st.download_button, "Download CSV", as_csv, file_name="facts.csv", key="w_csv")

    st.subheader("Why this weight?")
    if "fact" in from_link_now:
        scroll_to("Why this weight?")  # a fact opened by a link (a click on the drawing) is shown, not below the fold
    if shown.empty:
        st.info("No fact matches these filters; widen them to pick a fact.")
        to_link(LINKED)
        st.stop()
    labels = {
        int(r["id"]): f"{r['subject']} —{r['relation']}→ {r['object']}  ({r['weight']:.3f}, {r['status']})"
        + (f" in {r['owner']}" if graph == "flow" else "")
        for r in map(rows.__getitem__, shown.index)  # the rows shown, as read (the frame's index is their place)
    }
    keep("w_fact", list(labels))
    fid = st.selectbox("Fact", list(labels), format_func=labels.__getitem__, key="w_fact")
    threshold = st.number_input(
        cite("Shortcut threshold (a step's min_weight, R22)"), 0.0, 1.0, DEFAULT_MIN_WEIGHT, 0.05, key="w_threshold"
    )
    to_link(LINKED)
    b = read(ctx, MemoryService.fact_breakdown, int(fid), min_weight=threshold, org=org)
    f = b["fact"]
    m = [st.container(horizontal=True, gap="medium")] * 4  # each number with its whole label, wrapping (#25)
    m[0].metric("Weight", f"{f['weight']:.3f}", help=cite("w = 1 / (1 + e^-L) (R26)"), width="content")
    summed = cite("the sum of each source's largest l, minus disputes (R26)")
    m[1].metric("Log-odds L", f"{f['log_odds']:.3f}", help=summed, width="content")
    m[2].metric("Independent sources", f["sources"], help=rules_help(["R25"]), width="content")
    margin = "none" if b["margin"] is None else f"{round(b['margin'], WEIGHT_DECIMALS) + 0.0:+.3f}"  # never -0.000
    m[3].metric("Margin to shortcut", margin, help=cite(inert(b["margin_why"])), width="content")
    markdown(f"**The arithmetic** (R26): {inert(b['arithmetic'])}")
    caption(inert(b["margin_why"]))

    markdown("**Each independent source** (R25: repeats of one source count once, at their largest l)")
    sources = pd.DataFrame(b["sources"])
    sources["key"] = sources["key"].map(lambda k: ELSEWHERE if k is None else k)
    sources = three_places(sources, "contribution", "reliability", "weight_without")
    wrapped(headed(sources, key="Source", supports="Supports (repeats folded in)"))
    if b["disputes"]:
        markdown("**Disputes** (each subtracts the l of the person reliability, 0.85, R28)")
        disputes = pd.DataFrame(b["disputes"], columns=["name", "contribution", "weight_without"])
        disputes["name"] = disputes["name"].map(lambda n: n or "erased account (R30)")
        disputes = three_places(disputes, "contribution", "weight_without")
        wrapped(headed(disputes, name="Disputed by", contribution="Subtracted l"))

    markdown("**The evidence**: each support and the record it points to (R24), a record opens on Runs")
    evidence = [
        {
            "Origin": s["origin"],
            "Source": s["key"] if not s["elsewhere"] else ELSEWHERE,
            "Contribution l": s["contribution"],
            "Record": s["record"] or ("withheld (R23)" if s["elsewhere"] else "erased (R29)"),
            "Excerpt": s["excerpt"]
            if s["excerpt"] is not None
            else ("withheld (R23)" if s["elsewhere"] else "erased (R29)" if s["record"] is None else "(no excerpt)"),
        }
        for s in b["supports"]
    ]
    linked = [  # the record's id is its link to the Runs page (R24); an erased pointer is said, not linked
        {
            **e,
            "Contribution l": f"{s['contribution']:.3f}",
            "Record": record_link(s["run"], s["record"], str(e["Record"])),
        }
        for e, s in zip(evidence, b["supports"], strict=True)
    ]
    wrapped(pd.DataFrame(linked, columns=list(evidence[0]) if evidence else None), markdown=("Record",))
    fact_readers(ctx, org, int(fid))
    e1 = e2 = st.container(horizontal=True)
    said = {"Fact": labels[int(fid)].rsplit("  (", 1)[0], "Weight": f"{f['weight']:.6f}", "Status": f["status"]}
    one = pd.DataFrame(evidence)  # the CSV says which fact, its weight and status, then its evidence
    one_csv = csv_safe.csv_text(pd.concat([pd.DataFrame(said, index=one.index), one], axis=1))
    download(e1.download_button, "This fact as CSV", one_csv, file_name=f"fact-{fid}.csv", key="w_fact_csv")
    as_json = json.dumps(b, ensure_ascii=False, indent=2, default=str)
    download(e2.download_button, "This fact as JSON", as_json, file_name=f"fact-{fid}.json", key="w_fact_json")
    copy_link("Link to this fact")

    through_time(ctx, org, graph, int(fid), b, threshold)

    st.subheader("Distribution (of the facts shown)")
    h, s = st.columns(2)
    with h:
        st.caption("Weights")
        edges = [i / 10 for i in range(11)]
        ranges = [f"{a:.1f}–{a + 0.1:.1f}" for a in edges[:-1]]
        bins = pd.cut(shown["weight"], bins=edges, include_lowest=True, labels=ranges)
        st.bar_chart(bins.value_counts().sort_index())
    with s:
        st.caption("Weight against independent sources")
        st.scatter_chart(shown, x="sources", y="weight", color="status")
