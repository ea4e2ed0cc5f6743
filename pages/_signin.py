"""Signed-in mode (an identity provider, docs/signin.md; MEMORY_SIGN_IN=1; beyond loopback): who acts, each run."""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from memory_core import MemoryService, database_url
from memory_core.errors import NotMember, UnknownPerson
from memory_core.usecases.shapes import Member
from memory_core.views import signin
from memory_core.views.text import JSON, inert
from pages._links import addresses
from pages._live import read_at, version_at
from pages._words import refusal

A = TypeVar("A")
R = TypeVar("R")
TOKEN_KEY = "signed_in_token"
ISSUE = "python -m memory_core token issue PERSON --org ORG"
AS_KEY = "signed_in_as"  # the (person, organization) this session last acted as
ORG_KEY = "signed_org"  # the organization chosen among those the identity is linked in
REFUSED_KEY = "identity_refused"
BACK_KEY = "_identity_link_back"  # the link a sign-in interrupted was reopened (once a session)

#: The provider's round trip ends at `/`: the address a signed-out person opened is kept in the tab
#: (sessionStorage) and opened again, as a link of the app is, at the first run signed in (#26).
_KEEP = """<script>
(function () {
  var pages = %s, page = location.pathname.replace(/\\/+$/, "").split("/").pop();
  if (pages.indexOf(page) >= 0) { sessionStorage.setItem("memory-explorer-link", location.pathname + location.search); }
  else { sessionStorage.removeItem("memory-explorer-link"); }
})();
</script>"""
_BACK = """<script>
(function () {
  var link = sessionStorage.getItem("memory-explorer-link");
  sessionStorage.removeItem("memory-explorer-link");
  if (!link || link === location.pathname + location.search) { return; }
  window.history.replaceState(null, "", link);
  window.dispatchEvent(new PopStateEvent("popstate"));
})();
</script>"""


@st.cache_resource(show_spinner=False)
def main_service(url: str) -> MemoryService:
    """The engine of the configured database, one per process (a cached resource every page shares)."""
    return MemoryService.at(url)


def auth_section() -> dict[str, JSON]:
    """The `[auth]` section of the secrets, or {} when none is configured."""
    try:
        if not st.secrets.load_if_toml_exists() or "auth" not in st.secrets:
            return {}
        return dict(st.secrets["auth"].to_dict())  # plain dicts, nested too
    except Exception:  # noqa: BLE001  (a secrets file Streamlit cannot read: it logs why; `auth` no table: no provider)
        return {}


def _loopback(address: str) -> bool:
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().split("%")[0]).is_loopback
    except ValueError:
        return False


def sign_in_required() -> bool:
    """Signed-in: an identity provider, MEMORY_SIGN_IN=1, or listening beyond loopback (MEMORY_LISTEN, address)."""
    asked = os.environ.get("MEMORY_SIGN_IN", "").strip().lower() in {"1", "true", "yes", "on"}
    listens = [os.environ.get("MEMORY_LISTEN", "127.0.0.1"), str(st.get_option("server.address") or "")]
    return bool(auth_section()) or asked or not all(_loopback(a) for a in listens)


def _logged_in() -> bool:
    """Whether the browser holds the identity provider's sign-in (Streamlit's identity cookie)."""
    return st.user.to_dict().get("is_logged_in") is True


def _claims() -> dict[str, object]:
    return signin.claims_of(st.user.to_dict()) if _logged_in() else {}


def _callers() -> dict[str, str]:
    """Organization -> the person the signed-in identity acts as there, asked again once memory's version moved."""
    return dict(_kept(MemoryService.identity_callers, said)) if (said := _claims()) else {}


def _kept(what: Callable[[MemoryService, A], R], arg: A) -> R:
    """`what` of the database kept under memory's version (pages/_live.read_at): who acts is asked several times a run."""
    svc = main_service(database_url())
    return read_at(svc, version_at(svc, database_url()), what, arg)


def _identity_signed_in() -> tuple[str, str] | None:
    """The (person, organization) the identity acts as; unlinked or erased (R30), no one, and told."""
    found = _callers()
    was = st.session_state.get(AS_KEY)
    if not found:
        if was:
            del st.session_state[AS_KEY]
            erased = was[0] not in {p["id"] for p in main_service(database_url()).people()}
            gone = UnknownPerson.signed_out(was[0]) if erased else NotMember.unlinked(signin.identity_words(_claims()))
            st.session_state[REFUSED_KEY] = refusal(gone)
        return None
    org = st.session_state.get(ORG_KEY)
    if org not in found:
        org = was[1] if was and was[1] in found else next(iter(found))
    st.session_state[AS_KEY] = (found[org], org)
    st.session_state.pop(REFUSED_KEY, None)
    return found[org], org


