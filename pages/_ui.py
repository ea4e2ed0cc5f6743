"""What every page shares: the memory in use, who acts (signed in, or "Act as"), reads kept, errors as messages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

import streamlit as st

from memory_core import MemoryCoreError, MemoryService, Refusal, database_url
from memory_core.usecases.shapes import PersonPublic
from memory_core.views import notebook as nbk
from memory_core.views.notebook_file import scrub_erased
from memory_core.views.text import inert
from pages._links import dropped, from_link, same_tab, to_link
from pages._live import LIVE_EVERY, Read, Version, drawn, every, follow, read_at, unfollow, version_at
from pages._signin import main_service, sign_in_required, signed_in, signed_in_box
from pages._words import refusal

P = ParamSpec("P")
R = TypeVar("R")

MAIN = "main"
NOTEBOOK = "notebook"


@dataclass
class Context:
    svc: MemoryService
    memory: str  # the database in use: its URL (a notebook's scratch file, or the configured database)
    source: str  # MAIN or NOTEBOOK
    org: str | None
    org_name: str
    person: str | None
    role: str | None

    @property
    def role_label(self) -> str:
        """The acting person's role here, in words."""
        if self.person == VISITOR:
            return "a visitor, with no account"
        return {"owner": "the owner", "member": "a member"}.get(self.role or "", "someone who is not a member here")


def notebook() -> nbk.Notebook | None:
    return st.session_state.get("notebook")


def _memory(source: str) -> tuple[MemoryService, str]:
    """The service of the memory `source` names, and that memory's URL (a notebook's scratch file, or the database)."""
    nb = notebook()
    if source == NOTEBOOK and nb is not None:
        return nb.service, nb.db
    return main_service(database_url()), database_url()


def keep(key: str, options: list[str] | list[int]) -> None:
    """A remembered choice that is no longer an option falls back to the first one."""
    if options and st.session_state.get(key) not in options:
        st.session_state[key] = options[0]


def _notebook_from_link() -> nbk.Notebook | None:
    """A link made on a notebook's memory (`?mem=notebook&nb=ID`) reopens it as the memory in use."""
    nb_id = st.query_params.get("nb")
    if not nb_id or st.query_params.get("mem") != NOTEBOOK or notebook() is not None:
        return None
    reopened, why = reopen_linked(nb_id)
    if why:
        st.warning(f"The notebook this link names was not reopened: {why}.")
    if reopened is None:  # the page shows the database
        del st.query_params["mem"], st.query_params["nb"]
    else:
        st.session_state.update(notebook=reopened, nb_id=nb_id, memory_source=NOTEBOOK)
    return reopened


def reopen_linked(nb_id: str) -> tuple[nbk.Notebook | None, str]:
    """The notebook a link names, or why not: damaged, or, signed in, not the caller's (#40)."""
    return nbk.reopen_for(nb_id, main_service(database_url()), signed_in() if sign_in_required() else None)


def _notebook_from_elsewhere() -> None:
    """The session's notebook, read again when another tab or window saved it since (#26)."""
    nb = notebook()
    if nb is None or not nb.changed_elsewhere():
        return
    again, why = reopen_linked(nb.id)
    if why:
        st.warning(f"This notebook changed elsewhere and cannot be read again: {why}.")
        return
    st.session_state["notebook"] = again  # None: its files went with the run it was made from (R29-R31)
    st.session_state[TOLD] = (
        "This notebook was changed in another tab or window: you see its latest cells and results."
        if again
        else "This notebook's files were removed: the run it was made from was erased (R31)."
    )


#: A notice kept until a run of the page reaches its end (app.py): a rerun would replace what it drew.
TOLD = "_nb_changed_elsewhere"


