"""Erasure: delete a run or an account, with what goes and what stays (R29, R30, R31)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from pages._ui import guard, page

ctx, org = page("Erasure")


def world_weights() -> pd.DataFrame:
    rows = [r for r in ctx.svc.facts_table(org) if r["graph"] == "world"]
    return pd.DataFrame(rows, columns=["subject", "relation", "object", "weight", "supports", "erased"])


def delete_and_compare(what: str, delete: Callable[[], object]) -> None:
    """Delete, keeping the World facts before and after to show side by side."""
    before = world_weights()
    delete()
    st.session_state["e_last"] = {
        "what": what,
        "before": before.to_dict("records"),
        "after": world_weights().to_dict("records"),
    }
    st.rerun()


with guard():
    what = st.radio("Delete", ["a run", "an account"], horizontal=True, key="e_what")
    if what == "a run":
        runs = ctx.svc.runs(org)
        if not runs:
            st.info("No stored run in this organization.")
            st.stop()
        run_id = st.selectbox("Run", [r["id"] for r in runs], key="e_run")
        p = ctx.svc.run_erasure_preview(run_id)
        go, stay = st.columns(2)
        go.markdown(
            f"**Goes** (R29): {p['turns']} turns, {p['records']} records with their text, "
            f"its Flow graph of {p['flow_facts']} facts."
        )
        stay.markdown(
            f"**Stays**: {p['supports_kept']} supports of World and User facts, with key, origin and "
            "contribution, their pointer set to null: no weight changes."
        )
        st.caption(f"Only the run's person or the owner may delete it; you act as {ctx.person} ({ctx.role}).")
        if st.button("Delete this run", key="e_delete_run", type="primary"):
            delete_and_compare(f"run {run_id}", lambda: ctx.svc.delete_run(run_id, by=ctx.person or ""))
    else:
        people = ctx.svc.members(org)
        person = st.selectbox(
            "Account",
            [m["id"] for m in people],
            key="e_person",
            format_func=lambda p: f"{p} ({next(m['role'] for m in people if m['id'] == p)})",
        )
        p = ctx.svc.account_erasure_preview(person)
        go, stay = st.columns(2)
        go.markdown(
            f"**Goes** (R30): the User graph of {p['user_facts']} facts, memberships in "
            f"{', '.join(p['memberships']) or 'no organization'}."
        )
        stay.markdown(
            f"**Stays**: runs {', '.join(p['runs_kept']) or '(none)'} with the person erased from them, "
            "and every weight they contributed to."
        )
        st.caption("An owner's account cannot be deleted (R30).")
        if st.button("Delete this account", key="e_delete_account", type="primary"):
            delete_and_compare(f"account {person}", lambda: ctx.svc.delete_account(person))

last = st.session_state.get("e_last")
if last:
    st.subheader(f"Before and after deleting {last['what']}")
    b, a = st.columns(2)
    b.caption("World facts before")
    b.dataframe(pd.DataFrame(last["before"]), hide_index=True, width="stretch")
    a.caption("World facts after: the same weights, more erased pointers (R29)")
    a.dataframe(pd.DataFrame(last["after"]), hide_index=True, width="stretch")
