"""Settings: the owner's alone (R15), their audit, workflows, sign-in links (docs/signin.md), a what-if replay (R16)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd
import streamlit as st

from memory_core import FormatError, MemoryService, Refusal
from memory_core.plain import Obj
from memory_core.rules.settings import SETTINGS
from memory_core.usecases.shapes import IdentityLinkPublic
from memory_core.views import signin, whatif
from memory_core.views.text import JSON, inert
from pages._signin import auth_section, sign_in_required
from pages._tables import wrapped
from pages._ui import MAIN, ask, guard, note_change, notebook, page, people_names, read, read_or_refusal, said_once
from pages._whatif import Sides, compared, switches
from pages._words import caption, cite, markdown, on_off, plural, yes_no

ctx, org = page("Settings")
AUTO_TURNS = 300  # a live what-if replays by itself up to this many turns; beyond, when asked
HOW = {"subject": "issuer and subject (never given to anyone else)", "email": "a verified email address"}
FIELDS = {"issuer": "Issuer", "subject": "Subject", "email": "Verified email", "identity": "The identity"}


def local_time(at: str) -> str:
    """A stored UTC time as the reader's clock shows it (the browser's time zone)."""
    try:
        moment = datetime.fromisoformat(at)
    except ValueError:
        return at
    offset = st.context.timezone_offset  # minutes behind UTC, as the browser says (None in tests)
    if offset is None:
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return (moment - timedelta(minutes=int(offset))).strftime("%Y-%m-%d %H:%M")


def _answers(step: Obj) -> str:
    """What a step answers for a shortcut (R22), or a dash: its subject, relation and threshold."""
    if not (answers := step.get("answers")):
        return "—"
    subject = answers["subject"]
    return f"{subject['name']} ({subject['kind']}) {answers['relation']}, at weight {step['min_weight']:g} or more"


def workflows_section() -> None:
    """The organization's workflows (its setup file's), whose ids an agent's start_run takes (R21, R22)."""
    st.subheader("Workflows")
    if not (flows := read(ctx, MemoryService.workflows, org)):
        st.caption("No workflow yet: `python -m memory_core setup FILE` adds them.")
        return
    for w in flows:
        probes = (w.get("budget") or {}).get("MemoryProbes")
        budget = "no cap on graph reads" if probes is None else f"at most {plural(probes, 'graph read')} a turn"
        markdown(f"**{inert(w['id'])}**: {budget} (R21), {plural(len(w['steps']), 'step')}")
        columns = ["Step", "Kind", "Admits calls (R19)", "Shortcut answers (R22)"]
        if rows := [(s["id"], s["kind"], yes_no(bool(s.get("admits_calls"))), _answers(s)) for s in w["steps"]]:
            wrapped(pd.DataFrame(rows, columns=columns))
    st.caption("An agent lists these with the MCP tool `workflows` and starts a run of one with `start_run`.")