def sidebar() -> None:
    """Draw the shared sidebar; the choices live in session state and hold across pages and reruns."""
    unfollow()
    scrub_erased(main_service(database_url()))  # notebooks of runs erased since (R29-R31)
    _notebook_from_elsewhere()
    if TOLD in st.session_state:
        st.info(st.session_state[TOLD])
    nb = _notebook_from_link() or notebook()
    title = (nb.scenario.get("title") or "untitled") if nb else None
    caller = signed_in() if sign_in_required() else None
    with st.sidebar:
        st.markdown("### Memory Explorer")
        source = _source(nb, title)
        svc, where = _memory(source)
        _who(svc, where, caller=caller if source == MAIN else None, signing_in=caller is not None)
        st.caption(f"Scenario loaded: **{inert(title)}**" if nb else "Scenario loaded: none (open the Notebook)")
        st.caption(f"Database: `{where}`")
        same_tab()  # links to the app's own pages (a rule, a record) open in this tab and session
        if source == MAIN:
            _read_servers(svc)


def _source(nb: nbk.Notebook | None, title: str | None) -> str:
    """The memory chosen (the database, or the open notebook), kept in the address: a link then opens it there."""
    sources = [MAIN] + ([NOTEBOOK] if nb else [])
    if "_pending_source" in st.session_state:  # a page asked to switch before the radio was drawn
        st.session_state["memory_source"] = st.session_state.pop("_pending_source")
    keep("memory_source", sources)
    names = {MAIN: "Database", NOTEBOOK: f"Notebook: {inert(title)}"}
    source: str = st.radio("Memory in use", sources, format_func=names.__getitem__, key="memory_source")
    if source == NOTEBOOK and nb is not None:
        st.query_params["mem"], st.query_params["nb"] = NOTEBOOK, nb.id
    elif "mem" in st.query_params:
        del st.query_params["mem"]
    return source


def _who(svc: MemoryService, where: str, *, caller: tuple[str, str] | None, signing_in: bool) -> None:
    """Who acts: the signed-in person on the database, else anyone "Act as" offers (in a notebook, or the demo)."""
    at = version_at(svc, where)  # the organizations and people as the pages read them, kept under memory's version
    if caller is not None:
        signed_in_box(_orgs(svc, at), read_at(svc, at, MemoryService.members, caller[1]), *caller)
        return
    from_link(SIDEBAR_LINK)
    _act_as(svc, where, at)
    to_link(SIDEBAR_LINK)
    st.caption(
        "The notebook's own scratch memory, built from the scenario you opened: acting as anyone "
        "there changes nothing in the database."
        if signing_in
        else "Local demo: anyone at this machine may act as anyone. Set MEMORY_SIGN_IN=1 to require a "
        "bearer token (it is required when the dashboard listens beyond this machine)."
    )


def _read_servers(svc: MemoryService) -> None:
    """With a standby (MEMORY_READ_DATABASE_URL): where these pages read, or that the primary is down."""
    servers = svc.read_servers()
    if servers["standby"] is not None and servers["primary_down"]:
        st.warning(
            "The primary database cannot be reached: these pages show memory as its standby holds it, and "
            "nothing can be changed until the primary is back."
        )
    elif servers["standby"] is not None:
        st.caption(f"Reads from the standby `{inert(servers['standby'])}` once it holds your changes.")


#: "Act as" a visitor: someone with no account here, so every refusal for outsiders can be seen.
VISITOR = "(visitor)"
SIDEBAR_LINK = {"org": "org", "as": "person"}


def _act_as(svc: MemoryService, memory: str, at: Version | None) -> None:
    """The demo's choices: any organization, and anyone, member or not (#25: never silently someone else)."""
    org_names = _orgs(svc, at)
    if org_names and st.session_state.get("org") not in org_names:
        dropped("org", f"{inert(next(iter(org_names.values())))} instead")
    keep("org", list(org_names))
    if org_names:
        st.selectbox("Organization", list(org_names), format_func=lambda o: f"{org_names[o]} ({o})", key="org")
    org: str = st.session_state.get("org") or ""
    label, owner = _people_labels(read_at(svc, at, MemoryService.people), org)
    _settle_person(memory, label, owner)
    _say_lost_or_moved(owner)
    chosen = st.selectbox("Act as", list(label), format_func=label.__getitem__, key="person")
    # Said again below the box, from this run: the box's text can lag a switch of organization.
    st.caption(f"You act as **{inert(label[chosen])}** in {inert(org_names.get(org, org or ''))}.")


