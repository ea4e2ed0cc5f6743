"""Memory Explorer's dashboard entry: the organization's map as a turn sees it (R18)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memory_core import MemoryService, database_url, make_engine


@st.cache_resource
def service() -> MemoryService:
    return MemoryService(make_engine())


st.set_page_config(page_title="Memory Explorer", layout="wide")
svc = service()
state = svc.export_state()
st.sidebar.caption(f"Database: `{database_url()}`")
if not state["organizations"]:
    st.info("This memory is empty. Load the demo with `python -m memory_core load sample_data/demo.json`.")
    st.stop()
org = st.sidebar.selectbox("Organization", list(state["organizations"]))
m = svc.org_map(org)
st.title("Memory Explorer")
st.subheader("The map every root turn carries (R18)")
st.write(m["paragraph"])
st.bar_chart(pd.DataFrame({"entities": m["kinds"]}))
