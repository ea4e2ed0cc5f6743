"""Memory Explorer's dashboard: navigation and the sidebar every page shares.

In signed-in mode (MEMORY_SIGN_IN=1, or listening beyond loopback) only the sign-in page is
served until the session holds a valid bearer token; see pages/_ui.py.
"""

from __future__ import annotations

import streamlit as st

from pages._signin import needs_sign_in, sign_in_page
from pages._ui import sidebar, told

st.set_page_config(page_title="Memory Explorer", layout="wide")  # no page_icon: it would load from a CDN


def _home() -> None:
    """`/home`: the Overview (the default page is served at `/`, so `/home` would be "not found"),
    with the link's choices (`/home?at=7`)."""
    st.switch_page(PAGES[0], query_params=st.query_params.to_dict())


# Every url_path differs from its file name (Streamlit would otherwise serve two routes for one page).
PAGES = [
    st.Page("pages/overview_page.py", title="Overview", url_path="overview-page", default=True),
    st.Page("pages/cells_page.py", title="Notebook", url_path="cells"),
    st.Page("pages/draw_page.py", title="Graphs", url_path="draw"),
    st.Page("pages/preferences_page.py", title="Settings", url_path="preferences"),
    st.Page("pages/runlog_page.py", title="Runs", url_path="runlog"),
    st.Page("pages/facts_page.py", title="Fact weights", url_path="facts"),
    st.Page("pages/probe_page.py", title="Memory reads", url_path="probe"),
    st.Page("pages/erase_page.py", title="Erasure", url_path="erase"),
    st.Page("pages/rulebook_page.py", title="Rules", url_path="rulebook"),
]

if needs_sign_in():
    st.navigation([st.Page(sign_in_page, title="Sign in", url_path="sign-in", default=True)]).run()
else:
    page = st.navigation([*PAGES, st.Page(_home, title="Overview", url_path="home", visibility="hidden")])
    st.session_state["_link_page"] = page.url_path  # links are read and written per page (pages/_links.py)
    sidebar()
    page.run()
    told()  # a notice of the sidebar's, shown by a run that reached its end