def _people_labels(people: list[PersonPublic], org: str) -> tuple[dict[str, str], tuple[str, str, str] | None]:
    """Everyone "Act as" offers (members, the owner first; others; a visitor), and the owner (id, name, role)."""
    members = sorted((p for p in people if org in p["roles"]), key=lambda p: p["roles"][org] != "owner")
    label = {p["id"]: f"{p['name']} ({p['roles'][org]})" for p in members}
    label |= {p["id"]: f"{p['name']} (not a member here)" for p in people if org not in p["roles"]}
    label[VISITOR] = "a visitor (no account)"
    return label, (members[0]["id"], members[0]["name"], members[0]["roles"][org]) if members else None


def _settle_person(memory: str, label: dict[str, str], owner: tuple[str, str, str] | None) -> None:
    """Before "Act as": the person offered, else kept if listed, else the owner (a first visit) or a visitor."""
    if "_pending_person" in st.session_state:  # the offer below, taken before the selectbox is drawn
        st.session_state["person"] = st.session_state.pop("_pending_person")
    current = st.session_state.get("person")
    switched = st.session_state.get("_acting_memory", memory) != memory  # another memory opened (a notebook)
    st.session_state["_acting_memory"] = memory
    if current in label:
        return
    someone = current not in (None, VISITOR)
    if (current is None or switched) and owner:  # the first visit, or a memory without them: its owner
        st.session_state["person"] = owner[0]
        if someone:
            st.session_state["identity_moved"] = (current, owner[1])
        return
    if someone:
        st.session_state["identity_lost"] = current
    st.session_state["person"] = VISITOR


def _say_lost_or_moved(owner: tuple[str, str, str] | None) -> None:
    """Who was not found in this memory: a visitor now, offered its owner; or moved to its owner, said once."""
    lost = st.session_state.get("identity_lost")
    if lost and st.session_state["person"] == VISITOR:
        st.warning(
            f"{inert(lost)} is not in this memory (an erased account, or a notebook without them): "
            "you act as a visitor until you pick someone."
        )
        if owner and st.button(f"Act as {owner[1]} ({owner[2]})", key="act_as_offer"):
            st.session_state["_pending_person"] = owner[0]
            st.rerun()
    elif lost:
        del st.session_state["identity_lost"]
    if moved := st.session_state.pop("identity_moved", None):
        st.info(f"{inert(moved[0])} is not in the memory now in use: you act as {inert(moved[1])}, its owner.")


def use_memory(source: str) -> None:
    """Switch the memory in use from inside a page (applied when the sidebar is next drawn)."""
    st.session_state["_pending_source"] = source


def open_notebook(nb: nbk.Notebook) -> None:
    """Make `nb` the open notebook and the memory in use, kept on disk under its id."""
    nb.author = (signed_in() or (None,))[0] if sign_in_required() else None  # it opens for its author (#40)
    st.session_state.update(notebook=nb, nb_id=nb.id)
    st.session_state.pop("_nb_confirm_load", None)
    use_memory(NOTEBOOK)
    nb.save()


def context() -> Context:
    """The current choices, from session state (plain data), with the service they name."""
    source = st.session_state.get("memory_source", MAIN)
    svc, memory = _memory(source)
    at = version_at(svc, memory)
    orgs, org, person = _chosen(_orgs(svc, at), signing_in=source == MAIN and sign_in_required())
    members = {m["id"]: m["role"] for m in read_at(svc, at, MemoryService.members, org)} if org else {}
    person = next(iter(members), None) if person is None else person  # before the sidebar chose: the owner
    return Context(svc, memory, source, org, orgs.get(org or "", ""), person, members.get(person or ""))


def _chosen(orgs: dict[str, str], *, signing_in: bool) -> tuple[dict[str, str], str | None, str | None]:
    """The organizations offered, the one chosen and the person: signing in, the token's alone, nothing else."""
    org, person = st.session_state.get("org"), st.session_state.get("person")
    if signing_in:
        person, org = signed_in() or (None, None)
        orgs = {org: orgs[org]} if org in orgs else {}
    return orgs, org if org in orgs else next(iter(orgs), None), person


