"""Signed in with the organization's identity provider (st.login, `[auth]` in `.streamlit/secrets.toml`,
docs/signin.md): whom an identity acts as is the member linked to it, checked on every run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

import streamlit as st

from memory_core import database_url
from memory_core.errors import NotMember, UnknownPerson
from memory_core.views import signin
from memory_core.views.text import inert
from pages._links import addresses
from pages._service import main_service
from pages._words import refusal

if TYPE_CHECKING:
    from memory_core.views.text import JSON

AS_KEY = "signed_in_as"  # the (person, organization) this session last acted as
ORG_KEY = "signed_org"  # the organization chosen among those the identity is linked in
REFUSED_KEY = "identity_refused"
CALLERS_KEY = "_identity_callers"  # (memory's version and the claims, whom they act as)
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


def auth_section() -> dict[str, JSON]:
    """The `[auth]` section of the secrets, or {} when none is configured."""
    try:
        if not st.secrets.load_if_toml_exists() or "auth" not in st.secrets:
            return {}
        return _plain(st.secrets["auth"])
    except Exception:  # noqa: BLE001  (a secrets file Streamlit cannot read: it logs why; no provider)
        return {}


def _plain(section: Mapping[str, object]) -> dict[str, JSON]:
    return {k: _plain(v) if isinstance(v, Mapping) else cast("JSON", v) for k, v in section.items()}


def configured() -> bool:
    return bool(auth_section())


def logged_in() -> bool:
    """Whether the browser holds the identity provider's sign-in (Streamlit's identity cookie)."""
    return st.user.to_dict().get("is_logged_in") is True


def claims() -> dict[str, object]:
    return signin.claims_of(st.user.to_dict()) if logged_in() else {}


def callers() -> dict[str, str]:
    """Organization -> the person the signed-in identity acts as there, asked again once memory's version moved."""
    said = claims()
    if not said:
        return {}
    svc = main_service(database_url())
    version = svc.version()
    key = (version, sorted((k, repr(v)) for k, v in said.items()))
    kept = st.session_state.get(CALLERS_KEY)
    if version is not None and kept is not None and kept[0] == key:
        return dict(kept[1])
    found = svc.identity_callers(said)
    st.session_state[CALLERS_KEY] = (key, found)
    return dict(found)


def signed_in() -> tuple[str, str] | None:
    """The (person, organization) the identity acts as; unlinked or erased (R30), no one, and told."""
    found = callers()
    was = st.session_state.get(AS_KEY)
    if not found:
        if was:
            del st.session_state[AS_KEY]
            person = was[0]
            erased = person not in {p["id"] for p in main_service(database_url()).people()}
            gone = UnknownPerson.signed_out(person) if erased else NotMember.unlinked(signin.identity_words(claims()))
            st.session_state[REFUSED_KEY] = refusal(gone)
        return None
    org = st.session_state.get(ORG_KEY)
    if org not in found:
        org = was[1] if was and was[1] in found else next(iter(found))
    st.session_state[AS_KEY] = (found[org], org)
    st.session_state.pop(REFUSED_KEY, None)
    return found[org], org


def sign_in_page() -> None:
    """Signed out: a button per provider; signed in with an identity linked to no one, a page saying so (R20)."""
    section = auth_section()
    problems = signin.auth_problems(section)
    if problems:
        st.title("Sign in")
        st.error("Sign-in with the identity provider is not set up:\n\n" + "\n".join(f"- {p}" for p in problems))
        st.caption("The operator fixes `.streamlit/secrets.toml` and restarts the dashboard (docs/signin.md).")
    elif not logged_in():
        _signed_out(section)
    else:
        _not_linked()


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
    said = claims()
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


def signed_in_box(org: str, names: dict[str, str], name: str, role: str) -> None:
    """The sidebar signed in with the identity provider: who, where, the organizations linked, Sign out."""
    if not st.session_state.get(BACK_KEY):
        st.session_state[BACK_KEY] = True
        st.html(_BACK, unsafe_allow_javascript=True)
    found = callers()
    if len(found) > 1:
        st.session_state[ORG_KEY] = org
        st.selectbox("Organization", list(found), format_func=lambda o: f"{names.get(o, o)} ({o})", key=ORG_KEY)
    st.markdown(
        f"Signed in as **{inert(name)}** ({inert(role)}) in **{inert(names.get(org, org))}** "
        f"(`{inert(org)}`), with your identity provider as {inert(signin.shown_as(claims()))}."
    )
    if st.button("Sign out", key="sign_out"):
        st.logout()
