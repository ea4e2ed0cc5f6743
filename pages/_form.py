"""The notebook's "add a cell" form, drawn from the event's model (memory_core/views/event_form.py):
one row of the simple fields, then a compound field each (a record, a fact, settings, JSON)."""

from __future__ import annotations

import json

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from memory_core import FormatError
from memory_core.format.scenario import decode
from memory_core.plain import Obj
from memory_core.rules.settings import SETTINGS
from memory_core.rules.vocabulary import GRAPHS, WORLD_KINDS
from memory_core.rules.weights import ORIGINS
from memory_core.views import cells
from memory_core.views import notebook as nbk
from memory_core.views.event_form import FormField, fields
from pages._cellview import rerun
from pages._words import cite

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


def event_form(kind: str, *, orgs: list[str], people: list[str]) -> Obj:
    """The event the form holds now (its page adds the note and the button)."""
    specs = fields(kind)
    simple = simple_fields([f for f in specs if f.simple], {}, prefix="f_", lists={"orgs": orgs, "people": people})
    event: Obj = {"do": kind} | {k: v if v != "" else None for k, v in simple.items()}
    for f in specs:
        event |= {} if f.simple else _compound(kind, f)
    return event


def _compound(kind: str, f: FormField) -> Obj:
    """A compound field's part of the event: a record, a fact, settings or JSON arguments."""
    if f.widget == "record" and kind == "record":  # the event is itself a record
        return record_fields("f_")
    if f.widget == "record":
        return {f.name: record_fields("f_")} if st.checkbox("with a record", key="f_with_rec", value=True) else {}
    if f.widget == "fact":
        return {f.name: fact_fields("f_fact_")}
    if f.widget == "settings":
        chosen = st.multiselect("settings to set", [s.name for s in SETTINGS], key="f_names")
        return {f.name: {n: st.toggle(n, key=f"f_set_{n}") for n in chosen}}
    text = st.text_area(f"{f.name} (JSON)", ARGS, key=f"f_{f.name}", height=68)
    try:
        return {f.name: decode(text)}
    except FormatError as exc:
        st.error(f"{f.name}: {exc}.")
        return {}


def simple_fields(
    specs: list[FormField], now: Obj, *, prefix: str, lists: dict[str, list[str]], fresh: bool = False
) -> Obj:
    """The simple fields in one wrapping row (#25), keyed `prefix + name`, started at `now`."""
    row = st.container(horizontal=True)
    out: Obj = {}
    for f in specs:
        key, value = f"{prefix}{f.name}", now.get(f.name, f.default)
        options = list(f.choices) if f.choices else list(lists.get(f.among, []))
        options += [value] if f.widget == "choice" and value is not None and value not in options else []
        if fresh or key not in st.session_state or (f.widget == "choice" and st.session_state[key] not in options):
            st.session_state[key] = _start(f, value, options)
        out[f.name] = _widget(row, f, key, options)
    return out


def _start(f: FormField, value: object, options: list[str]) -> object:
    """What a simple field shows first: its value, else the first choice, an empty text or off."""
    first = value if value in options else next(iter(options), None)
    return {"toggle": bool(value), "choice": first}.get(f.widget, value or "")


def _widget(row: DeltaGenerator, f: FormField, key: str, options: list[str]) -> object:
    help_ = f.help or HELP.get(f.name)
    if f.widget == "toggle":
        return row.checkbox(f.name, key=key, help=help_)
    if f.widget == "choice":
        return row.selectbox(f.name, options, key=key, help=help_, width=FIELD)
    return row.text_input(f.name, key=key, help=help_, width=FIELD)


def claim_fields(prefix: str) -> list[Obj]:
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
        given = {"graph": graph, "subject": subject, "relation": relation, "obj": obj}
        claims.append(cells.claim_from(**given, subject_kind=skind, object_kind=okind))
    more = st.text_area("more claims (JSON list)", "[]", key=f"{prefix}more", height=68)
    try:
        claims.extend(decode(more or "[]"))
    except FormatError as exc:
        st.error(f"More claims: {exc}.")
    return claims