def read(ctx: Context, what: Read[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """`what` (a facade read, or a view taking the service) of the memory in use, typed, kept under its version."""
    return read_at(ctx.svc, version_at(ctx.svc, ctx.memory), what, *args, **kwargs)


def read_or_refusal(ctx: Context, what: Read[P, R], *args: P.args, **kwargs: P.kwargs) -> R | Refusal:
    """`read`, or the facade's refusal (R15: the settings and their audit), for the page to lay out."""
    try:
        return read(ctx, what, *args, **kwargs)
    except Refusal as refusal:
        return refusal


def people_names(ctx: Context) -> dict[str, str]:
    """Every person's name by id (a cached read): where a page says who, it says a name (#25)."""
    return {p["id"]: p["name"] for p in read(ctx, MemoryService.people)}


def org_names(ctx: Context) -> dict[str, str]:
    """Every organization's name by id (a cached read)."""
    return _orgs(ctx.svc, version_at(ctx.svc, ctx.memory))


def _orgs(svc: MemoryService, at: Version | None) -> dict[str, str]:
    return {o["id"]: o["name"] for o in read_at(svc, at, MemoryService.organizations)}


@contextmanager
def guard() -> Iterator[None]:
    """Errors of the core become messages that say what to do, never tracebacks."""
    try:
        yield
    except MemoryCoreError as exc:
        st.error(refusal(exc))


def memory_in_use(ctx: Context, *, always: bool = False) -> None:
    """Under a page's title: the notebook's memory in use said at once; the database's only where `always`."""
    if ctx.source == NOTEBOOK and (nb := notebook()) is not None:
        st.caption(
            f"Memory in use: **{inert('Notebook: ' + (nb.scenario.get('title') or 'untitled'))}**, the notebook's own "
            "scratch memory, not the database. Choose the database under Memory in use in the sidebar."
        )
    elif always:
        st.caption("Memory in use: Database")


def page(title: str) -> tuple[Context, str]:
    """Start a page that needs an organization: its title, the context and the organization (else stop)."""
    ctx = context()
    st.title(title)
    memory_in_use(ctx)
    if not need_org(ctx):
        st.stop()
    assert ctx.org is not None
    return ctx, ctx.org


def live(ctx: Context, *, moments: str | None = None) -> None:
    """Redraw the page when what it shows moves (pages/_live.drawn), unless its time control (`moments`) shows the past."""
    shown = drawn(ctx.svc, ctx.memory)
    if shown is None:  # a memory without a version (in-memory): nothing to watch
        return
    st.session_state["live_drawn"] = shown
    at = st.session_state.get(f"{moments}_at", st.query_params.get("at")) if moments else None  # first: the link's
    past = at not in (None, st.session_state.get(f"{moments}_newest"))
    if not past and follow(ctx.svc, ctx.memory, shown):
        return

    def moved() -> bool:
        now = drawn(ctx.svc, ctx.memory)
        if now is not None and now[1] and now[1] == st.session_state.get("live_drawn", ("", ""))[1]:
            return False
        if past:
            st.caption("Memory has changed since this moment was drawn: go to now to see it.")
            return False
        return True

    every(LIVE_EVERY, moved)


def need_org(ctx: Context) -> bool:
    """Whether the memory in use holds an organization; if not, a hint where to get one."""
    if ctx.org is None:
        st.info(
            "This memory holds no organization yet. Load a scenario in the Notebook, "
            "or run `make run`, which loads the demo into an empty database."
        )
    return ctx.org is not None


def said_once(key: str, say: Callable[[str], object] = st.success) -> None:
    """A success (or what `say` says) kept under `key`, said after the rerun that shows it, not only in a toast."""
    if said := st.session_state.pop(key, None):
        say(said)


def ask(key: str, question: str, yes: tuple[str, str], no: tuple[str, str]) -> bool:
    """A question under `key`, asked until answered: True once confirmed (`yes`: label, key); `no` forgets it."""
    st.warning(question)
    left, right = st.columns(2)
    if right.button(no[0], key=no[1]):
        del st.session_state[key]
        st.rerun()
    return left.button(yes[0], key=yes[1], type="primary")


def note_change(ctx: Context, what: str) -> None:
    """A page changed the notebook's memory outside its cells: the Notebook will say so."""
    nb = notebook()
    if ctx.source == NOTEBOOK and nb is not None:
        nb.note_outside_change(what)
