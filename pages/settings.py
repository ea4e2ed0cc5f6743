"""Settings: the four organization settings, the owner's alone (R15), their audit, and a what-if."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memory_core.rules.settings import SETTINGS
from memory_core.views import whatif
from pages._ui import guard, inert, note_change, notebook, on_off, page

ctx, org = page("Settings")

with guard():
    current = ctx.svc.settings_view(org)
    if ctx.is_owner:
        st.success(f"You act as the owner of {inert(ctx.org_name)}: you may change these (R15).")
    else:
        st.warning(
            f"You act as {ctx.role_label}: only the owner of {inert(ctx.org_name)} changes the settings "
            "(R15), so the controls are disabled. Pick the owner under “Act as” to change them."
        )
    wanted = {}
    for s in SETTINGS:
        wanted[s.name] = st.toggle(
            f"**{s.name}** ({s.rule})",
            value=current[s.name],
            disabled=not ctx.is_owner,
            key=f"set-{org}-{s.name}",
            help=s.meaning,
        )
        st.caption(f"Now **{on_off(current[s.name])}**. {s.meaning} Default: {on_off(s.default)}.")
    changes = {k: v for k, v in wanted.items() if v != current[k]}
    if ctx.is_owner and st.button("Save settings", key="save_settings", type="primary", disabled=not changes):
        out = ctx.svc.set_settings(org, by=ctx.person or "", settings=changes)
        note_change(ctx, "Settings page: " + ", ".join(f"{k} {on_off(v)}" for k, v in changes.items()))
        st.toast("Saved: " + ", ".join(f"{c.setting} {on_off(c.new)}" for c in out.changed))
        st.rerun()

    st.subheader("Audit")
    audit = ctx.svc.audit(org)
    if audit:
        st.dataframe(pd.DataFrame(audit), hide_index=True, width="stretch")
    else:
        st.caption("No change recorded yet.")

st.subheader("What if?")
nb = notebook()
if nb is None:
    st.info("Load a scenario in the Notebook to replay it under other settings.")
    st.stop()
assert nb is not None
doc = nb["scenario"]
org_ids = [o["id"] for o in doc.get("organizations", [])]
target = st.selectbox("Organization of the notebook", org_ids, key="wi_org")
base = whatif.initial_settings(doc, target)
st.caption(
    "Replays the whole notebook from its start under another combination of the four settings, and compares "
    "what each graph would hold. Set-settings cells in the notebook still apply where they stand (R16)."
)
cols = st.columns(4)
alt = {
    s.name: cols[i].toggle(
        s.name, value=not base[s.name] if s.name == "LearnFromUsers" else base[s.name], key=f"wi-{s.name}"
    )
    for i, s in enumerate(SETTINGS)
}
with guard(), st.spinner("Replaying both ways…"):
    result = whatif.compare(doc, target, alt)
a, b = st.columns(2)
a.metric("As written", f"{result['counts']['base']} facts")
b.metric("What if", f"{result['counts']['alt']} facts", delta=result["counts"]["alt"] - result["counts"]["base"])
diff = pd.DataFrame(result["rows"])
if diff.empty:
    st.info("Both replays hold the same facts with the same weights.")
else:
    only = st.checkbox("Only differences", value=True, key="wi_only")
    shown = diff[diff["difference"] != ""] if only else diff
    st.dataframe(shown, hide_index=True, width="stretch")
