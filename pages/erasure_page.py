"""Erasure: delete a run or an account, with what goes and what stays (R29, R30, R31)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from memory_core import MemoryService
from pages._ui import guard, inert, note_change, page, read
from pages._words import caption, cite, markdown, plural

ctx, org = page("Erasure")


def world_weights() -> pd.DataFrame:
    rows = ctx.svc.facts_table(org, graphs=("world",))  # read at the deletion itself, never kept
    return pd.DataFrame(rows, columns=["subject", "relation", "object", "weight", "supports", "erased"])


def offer(goes: str, stays: str, *, note: str, sure: tuple[str, str], what: str, delete: Callable[[], object]) -> None:
    """What a deletion erases and keeps, side by side, its button once confirmed (R31), and the World facts kept."""
    go, stay = st.columns(2)
    go.markdown(cite(goes))
    stay.markdown(stays)
    st.caption(note)
    confirmed = st.checkbox(sure[1], key=sure[0], help=cite("Erasure cannot be undone (R31)."))
    kind = what.split(" ", 1)[0]  # run or account
    if st.button(f"Delete this {kind}", key=f"e_delete_{kind}", type="primary", disabled=not confirmed):
        before = world_weights().to_dict("records")
        delete()
        note_change(ctx, f"Erasure page: deleted {what}")
        st.session_state["e_last"] = {"what": what, "before": before, "after": world_weights().to_dict("records")}
        st.rerun()


def erase_run() -> None:
    """R29: a run's records and Flow graph go; the supports they gave stay, their pointer nulled."""
    if not (runs := read(ctx, MemoryService.run_ids, org)):
        st.info("No stored run in this organization.")
        st.stop()
    run_id = st.selectbox("Run", runs, key="e_run")
    p = read(ctx, MemoryService.run_erasure_preview, run_id)
    offer(
        f"**Goes** (R29): {plural(p['turns'], 'turn')}, {plural(p['records'], 'record')} with their "
        f"text, its Flow graph of {plural(p['flow_facts'], 'fact')}.",
        f"**Stays**: {p['supports_kept']} supports of World and User facts, with key, origin and "
        "contribution, their pointer set to null: no weight changes.",
        note=f"Only the run's person or the owner may delete it; you act as {inert(ctx.person)} ({ctx.role_label}).",
        sure=(
            f"e_sure_run_{run_id}",
            f"I understand that run {inert(run_id)}'s records and Flow graph are erased for good",
        ),
        what=f"run {run_id}",
        delete=lambda: ctx.svc.delete_run(run_id, by=ctx.person or ""),
    )


def erase_account() -> None:
    """R30: a person deletes their own account: their User graph and memberships go, runs stay."""
    person = ctx.person or ""
    markdown(
        f"A person deletes **their own** account (R30): you act as **{inert(person)}** ({ctx.role_label}). "
        "Pick another person under “Act as” to delete theirs."
    )
    p = read(ctx, MemoryService.account_erasure_preview, person)
    offer(
        f"**Goes** (R30): the User graph of {plural(p['user_facts'], 'fact')}, memberships in "
        f"{inert(', '.join(p['memberships'])) or 'no organization'}.",
        f"**Stays**: runs {inert(', '.join(p['runs_kept'])) or '(none)'} with the person erased from them, "
        "and every weight they contributed to.",
        note=cite("An owner's account cannot be deleted (R30)."),
        sure=(f"e_sure_acct_{person}", f"I understand that {inert(person)}'s User graph and memberships go for good"),
        what=f"account {person}",
        delete=lambda: ctx.svc.delete_account(person),
    )


with guard():
    if st.radio("Delete", ["a run", "an account"], horizontal=True, key="e_what") == "a run":
        erase_run()
    else:
        erase_account()

if last := st.session_state.get("e_last"):
    st.subheader(f"Before and after deleting {inert(last['what'])}")
    keys = ["subject", "relation", "object"]
    after = pd.DataFrame(last["after"])
    both = pd.DataFrame(last["before"]).merge(after, on=keys, how="outer", suffixes=(" before", " after"))
    changed = both[(both["weight before"] != both["weight after"]) | (both["erased before"] != both["erased after"])]
    same_weights = (both["weight before"] == both["weight after"]).all()
    markdown(
        f"{len(both)} World facts; **{'no weight changed' if same_weights else 'some weights changed'}**; "
        f"{len(changed)} facts lost the pointer of some supports (R29: key, origin and contribution stay)."
    )
    cols = [*keys, "weight before", "weight after", "erased before", "erased after"]
    named = changed[cols].rename(
        columns=lambda c: c.capitalize() if c in keys else c.replace("erased", "erased pointers")
    )
    st.dataframe(named, hide_index=True)

# R31: the bytes leave the database files after the rows (a SQLite checkpoint, PostgreSQL's rewrite).
status = ctx.svc.erasure_status()
if status["bytes_gone"]:
    caption("R31: the text of every deletion is out of the database files.")
else:
    doing = "being scrubbed out now" if status["scrubbing"] else "to be scrubbed at the next chance"
    st.warning(
        cite(
            f"R31: the text of {plural(status['pending'], 'deletion')} is gone from every table but still in the "
            f"database files, {doing}."
        )
        + (f" Last attempt: {inert(status['last_error'])}." if status["last_error"] else "")
    )
    if st.button("Check again", key="e_scrub_check"):
        st.rerun()
if status["bytes_gone"] and status.get("standby_bytes_gone", True) is not True:
    behind = "cannot be reached" if status.get("standby_bytes_gone") is None else "has not replayed the scrub yet"
    st.warning(cite(f"R31: the standby {behind}: its files still hold the text of the last deletions until it has."))