def signed_in() -> tuple[str, str] | None:
    """Who the session acts as, and where, checked on every run: the identity's member, or the token's holder."""
    if auth_section():
        return _identity_signed_in()
    if not (token := st.session_state.get(TOKEN_KEY)):
        return None
    caller = _kept(MemoryService.token_caller, token)  # a token revoked, or a member gone, moves the version
    if caller is None or caller[0] not in {m["id"] for m in _kept(MemoryService.members, caller[1])}:
        del st.session_state[TOKEN_KEY]
        st.session_state["sign_in_refused"] = (
            "Your token was revoked or replaced, or your account is gone: sign in again."
            if caller is None
            else f"{inert(caller[0])} is no longer a member of {inert(caller[1])}, where your token signs in (R20): "
            "ask that organization's owner, or sign in with a token of an organization you belong to."
        )
        return None
    return caller


def sign_in_page() -> None:
    """The only page signed-in mode shows until the session acts as someone: the provider's or the token's."""
    section = auth_section()
    problems = signin.auth_problems(section) if section else []
    if problems:
        st.title("Sign in")
        st.error("Sign-in with the identity provider is not set up:\n\n" + "\n".join(f"- {p}" for p in problems))
        st.caption("The operator fixes `.streamlit/secrets.toml` and restarts the dashboard (docs/signin.md).")
    elif not section:
        _token_page()
    elif not _logged_in():
        _signed_out(section)
    else:
        _not_linked()


def _token_page() -> None:
    """A bearer token, the preferences API's, signs in as its holder in its organization."""
    st.title("Sign in")
    st.markdown(
        "This dashboard requires a bearer token: the same tokens as the preferences API. Ask your organization's "
        f"owner for one, issued with `{ISSUE}`. You then act as yourself, in that organization only."
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
    if refused := st.session_state.get("sign_in_refused"):
        st.error(refused)


def _signed_out(section: dict[str, JSON]) -> None:
    """A button per provider; the link this tab opened is kept for the run after the sign-in (#26)."""
    st.title("Sign in")
    st.markdown(
        "This dashboard signs you in with your organization's identity provider. You then act as the "
        "person your organization's owner linked to your identity, in that organization only."
    )
    st.html(_KEEP % json.dumps(addresses()), unsafe_allow_javascript=True)
    for name in signin.providers(section):
        label = "Sign in" if name is None else f"Sign in with {name}"
        if st.button(label, type="primary", key=f"login_{name or 'default'}"):
            st.login(name)


def _not_linked() -> None:
    """Signed in with an identity linked to no one (R20): who it is, who can link it, and Sign out."""
    said = _claims()
    st.title("Not linked")
    st.error(st.session_state.get(REFUSED_KEY) or refusal(NotMember.unlinked(signin.identity_words(said))))
    verified = said.get("email_verified") is True
    st.markdown(
        f"You signed in as **{inert(said.get('name') or said.get('sub') or 'someone')}**: issuer "
        f"{inert(said.get('iss', ''))}, subject {inert(said.get('sub', ''))}"
        + (f", email {inert(said['email'])} ({'verified' if verified else 'not verified'})" if "email" in said else "")
        + ". Give these to your organization's owner, who links you on the Settings page (Sign-in), or ask "
        "whoever runs this dashboard to run:"
    )
    st.code(
        f"python -m memory_core identity link PERSON --org ORG --issuer {said.get('iss', 'ISSUER')} "
        f"--subject {said.get('sub', 'SUBJECT')}",
        language="bash",
    )
    if st.button("Sign out", key="sign_out_identity"):
        st.logout()


def signed_in_box(names: dict[str, str], members: list[Member], person: str, org: str) -> None:
    """The sidebar of a signed-in session: who, where, how, and Sign out (no "Act as"); `names`: organizations'."""
    member = next((m for m in members if m["id"] == person), {"name": person, "role": "member"})
    provider = bool(auth_section())
    how = _provider_box(org, names) if provider else "by your token"
    st.markdown(
        f"Signed in as **{inert(member['name'])}** ({inert(member['role'])}) in **{inert(names.get(org, org))}** "
        f"(`{inert(org)}`), {how}."
    )
    if st.button("Sign out", key="sign_out"):
        if provider:
            st.logout()
            return
        del st.session_state[TOKEN_KEY]
        st.rerun()


def _provider_box(org: str, names: dict[str, str]) -> str:
    """Signed in with the identity provider: the link the sign-in interrupted reopened, the organizations linked."""
    if not st.session_state.get(BACK_KEY):
        st.session_state[BACK_KEY] = True
        st.html(_BACK, unsafe_allow_javascript=True)
    found = _callers()
    if len(found) > 1:
        st.session_state[ORG_KEY] = org
        st.selectbox("Organization", list(found), format_func=lambda o: f"{names.get(o, o)} ({o})", key=ORG_KEY)
    return f"with your identity provider as {inert(signin.shown_as(_claims()))}"