def record_fields(prefix: str) -> Obj:
    c = st.columns([1, 2, 3, 1])
    origin = c[0].selectbox("origin", ORIGINS, key=f"{prefix}origin")
    source = c[1].text_input("source", key=f"{prefix}source", help=cite("URL, document, tool or person id (R25)"))
    excerpt = c[2].text_input("excerpt", key=f"{prefix}excerpt")
    rel = c[3].text_input("reliability", key=f"{prefix}rel", help=cite("optional, strictly between 0.5 and 1 (R26)"))
    reliability: str | float | None = rel
    try:
        reliability = float(rel) if rel else None
    except ValueError:
        pass  # the format check names the field
    given = {"origin": origin, "source": source, "excerpt": excerpt, "reliability": reliability}
    return cells.compact(given | {"claims": claim_fields(prefix)})


def fact_fields(prefix: str) -> Obj:
    claim = claim_fields(prefix)
    if not claim:
        return {}
    return {k: claim[0][k] for k in ("subject", "relation", "object")}


# --- a cell edited: its simple fields and note as a form, or the whole event as JSON ------------------


def edit_cell(nb: nbk.Notebook, i: int, event: Obj, *, orgs: list[str], people: list[str]) -> None:
    """A cell's editor: its simple fields and note, or the event as JSON; a save is said (#25)."""
    saved = st.session_state.get("_nb_saved")
    if saved and saved[:2] == (nb.id, i):
        st.success(saved[2])
        del st.session_state["_nb_saved"]
    drawn = json.dumps(event, indent=2, ensure_ascii=False)
    fresh = st.session_state.get(f"_edit_for_{i}") != drawn  # another cell now stands here, or this one changed
    st.session_state[f"_edit_for_{i}"] = drawn
    with st.expander("Edit"):
        as_form, as_json = st.tabs(["Fields", "JSON"])
        with as_form:
            edited = _fields_of(i, event, fresh, lists={"orgs": orgs, "people": people})
            if st.button(
                "Save cell", key=f"save-form-{i}", help="Saves the fields and note above; Undo takes it back."
            ):
                _save(nb, i, event, edited)
        with as_json:
            if fresh:
                st.session_state[f"edit-{i}"] = drawn
            text = st.text_area("Event (JSON)", key=f"edit-{i}", height=180)
            if st.button("Save cell", key=f"save-{i}", help="Saves the event as written; Undo takes it back."):
                try:
                    new = decode(text)
                except FormatError as exc:
                    st.error(f"Not saved: {exc}")
                else:
                    _save(nb, i, event, new)


def _fields_of(i: int, event: Obj, fresh: bool, lists: dict[str, list[str]]) -> Obj:
    """The event as the cell's form holds it (keys `e{i}-…`); a fresh form starts from the event."""
    specs, kept = _editable(event)
    if fresh or f"e{i}-note" not in st.session_state:
        st.session_state[f"e{i}-note"] = event.get("note", "")
    edited = simple_fields(specs, event, prefix=f"e{i}-", lists=lists, fresh=fresh)
    edited["note"] = st.text_input("note (shown under the cell)", key=f"e{i}-note")
    if kept:
        st.caption(f"Its {', '.join(kept)} stay as written: edit them under JSON.")
    return _merged(event, edited, required={f.name for f in specs if f.required})


def _editable(event: Obj) -> tuple[list[FormField], list[str]]:
    """The fields of a cell the form edits (a text field only while it holds text), and the others it holds."""
    every = fields(event["do"])
    specs = [f for f in every if f.simple and (f.widget != "text" or isinstance(event.get(f.name), str | None))]
    return specs, [f.name for f in every if f not in specs and f.name in event]


def _merged(event: Obj, edited: Obj, *, required: set[str]) -> Obj:
    """The event with the form's values, in its order; an optional field left empty goes."""
    out = {k: edited.get(k, v) for k, v in event.items()} | edited
    return {k: v for k, v in out.items() if k not in edited or v not in ("", None) or k in required}


def _save(nb: nbk.Notebook, i: int, before: Obj, event: Obj) -> None:
    """Save a cell, then say so after the rerun that shows it (not only in a passing toast)."""
    if event == before:
        st.info("Nothing to save: the cell is as it was.")
        return
    ran = nb.cursor
    try:
        nb.update_cell(i, event)
    except FormatError as exc:
        st.error(f"Not saved: {exc}")
        return
    again = " The cells run so far ran again on the edited story." if i < ran else ""
    said = f"Cell [{i}] saved.{again} Undo takes it back."
    st.session_state["_nb_saved"] = (nb.id, i, said)
    st.toast(f"Cell [{i}] saved.")
    rerun(nb, goto=i)
