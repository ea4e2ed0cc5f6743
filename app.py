"""Memory Explorer's dashboard: navigation and the sidebar every page shares."""

from __future__ import annotations

import streamlit as st

from pages._ui import sidebar

st.set_page_config(page_title="Memory Explorer", page_icon=":material/hub:", layout="wide")

# Every url_path differs from its file name: see ../shared/notes/environment.md.
PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", url_path="home", default=True),
    st.Page("pages/notebook.py", title="Notebook", icon=":material/play_circle:", url_path="cells"),
    st.Page("pages/graphs.py", title="Graphs", icon=":material/hub:", url_path="draw"),
    st.Page("pages/settings.py", title="Settings", icon=":material/tune:", url_path="preferences"),
    st.Page("pages/weights.py", title="Fact weights", icon=":material/balance:", url_path="facts"),
    st.Page("pages/reads.py", title="Memory reads", icon=":material/search:", url_path="probe"),
    st.Page("pages/erasure.py", title="Erasure", icon=":material/delete:", url_path="erase"),
]

page = st.navigation(PAGES)
sidebar()
page.run()
