"""Memory Explorer's dashboard: navigation and the shared sidebar; signed in (pages/_signin.py), sign-in first."""

from __future__ import annotations

import streamlit as st

from pages._links import OLD_ADDRESSES, PAGES, SET_BY_LINK, addresses
from pages._signin import sign_in_page, sign_in_required, signed_in
from pages._ui import TOLD, said_once, sidebar

st.set_page_config(page_title="Memory Explorer", layout="wide")  # no page_icon: it would load from a CDN


NAVIGATION = [st.Page(p.script, title=p.title, url_path=p.address, default=p == PAGES[0]) for p in PAGES]
BY_ADDRESS = {p.address: page for p, page in zip(PAGES, NAVIGATION, strict=True)}


def opens(address: str) -> st.Page:
    """A hidden page at an old address (`/home?at=7`) that switches to the page it names now, with the link's choices."""
    target = BY_ADDRESS[OLD_ADDRESSES[address]]
    return st.Page(
        lambda: st.switch_page(target, query_params=st.query_params.to_dict()),
        title=target.title,
        url_path=address,
        visibility="hidden",
    )


if sign_in_required() and signed_in() is None:
    # The sign-in is served at every page's address, so a link (its page and its choices) survives
    # the sign-in: the run after it opens the page the address names (#26).
    held = [st.Page(sign_in_page, title="Sign in", url_path=path, visibility="hidden") for path in addresses()]
    st.navigation([st.Page(sign_in_page, title="Sign in", url_path="sign-in", default=True), *held]).run()
else:
    page = st.navigation([*NAVIGATION, *(opens(address) for address in OLD_ADDRESSES)])
    st.session_state[SET_BY_LINK] = {}  # what a link sets is said, if it names nothing, in the run it sets it
    st.session_state["_link_page"] = page.url_path  # links are read and written per page (pages/_links.py)
    sidebar()
    page.run()
    said_once(TOLD, st.toast)  # the sidebar's notice was seen by a run that reached its end: a toast says it again
