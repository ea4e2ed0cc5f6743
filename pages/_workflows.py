"""The Settings page's workflows: each one's read budget (R21) and steps, with the answers that let a
step be skipped (R22), as the organization's setup file defined them (`python -m memory_core setup`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memory_core import MemoryService
from memory_core.plain import Obj
from memory_core.views.text import inert
from pages._tables import wrapped
from pages._ui import Context, read
from pages._words import cite, plural


def _answers(step: Obj) -> str:
    """What a step answers for a shortcut (R22), or a dash: its subject, relation and threshold."""
    answers = step.get("answers")
    if not answers:
        return "—"
    subject = answers["subject"]
    return f"{subject['name']} ({subject['kind']}) {answers['relation']}, at weight {step['min_weight']:g} or more"


def workflows_section(ctx: Context, org: str) -> None:
    """The organization's workflows, whose ids an agent's start_run takes (the MCP tool `workflows`)."""
    st.subheader("Workflows")
    flows = read(ctx, MemoryService.workflows, org)
    if not flows:
        st.caption("No workflow yet: `python -m memory_core setup FILE` adds them.")
        return
    for w in flows:
        probes = (w.get("budget") or {}).get("MemoryProbes")
        budget = "no cap on graph reads" if probes is None else f"at most {plural(probes, 'graph read')} a turn"
        st.markdown(cite(f"**{inert(w['id'])}**: {budget} (R21), {plural(len(w['steps']), 'step')}"))
        if w["steps"]:
            rows = [
                {
                    "Step": s["id"],
                    "Kind": s["kind"],
                    "Admits calls (R19)": "yes" if s.get("admits_calls") else "no",
                    "Shortcut answers (R22)": _answers(s),
                }
                for s in w["steps"]
            ]
            wrapped(pd.DataFrame(rows))
    st.caption("An agent lists these with the MCP tool `workflows` and starts a run of one with `start_run`.")
