"""The notebook's "add a cell" form, drawn from the event's model (memory_core/views/event_form.py):
one row of the simple fields, then a compound field each (a record, a fact, settings, JSON)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memory_core import FormatError
from memory_core.format.scenario import decode
from memory_core.rules.settings import SETTINGS
from memory_core.rules.vocabulary import GRAPHS, WORLD_KINDS
from memory_core.rules.weights import ORIGINS
from memory_core.views import notebook as nbk
from memory_core.views.event_form import FormField, fields

KINDS = [*WORLD_KINDS, "preference"]
#: Help a field's model does not give, in the form's words.
HELP = {
    "replaces": "a turn to replace (R3)",
    "work": "workflow:NAME, agent:NAME or debater:NAME",
    "within": "the nested work this was made within (R5)",
    "workflow": "the workflow whose steps and budget the run follows (R21, R22)",
}
#: A simple field's width in pixels: four to a row at 1400 px, two at 1024 px.
FIELD = 200
#: What a read's arguments look like, as the form starts them.
ARGS = '{"name": ""}'


def event_form(kind: str, *, orgs: list[str], people: list[str]) -> dict[str, Any]:
    """The event the form holds now (its page adds the note and the button)."""
    event: dict[str, Any] = {"do": kind}
    specs = fields(kind)
    simple = [f for f in specs if f.simple]
    row = st.container(horizontal=True)  # the simple fields in a row that wraps: each label whole (#25)
    cols = [row] * len(simple)
    lists = {"orgs": orgs, "people": people}
    for f, c in zip(simple, cols, strict=True):
        event[f.name] = _simple(c, f, lists)
    for f in specs:
        if f.simple:
            continue
        if f.widget == "record":
            if kind == "record":
                event |= record_fields("f_")
            elif st.checkbox("with a record", key="f_with_rec", value=True):
                event[f.name] = record_fields("f_")
        elif f.widget == "fact":
            event[f.name] = fact_fields("f_fact_")
        elif f.widget == "settings":
            chosen = st.multiselect("settings to set", [s.name for s in SETTINGS], key="f_names")
            event[f.name] = {n: st.toggle(n, key=f"f_set_{n}") for n in chosen}
        elif f.widget == "json":
            text = st.text_area(f"{f.name} (JSON)", ARGS, key=f"f_{f.name}", height=68)
            try:
                event[f.name] = decode(text)
            except FormatError as exc:
                st.error(f"{f.name}: {exc}.")
    return event


def _simple(c: Any, f: FormField, lists: dict[str, list[str]]) -> Any:
    """A text, a choice or a toggle; an optional text left empty is left out (None)."""
    key, help_ = f"f_{f.name}", f.help or HELP.get(f.name)
    if f.widget == "toggle":
        return c.checkbox(f.name, key=key, value=bool(f.default), help=help_)
    if f.widget == "choice":
        options = list(f.choices) if f.choices else lists[f.among]
        index = options.index(f.default) if f.default in options else 0
        return c.selectbox(f.name, options, index=index if options else None, key=key, help=help_, width=FIELD)
    text = c.text_input(f.name, key=key, help=help_, width=FIELD)
    return text if text or f.required else None


def claim_fields(prefix: str) -> list[dict[str, Any]]:
    """One claim from fields, plus any more as JSON."""
    c = st.columns([1, 2, 1, 2, 2, 1])
    graph = c[0].selectbox("graph", GRAPHS, key=f"{prefix}g")
    subject = c[1].text_input("subject", key=f"{prefix}s")
    skind = c[2].selectbox("kind", KINDS, key=f"{prefix}sk", index=KINDS.index("organization"))
    relation = c[3].text_input("relation", key=f"{prefix}r")
    obj = c[4].text_input("object", key=f"{prefix}o")
    okind = c[5].selectbox("kind", [*KINDS, "value"], key=f"{prefix}ok", index=KINDS.index("place"))
    claims = []
    if subject and relation and obj:
        claims.append(
            nbk.claim_from(
                graph=graph, subject=subject, subject_kind=skind, relation=relation, obj=obj, object_kind=okind
            )
        )
    more = st.text_area("more claims (JSON list)", "[]", key=f"{prefix}more", height=68)
    try:
        claims.extend(decode(more or "[]"))
    except FormatError as exc:
        st.error(f"More claims: {exc}.")
    return claims


def record_fields(prefix: str) -> dict[str, Any]:
    c = st.columns([1, 2, 3, 1])
    origin = c[0].selectbox("origin", ORIGINS, key=f"{prefix}origin")
    source = c[1].text_input("source", key=f"{prefix}source", help="URL, document, tool or person id (R25)")
    excerpt = c[2].text_input("excerpt", key=f"{prefix}excerpt")
    rel = c[3].text_input("reliability", key=f"{prefix}rel", help="optional, strictly between 0.5 and 1 (R26)")
    reliability: Any = rel
    try:
        reliability = float(rel) if rel else None
    except ValueError:
        pass  # the format check names the field
    return nbk.compact(
        {
            "origin": origin,
            "source": source,
            "excerpt": excerpt,
            "reliability": reliability,
            "claims": claim_fields(prefix),
        }
    )


def fact_fields(prefix: str) -> dict[str, Any]:
    claim = claim_fields(prefix)
    if not claim:
        return {}
    return {k: claim[0][k] for k in ("subject", "relation", "object")}
