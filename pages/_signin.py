"""Signed-in mode (an identity provider configured, MEMORY_SIGN_IN=1, or listening beyond loopback): who
acts is the member linked to the identity signed in (pages/_identity.py), or else a bearer token's holder."""

from __future__ import annotations

import ipaddress
import os

import streamlit as st

from memory_core import MemoryService, database_url
from memory_core.views.text import inert
from pages import _identity
from pages._service import main_service

TOKEN_KEY = "signed_in_token"
ISSUE = "python -m memory_core token issue PERSON --org ORG"


def _loopback(address: str) -> bool:
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().split("%")[0]).is_loopback
    except ValueError:
        return False


def listen_addresses() -> list[str]:
    """Where the dashboard says it listens: MEMORY_LISTEN and Streamlit's server.address (none: every interface)."""
    return [os.environ.get("MEMORY_LISTEN", "127.0.0.1"), str(st.get_option("server.address") or "")]


def sign_in_required() -> bool:
    """Signed-in mode: an identity provider configured, MEMORY_SIGN_IN=1, or listening beyond loopback."""
    asked = os.environ.get("MEMORY_SIGN_IN", "").strip().lower() in {"1", "true", "yes", "on"}
    return _identity.configured() or asked or not all(_loopback(a) for a in listen_addresses())


def signed_in() -> tuple[str, str] | None:
    """Who the session acts as, and where, checked on every run: the identity's member, or the token's holder."""
    if _identity.configured():
        return _identity.signed_in()
    token = st.session_state.get(TOKEN_KEY)
    if not token:
        return None
    svc = main_service(database_url())
    caller = svc.token_caller(token)
    if caller is None or caller[0] not in {m["id"] for m in svc.members(caller[1])}:
        del st.session_state[TOKEN_KEY]
        st.session_state["sign_in_refused"] = (
            "Your token was revoked or replaced, or your account is gone: sign in again."
            if caller is None
            else f"{inert(caller[0])} is no longer a member of {inert(caller[1])}, where your token signs in (R20): "
            "ask that organization's owner, or sign in with a token of an organization you belong to."
        )
        return None
    return caller


def needs_sign_in() -> bool:
    return sign_in_required() and signed_in() is None


def sign_in_page() -> None:
    """The only page signed-in mode shows until the session acts as someone: the provider's or the token's."""
    if _identity.configured():
        _identity.sign_in_page()
        return
    st.title("Sign in")
    st.markdown(
        "This dashboard requires a bearer token: the same tokens as the preferences API. "
        f"Ask your organization's owner for one, issued with `{ISSUE}`. "
        "You then act as yourself, in that organization only."
    )
    with st.form("sign_in"):
        token = st.text_input("Token", type="password", key="sign_in_input", placeholder="mem_…")
        go = st.form_submit_button("Sign in", type="primary", key="sign_in_go")
    if go:
        caller = main_service(database_url()).token_caller(token.strip()) if token.strip() else None
        if caller is None:
            st.session_state["sign_in_refused"] = (
                f"This token is unknown or revoked: nothing was opened. Check it, or ask for a new one (`{ISSUE}`)."
            )
        else:
            st.session_state[TOKEN_KEY] = token.strip()
            st.session_state.pop("sign_in_refused", None)
            st.rerun()
    refused = st.session_state.get("sign_in_refused")
    if refused:
        st.error(refused)


def signed_in_box(svc: MemoryService, person: str, org: str) -> None:
    """The sidebar of a signed-in session: who, where, how, and Sign out (no "Act as")."""
    names = {o["id"]: o["name"] for o in svc.organizations()}
    member = next((m for m in svc.members(org) if m["id"] == person), {"name": person, "role": "member"})
    if _identity.configured():
        _identity.signed_in_box(org, names, member["name"], member["role"])
        return
    st.markdown(
        f"Signed in as **{inert(member['name'])}** ({inert(member['role'])}) in **{inert(names.get(org, org))}** "
        f"(`{inert(org)}`), by your token."
    )
    if st.button("Sign out", key="sign_out"):
        del st.session_state[TOKEN_KEY]
        st.rerun()
