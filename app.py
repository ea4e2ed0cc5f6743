"""Memory Explorer's dashboard: navigation and the sidebar every page shares."""

from __future__ import annotations

import streamlit as st

from pages._ui import sidebar

st.set_page_config(page_title="Memory Explorer", layout="wide")  # no page_icon: it would load from a CDN

# Every url_path differs from its file name: see ../shared/notes/environment.md.
PAGES = [
    st.Page("pages/overview.py", title="Overview", url_path="home", default=True),
    st.Page("pages/notebook.py", title="Notebook", url_path="cells"),
    st.Page("pages/graphs.py", title="Graphs", url_path="draw"),
    st.Page("pages/settings.py", title="Settings", url_path="preferences"),
    st.Page("pages/weights.py", title="Fact weights", url_path="facts"),
    st.Page("pages/reads.py", title="Memory reads", url_path="probe"),
    st.Page("pages/erasure.py", title="Erasure", url_path="erase"),
]

page = st.navigation(PAGES)
sidebar()
page.run()
