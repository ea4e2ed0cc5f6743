"""Settings, for the owner: each member linked to an identity of the organization's identity provider
(an issuer and subject, or a verified email), as whom they then sign in there only (docs/signin.md)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memory_core import FormatError, MemoryService
from memory_core.usecases.shapes import IdentityLinkPublic
from memory_core.views import signin
from memory_core.views.text import JSON, inert
from pages._signin import auth_section
from pages._tables import wrapped
from pages._ui import MAIN, Context, read, said_once
from pages._words import caption

FIELDS = {"issuer": "Issuer", "subject": "Subject", "email": "Verified email", "identity": "The identity"}
HOW = {"subject": "issuer and subject (never given to anyone else)", "email": "a verified email address"}


def sign_in_links(ctx: Context, org: str) -> None:
    """The organization's links, a form to link a member, and one to unlink an identity (R15)."""
    st.subheader("Sign-in")
    if ctx.source != MAIN:
        st.caption("Sign-in links are kept in the database: pick it as the memory in use to see them.")
        return
    section = auth_section()
    caption(
        "People sign in with the organization's identity provider and act as the member linked to their "
        "identity, here only: they see what that member sees, and the owner's rules follow the owner (R15, "
        "R29, R30). "
        + (
            "This dashboard signs in with the provider set in `.streamlit/secrets.toml`."
            if section
            else "No identity provider is set up yet (`[auth]` in `.streamlit/secrets.toml`, docs/signin.md): "
            "links made now count once it is."
        )
    )
    said_once("_identity_said")
    links = read(ctx, MemoryService.identity_links, org, by=ctx.person)
    if links:
        rows = [(f"{x['person_name']} ({x['person']})", x["identity"], x["linked_at"]) for x in links]
        wrapped(pd.DataFrame(rows, columns=["Person", "Identity", "Linked"]))
    else:
        st.caption("No one is linked yet.")
    _link_form(ctx, org, section)
    if links:
        _unlink_form(ctx, org, {x["id"]: x for x in links})


def _link_form(ctx: Context, org: str, section: dict[str, JSON]) -> None:
    """Link a member to an identity: an issuer and subject, or a verified email (R15)."""
    members = {m["id"]: m["name"] for m in read(ctx, MemoryService.members, org)}
    how = st.radio(
        "Link a member, identified by", list(HOW), format_func=HOW.__getitem__, key="id_how", horizontal=True
    )
    row = st.container(horizontal=True)  # the fields in a row that wraps: each label whole (#25)
    person = row.selectbox("Member", list(members), format_func=lambda p: f"{members[p]} ({p})", key="id_person")
    if how == "subject":
        if "id_issuer" not in st.session_state:
            st.session_state["id_issuer"] = signin.issuer_of(section, next(iter(signin.providers(section)), None))
        given = {
            "issuer": row.text_input("Issuer", key="id_issuer", placeholder="https://login.example.com"),
            "subject": row.text_input("Subject (`sub`)", key="id_subject"),
        }
    else:
        given = {"email": row.text_input("Verified email", key="id_email", placeholder="name@example.com")}
    if st.button("Link", key="id_link", type="primary", disabled=not members):
        _link(ctx, org, person, given, members.get(person, person))


def _unlink_form(ctx: Context, org: str, by_id: dict[int, IdentityLinkPublic]) -> None:
    """Unlink one of the organization's identities (R15): a session signed in with it acts as no one."""
    gone = st.container(horizontal=True, vertical_alignment="bottom")
    said = {i: f"{x['person_name']}: {x['identity']}" for i, x in by_id.items()}
    chosen = gone.selectbox("Linked identity", list(said), format_func=said.__getitem__, key="id_unlink_pick")
    if gone.button("Unlink", key="id_unlink"):
        x = by_id[chosen]
        given = {"email": x["key"]} if x["kind"] == "email" else {"issuer": x["issuer"], "subject": x["key"]}
        ctx.svc.unlink_identity(org=org, by=ctx.person, **given)
        st.session_state["_identity_said"] = (
            f"Unlinked: {inert(x['identity'])} no longer signs in as {inert(x['person_name'])}; a session "
            "signed in with it acts as no one from its next click."
        )
        st.rerun()


def _link(ctx: Context, org: str, person: str, given: dict[str, str], name: str) -> None:
    try:
        done = ctx.svc.link_identity(person, org=org, by=ctx.person, **given)
    except FormatError as exc:
        st.error(f"Not linked: {FIELDS.get(exc.path, exc.path)} {inert(exc.problem)}. Nothing was changed.")
        return
    words = inert(", ".join(f"{k} {v}" for k, v in given.items()))
    said = (
        f"Linked: {inert(name)} signs in here with {words}."
        if done
        else f"{inert(name)} already signs in with {words}."
    )
    st.session_state["_identity_said"] = said
    st.rerun()
