"""Memory Explorer's dashboard: navigation and the sidebar every page shares.

In signed-in mode (MEMORY_SIGN_IN=1, or listening beyond loopback) only the sign-in page is
served until the session holds a valid bearer token; see pages/_ui.py.
"""

from __future__ import annotations

import streamlit as st

from pages._links import OVERVIEW_ALIASES, PAGES, SET_BY_LINK, addresses
from pages._signin import needs_sign_in, sign_in_page
from pages._ui import sidebar, told

st.set_page_config(page_title="Memory Explorer", layout="wide")  # no page_icon: it would load from a CDN


def _home() -> None:
    """`/home`, `/overview` and `/overview-page`: the Overview, with the link's choices
    (`/home?at=7`). The default page is served at `/` only; its own url_path names no address."""
    st.switch_page(NAVIGATION[0], query_params=st.query_params.to_dict())


NAVIGATION = [st.Page(p.script, title=p.title, url_path=p.address, default=p == PAGES[0]) for p in PAGES]

if needs_sign_in():
    # The sign-in is served at every page's address, so a link (its page and its choices) survives
    # the sign-in: the run after it opens the page the address names (#26).
    held = [st.Page(sign_in_page, title="Sign in", url_path=path, visibility="hidden") for path in addresses()]
    st.navigation([st.Page(sign_in_page, title="Sign in", url_path="sign-in", default=True), *held]).run()
else:
    aliases = [st.Page(_home, title="Overview", url_path=path, visibility="hidden") for path in OVERVIEW_ALIASES]
    page = st.navigation([*NAVIGATION, *aliases])
    st.session_state[SET_BY_LINK] = {}  # what a link sets is said, if it names nothing, in the run it sets it
    st.session_state["_link_page"] = page.url_path  # links are read and written per page (pages/_links.py)
    sidebar()
    page.run()
    told()  # a notice of the sidebar's, shown by a run that reached its end
