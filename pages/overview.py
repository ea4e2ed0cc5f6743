"""Overview: the organization's map as a turn sees it, its people, runs, settings, and the samples."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from memory_core.rules.settings import SETTINGS
from memory_core.views import notebook as nbk
from pages._ui import NOTEBOOK, cite, context, guard, inert, need_org, on_off, read, use_memory

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


@st.cache_data(show_spinner=False, max_entries=64)
def sample(name: str, mtime: float) -> tuple[str, int, str]:
    """A sample's title, number of events and description, read once while the file stays as it is."""
    doc = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    return doc.get("title") or Path(name).stem, len(doc.get("events", [])), doc.get("description", "")


ctx = context()
st.title(inert(ctx.org_name) if ctx.org_name else "Memory Explorer")
st.caption(f"Memory in use: {inert(ctx.label)}")

with guard():
    if need_org(ctx):
        assert ctx.org is not None
        m = read(ctx, "org_map", ctx.org)
        st.markdown(cite("### The map every root turn carries (R18)"))
        st.info(inert(m["paragraph"]))
        left, right = st.columns([3, 2])
        with left:
            if m["kinds"]:
                # A Vega-Lite spec as st.bar_chart draws it, without importing altair (0.3 s on the first page)
                st.vega_lite_chart(
                    pd.DataFrame({"kind": list(m["kinds"]), "entities": list(m["kinds"].values())}),
                    {
                        "mark": {"type": "bar"},
                        "encoding": {
                            "y": {"field": "kind", "type": "nominal", "title": None},
                            "x": {"field": "entities", "type": "quantitative", "title": "entities"},
                        },
                    },
                    height=220,
                    width="stretch",
                )
            st.caption(
                cite(
                    "Entities of active facts by kind, and active facts; disputed and retracted facts "
                    "are not on the map (R18, R28)."
                )
            )
        with right:
            settings = read(ctx, "settings_view", ctx.org)
            st.markdown(cite("**Settings** (the owner's alone, R15)"))
            st.dataframe(
                pd.DataFrame(
                    [{"Setting": s.name, "Value": on_off(settings[s.name]), "Rule": s.rule} for s in SETTINGS]
                ),
                hide_index=True,
                width="stretch",
            )
        people, runs = st.columns([2, 3])
        with people:
            st.markdown("**People**")
            people_rows = [{"Name": m["name"], "Id": m["id"], "Role": m["role"]} for m in read(ctx, "members", ctx.org)]
            st.dataframe(pd.DataFrame(people_rows), hide_index=True, width="stretch")
        with runs:
            st.markdown("**Runs** and their turns (every record: the Runs page)")
            rows = [
                {
                    "Run": r["id"],
                    "Person": r["person"] or "erased (R30)",
                    "Surface": r["surface"],
                    "Ephemeral": on_off(r["ephemeral"]),
                    "Ended": "yes" if r["ended"] else "no",
                    "Turns": ", ".join(f"{t['id']} {t['status']}" for t in r["turns"]) or "none",
                }
                for r in read(ctx, "runs", ctx.org)
            ]
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")

st.subheader("Sample scenarios")
st.caption("Each is a story about one memory rule. Open one in the Notebook and run it cell by cell.")
files = sorted(SAMPLES.glob("*.json"))
cols = st.columns(2)
for i, path in enumerate(files):
    title, events, description = sample(path.name, path.stat().st_mtime)
    with cols[i % 2].container(border=True):
        st.markdown(f"**{title}**  \n`{path.name}` · {events} events")
        st.caption(cite(inert(description)))
        if st.button("Open in the Notebook", key=f"open-{path.stem}"):
            with guard():
                doc = json.loads(path.read_text(encoding="utf-8"))
                st.session_state["notebook"] = nbk.new(doc, path.name)
                st.session_state["notebook_file"] = path.name
                use_memory(NOTEBOOK)
                st.switch_page("pages/notebook.py")
