"""What every page shares: the memory in use, the acting person, and errors as messages.

Pages read widgets, call the service, render. They never touch SQL (a test checks it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import streamlit as st

from memory_core import MemoryCoreError, MemoryService, database_url, make_engine
from memory_core import notebook as nbk
from memory_core.rules import RULE_TEXT

MAIN = "main"
NOTEBOOK = "notebook"


@st.cache_resource(show_spinner=False)
def main_service(url: str) -> MemoryService:
    """The engine of the configured database, one per process (a cached resource)."""
    return MemoryService(make_engine(url))


@dataclass
class Context:
    svc: MemoryService
    source: str  # MAIN or NOTEBOOK
    label: str
    org: str | None
    org_name: str
    person: str | None
    role: str | None

    @property
    def is_owner(self) -> bool:
        return self.role == "owner"


def notebook() -> dict[str, Any] | None:
    return st.session_state.get("notebook")


def service_for(source: str) -> MemoryService:
    nb = notebook()
    if source == NOTEBOOK and nb is not None:
        return nbk.service(nb)
    return main_service(database_url())


def _keep(key: str, options: list[Any]) -> None:
    """A remembered choice that is no longer an option falls back to the first one."""
    if options and st.session_state.get(key) not in options:
        st.session_state[key] = options[0]


def sidebar() -> None:
    """Draw the shared sidebar; the choices live in session state and hold across pages and reruns."""
    nb = notebook()
    sources = [MAIN] + ([NOTEBOOK] if nb else [])
    if "_pending_source" in st.session_state:  # a page asked to switch before the radio was drawn
        st.session_state["memory_source"] = st.session_state.pop("_pending_source")
    _keep("memory_source", sources)
    title = (nb["scenario"].get("title") or "untitled") if nb else None
    with st.sidebar:
        st.markdown("### Memory Explorer")
        names = {MAIN: "Database", NOTEBOOK: f"Notebook: {title}"}
        source = st.radio("Memory in use", sources, format_func=names.__getitem__, key="memory_source")
        svc = service_for(source)
        org_names = {o["id"]: o["name"] for o in svc.organizations()}
        _keep("org", list(org_names))
        if org_names:
            st.selectbox("Organization", list(org_names), format_func=lambda o: f"{org_names[o]} ({o})", key="org")
        members = svc.members(st.session_state["org"]) if org_names else []
        label = {m["id"]: f"{m['name']} ({m['role']})" for m in members}
        _keep("person", list(label))
        if members:
            st.selectbox("Act as", list(label), format_func=label.__getitem__, key="person")
        st.caption(f"Scenario loaded: **{title}**" if nb else "Scenario loaded: none (open the Notebook)")
        where = nb["db"] if source == NOTEBOOK and nb else database_url()
        st.caption(f"Database: `{where}`")


def use_memory(source: str) -> None:
    """Switch the memory in use from inside a page (applied when the sidebar is next drawn)."""
    st.session_state["_pending_source"] = source


def context() -> Context:
    """The current choices, from session state (plain data), with the service they name."""
    nb = notebook()
    source = st.session_state.get("memory_source", MAIN)
    svc = service_for(source)
    orgs = {o["id"]: o["name"] for o in svc.organizations()}
    org = st.session_state.get("org")
    org = org if org in orgs else next(iter(orgs), None)
    members = {m["id"]: m["role"] for m in svc.members(org)} if org else {}
    person = st.session_state.get("person")
    person = person if person in members else next(iter(members), None)
    label = f"Notebook: {nb['scenario'].get('title') or 'untitled'}" if source == NOTEBOOK and nb else "Database"
    return Context(svc, source, label, org, orgs.get(org or "", ""), person, members.get(person or ""))


@contextmanager
def guard() -> Iterator[None]:
    """Errors of the core become messages that say what to do, never tracebacks."""
    try:
        yield
    except MemoryCoreError as exc:
        reason = getattr(exc, "reason", None)
        st.error(f"Refused ({reason}): {exc.message}" if reason else f"Not done: {exc}")  # type: ignore[attr-defined]


def page(title: str) -> tuple[Context, str]:
    """Start a page that needs an organization: its title, the context, and the organization's id
    (the page stops with a hint when the memory in use holds none)."""
    ctx = context()
    st.title(title)
    if not need_org(ctx) or ctx.org is None:
        st.stop()
    assert ctx.org is not None
    return ctx, ctx.org


def need_org(ctx: Context) -> bool:
    if ctx.org is None:
        st.info(
            "This memory holds no organization yet. Load a scenario in the Notebook, "
            "or run `make run`, which loads the demo into an empty database."
        )
        return False
    return True


def note_change(ctx: Context, what: str) -> None:
    """A page changed the notebook's memory outside its cells: the Notebook will say so."""
    nb = notebook()
    if ctx.source == NOTEBOOK and nb is not None:
        nbk.note_outside_change(nb, what)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def on_off(value: bool) -> str:
    return "on" if value else "off"


def rule_text(rule: str) -> str:
    return f"{rule}: {RULE_TEXT.get(rule, '')}"