def sign_in_links() -> None:
    """The organization's links, a form to link a member, and one to unlink an identity (R15)."""
    st.subheader("Sign-in")
    if ctx.source != MAIN:
        st.caption("Sign-in links are kept in the database: pick it as the memory in use to see them.")
        return
    section = auth_section()
    caption(
        "People sign in with the organization's identity provider and act as the member linked to their identity, "
        "here only: they see what that member sees, and the owner's rules follow the owner (R15, R29, R30). "
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
    _link_form(section)
    if links:
        _unlink_form({x["id"]: x for x in links})


def _link_form(section: dict[str, JSON]) -> None:
    """Link a member to an identity: an issuer and subject, or a verified email (R15)."""
    members = {m["id"]: m["name"] for m in read(ctx, MemoryService.members, org)}
    how = st.radio(
        "Link a member, identified by", list(HOW), format_func=HOW.__getitem__, key="id_how", horizontal=True
    )
    row = st.container(horizontal=True)  # the fields in a row that wraps: each label whole (#25)
    person = row.selectbox("Member", list(members), format_func=lambda p: f"{members[p]} ({p})", key="id_person")
    if how == "subject":
        st.session_state.setdefault("id_issuer", signin.issuer_of(section, next(iter(signin.providers(section)), None)))
        given = {
            "issuer": row.text_input("Issuer", key="id_issuer", placeholder="https://login.example.com"),
            "subject": row.text_input("Subject (`sub`)", key="id_subject"),
        }
    else:
        given = {"email": row.text_input("Verified email", key="id_email", placeholder="name@example.com")}
    if st.button("Link", key="id_link", type="primary", disabled=not members):
        _link(person, given, members.get(person, person))


def _unlink_form(by_id: dict[int, IdentityLinkPublic]) -> None:
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


def _link(person: str, given: dict[str, str], name: str) -> None:
    try:
        done = ctx.svc.link_identity(person, org=org, by=ctx.person, **given)
    except FormatError as exc:
        st.error(f"Not linked: {FIELDS.get(exc.path, exc.path)} {inert(exc.problem)}. Nothing was changed.")
        return
    words = inert(", ".join(f"{k} {v}" for k, v in given.items()))
    st.session_state["_identity_said"] = (
        f"Linked: {inert(name)} signs in here with {words}."
        if done
        else f"{inert(name)} already signs in with {words}."
    )
    st.rerun()


def save(changes: dict[str, bool], *, note: str, done: str, key: str) -> None:
    """Change the settings (R15), said after the rerun that shows them (`key`) and in a toast."""
    out = ctx.svc.set_settings(org, by=ctx.person or "", settings=changes)
    note_change(ctx, note)
    said = f"{done}: " + ", ".join(f"{c.setting} {on_off(c.new)}" for c in out.changed)
    st.session_state[key] = said + ". The audit below lists it."
    st.toast(said)
    st.rerun()


with guard():
    current = read_or_refusal(ctx, MemoryService.get_settings, org, by=ctx.person or "")
    if isinstance(current, Refusal):  # R15, refused by the facade: said here in the page's words
        st.warning(
            cite(
                f"You act as {ctx.role_label}: only the owner of {inert(ctx.org_name)} reads and changes its "
                "settings and their audit (R15), here as through the API. "
                + ("Ask the owner." if sign_in_required() else "Pick the owner under “Act as” to see them.")
            )
        )
        st.stop()
    st.success(cite(f"You act as the owner of {inert(ctx.org_name)}: you may change these (R15)."))
    if st.session_state.get(f"_settings_shown_{org}") != current:  # changed since: the toggles say them now
        for s in SETTINGS:
            st.session_state[f"set-{org}-{s.name}"] = current[s.name]
            st.session_state[f"wi-live-{org}-{s.name}"] = current[s.name]
        st.session_state[f"_settings_shown_{org}"] = dict(current)
    wanted = {}
    for s in SETTINGS:
        title = cite(f"**{s.name}** ({s.rule})")  # its value is the session's, set above from the settings now
        wanted[s.name] = st.toggle(title, key=f"set-{org}-{s.name}", help=s.meaning)
        st.caption(f"Now **{on_off(current[s.name])}**. {s.meaning} Default: {on_off(s.default)}.")
    changes = {k: v for k, v in wanted.items() if v != current[k]}
    if st.button("Save settings", key="save_settings", type="primary", disabled=not changes):
        note = "Settings page: " + ", ".join(f"{k} {on_off(v)}" for k, v in changes.items())
        save(changes, note=note, done="Saved", key="_settings_saved")
    said_once("_settings_saved")

    st.subheader("Audit")
    if audit := read(ctx, MemoryService.audit, org, by=ctx.person):
        names = people_names(ctx)
        lines = [
            f"- {local_time(a['at'])} · "
            + (inert(names.get(a["by"], a["by"])) if a["by"] else cite("an erased account (R30)"))
            + f": **{a['setting']}** {on_off(a['from'])} → {on_off(a['to'])}"
            for a in reversed(audit)
        ]
        st.markdown("\n".join(lines))
        st.caption("Newest first, in your local time.")
    else:
        st.caption("No change recorded yet.")
    workflows_section()
    sign_in_links()

st.subheader("What if?")
nb = notebook()
sources = ["live"] + (["notebook"] if nb else [])
replays = {
    "live": f"the recorded history of {inert(ctx.org_name)}",
    "notebook": "the notebook's scenario, from its start",
}
source = st.radio("Replay", sources, format_func=replays.__getitem__, horizontal=True, key="wi_source")
gaps: list[str] = []
if source == "live":
    turns = sum(len(r["turns"]) for r in read(ctx, MemoryService.runs, org))
    if turns > AUTO_TURNS and not st.session_state.get(f"wi_go_{org}"):
        st.caption(
            f"{inert(ctx.org_name)} has {turns:,} turns on record: replaying them twice takes a while, so it runs when "
            "you ask."
        )
        if st.button(f"Replay {turns:,} turns under other settings", key="wi_go"):
            st.session_state[f"wi_go_{org}"] = True
            st.rerun()
        st.stop()
    doc, gaps = read(ctx, whatif.history_of, org, by=ctx.person)  # read again only once memory changed
    target = org
    base = dict(current)
    caption(
        "Replays this organization's memory as it is (its export: every moment in order, replaced turns "
        "replaced, R3) in a private sandbox, and again with each setting you flip held from the start (its "
        "recorded changes left out); memory itself does not change (R16)."
    )
else:
    assert nb is not None
    doc = nb.scenario
    org_ids = [o["id"] for o in doc.get("organizations", [])]
    target = st.selectbox("Organization of the notebook", org_ids, key="wi_org")
    base = whatif.initial_settings(doc, target)
    caption(
        "Replays the whole notebook from its start under the settings you pick; set-settings cells in the "
        "notebook still apply where they stand (R16)."
    )
named = {o["id"]: o.get("name") or o["id"] for o in doc.get("organizations", [])}
sides = Sides(live=source == "live", org_name=ctx.org_name if source == "live" else named.get(target, target))
alt = switches(source, target, base, sides)
flipped = [k for k in alt if alt[k] != base[k]]
compared(ctx, doc, target, alt, flipped=bool(flipped), sides=sides)
if gaps:
    with st.expander(f"What the replay cannot put back ({len(gaps)})"):
        markdown("\n".join(f"- {inert(g)}" for g in gaps))
        caption(
            "Erased runs' records are gone (R17, R29), so their votes, kept in the live weights, are not in "
            "either replay: both sides are compared without them."
        )
said_once("_wi_applied")
if source == "live" and flipped:  # the owner's alone: anyone else was refused above (R15)
    change = ", ".join(f"{k} {on_off(alt[k])}" for k in flipped)
    if st.button("Apply these settings: " + change, key="wi_apply", type="primary"):
        st.session_state["_wi_confirm"] = change
    question = cite(
        f"Apply {change} to {inert(ctx.org_name)} now? Every turn that ends from now on learns under "
        "them (R11 to R14); the audit keeps who changed what (R15)."
    )
    if st.session_state.get("_wi_confirm") == change and ask(
        "_wi_confirm", question, ("Apply", "wi_apply_yes"), ("Keep them as they are", "wi_apply_no")
    ):
        del st.session_state["_wi_confirm"]
        with guard():
            new = {k: alt[k] for k in flipped}
            save(new, note="Settings page what-if applied: " + change, done="Applied", key="_wi_applied")
