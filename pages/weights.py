"""Fact weights: every fact with its numbers, and any weight explained down to each source (R25, R26)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memory_core.rules.shortcuts import DEFAULT_MIN_WEIGHT
from memory_core.rules.wording import possessive
from pages._ui import guard, inert, page

ROWS = 3000  # the heaviest facts listed, so a large memory stays fast (B6)

ctx, org = page("Fact weights")

with guard():
    with st.spinner("Loading facts…"):
        rows = ctx.svc.facts_table(org, person=ctx.person, limit=ROWS)
    if not rows:
        st.info("No facts yet: run a scenario in the Notebook.")
        st.stop()
    df = pd.DataFrame(rows)
    c = st.columns([2, 2, 2, 1])
    graphs = c[0].multiselect("Graph", sorted(df["graph"].unique()), key="w_graph", placeholder="all graphs")
    statuses = c[1].multiselect("Status", sorted(df["status"].unique()), key="w_status", placeholder="all")
    text = c[2].text_input("Subject, relation or object contains", key="w_text")
    min_w = c[3].number_input("Min weight", 0.0, 1.0, 0.0, 0.05, key="w_min")
    shown = df[df["weight"] >= min_w]
    if graphs:
        shown = shown[shown["graph"].isin(graphs)]
    if statuses:
        shown = shown[shown["status"].isin(statuses)]
    if text:
        hay = shown["subject"] + " " + shown["relation"] + " " + shown["object"].astype(str)
        shown = shown[hay.str.contains(text, case=False, regex=False)]
    if len(df) == ROWS:
        st.caption(f"The {ROWS:,} heaviest facts are listed; filter to look among them.")
    st.caption(
        f"{len(shown)} of {len(df)} facts: the World graph of {inert(ctx.org_name)}, "
        f"{inert(ctx.person)}'s User graph and the Flow graphs of {inert(possessive(ctx.org_name))} runs. "
        "`sources` counts independent sources (R25); `erased` counts supports whose run was deleted (R29)."
    )
    cols = [
        "id",
        "graph",
        "owner",
        "subject",
        "relation",
        "object",
        "status",
        "weight",
        "log_odds",
        "sources",
        "supports",
        "disputes",
        "erased",
    ]
    st.dataframe(
        shown[cols],
        hide_index=True,
        width="stretch",
        column_config={"weight": st.column_config.ProgressColumn("weight", min_value=0, max_value=1, format="%.3f")},
    )
    st.download_button(
        "Download CSV", shown[cols].to_csv(index=False), file_name="facts.csv", mime="text/csv", key="w_csv"
    )

    st.subheader("Why this weight?")
    if shown.empty:
        st.info("No fact matches these filters; widen them to pick a fact.")
        st.stop()
    labels = {
        r["id"]: f"[{r['graph']}] {r['subject']} —{r['relation']}→ {r['object']}  ({r['weight']:.3f})"
        for r in shown.to_dict("records")
    }
    fid = st.selectbox("Fact", list(labels), format_func=labels.__getitem__, key="w_fact")
    threshold = st.number_input(
        "Shortcut threshold (a step's min_weight, R22)", 0.0, 1.0, DEFAULT_MIN_WEIGHT, 0.05, key="w_threshold"
    )
    if fid is not None:
        b = ctx.svc.fact_breakdown(int(fid), min_weight=threshold)
        f = b["fact"]
        m = st.columns(4)
        m[0].metric("Weight", f"{f['weight']:.3f}", help="w = 1 / (1 + e^-L) (R26)")
        m[1].metric("Log-odds L", f"{f['log_odds']:.3f}", help="sum of each source's largest l, minus disputes")
        m[2].metric("Independent sources", f["sources"])
        m[3].metric(
            "Margin to shortcut",
            f"{b['margin']:+.3f}",
            help=f"weight minus {threshold}: a step naming this question is skipped when ≥ 0 (R22)",
        )
        st.dataframe(
            pd.DataFrame(b["sources"]).rename(
                columns={
                    "supports": "supports (repeats folded in)",
                    "erased": "erased pointers",
                    "weight_without": "weight without it",
                }
            ),
            hide_index=True,
            width="stretch",
        )
        if b["disputes"]:
            st.markdown("**Disputes** (each subtracts the person reliability's l, R28)")
            st.dataframe(pd.DataFrame(b["disputes"]), hide_index=True, width="stretch")
        with st.expander("Every support, with its pointer into the run evidence (R24)"):
            st.dataframe(pd.DataFrame(b["supports"]), hide_index=True, width="stretch")

    st.subheader("Distribution (of the facts shown)")
    h, s = st.columns(2)
    with h:
        st.caption("Weights")
        edges = [i / 10 for i in range(11)]
        bins = pd.cut(
            shown["weight"], bins=edges, include_lowest=True, labels=[f"{a:.1f}–{a + 0.1:.1f}" for a in edges[:-1]]
        )
        st.bar_chart(bins.value_counts().sort_index())
    with s:
        st.caption("Weight against independent sources")
        st.scatter_chart(shown, x="sources", y="weight", color="graph")
