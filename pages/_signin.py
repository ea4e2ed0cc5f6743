"""Signed-in mode: who acts is a bearer token's holder, in its organization only (the API's tokens).
On when MEMORY_SIGN_IN=1 or the dashboard listens beyond loopback."""

from __future__ import annotations

import ipaddress
import os

import streamlit as st

from memory_core import database_url
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
    """Signed-in mode: asked for (MEMORY_SIGN_IN=1), or forced by listening beyond loopback."""
    if os.environ.get("MEMORY_SIGN_IN", "").strip().lower() in {"1", "true", "yes", "on"}:
        return True
    return not all(_loopback(a) for a in listen_addresses())


def signed_in() -> tuple[str, str] | None:
    """The (person, organization) of the session's token, checked against the database on every run,
    so a revoked or replaced token, or an erased account, signs the session out."""
    token = st.session_state.get(TOKEN_KEY)
    if not token:
        return None
    svc = main_service(database_url())
    caller = svc.token_caller(token)
    if caller is None or caller[0] not in {m["id"] for m in svc.members(caller[1])}:
        del st.session_state[TOKEN_KEY]
        st.session_state["sign_in_refused"] = (
            "Your token was revoked or replaced, or your account is gone: sign in again."
        )
        return None
    return caller


def needs_sign_in() -> bool:
    return sign_in_required() and signed_in() is None


def sign_in_page() -> None:
    """The only page shown in signed-in mode until a valid token is given."""
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
