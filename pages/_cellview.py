"""The Notebook's cells: what each did (views/cell_said.py), memory compared between two, and the cell form."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import suppress

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from memory_core import FormatError, MemoryService
from memory_core.format.scenario import decode
from memory_core.plain import Obj
from memory_core.rules.settings import SETTINGS
from memory_core.rules.turns import teaches
from memory_core.rules.vocabulary import GRAPHS, TURN_END_STATUSES, WORLD_KINDS
from memory_core.rules.weights import ORIGINS
from memory_core.rules.wording import RULE_TEXT
from memory_core.views import cell_said as said
from memory_core.views import cells, notebook_scrub
from memory_core.views import notebook as nbk
from memory_core.views.event_form import FormField, fields
from pages._links import record_link
from pages._tables import wrapped
from pages._ui import Version, guard, inert, keep, open_notebook, read_at, said_once
from pages._words import caption, cite, plural

#: A fact change's columns only where it ended (compact); else all of said.Change's.
COMPACT = ["graph", "fact", "weight_after", "status_after"]


def _changes(rows: list[said.Change], *, compact: bool) -> None:
    table = pd.DataFrame([r.model_dump() for r in rows])[COMPACT if compact else list(said.Change.model_fields)]
    for column in table.columns:
        if column.startswith("weight_"):
            table[column] = table[column].map(lambda w: "absent" if w is None or w != w else f"{w:.4f}")
        elif column.startswith("status_"):
            table[column] = table[column].map(lambda v: v or "absent")
    st.dataframe(table.rename(columns=lambda c: c.replace("_", " ").capitalize()), hide_index=True, width="stretch")


def show_result(res: Obj, *, event: Obj | None = None, nb: nbk.Notebook | None = None, compact: bool = False) -> None:
    """What a cell did, laid out piece by piece as views/cell_said says it for its kind."""
    turn = event.get("turn") if event else None
    evidence = cells.evidence(nb.events(), nb.results, turn, res["index"]) if nb is not None and turn else None
    for piece in said.said(said.read(res), link=_record_links(nb, turn), evidence=evidence):
        if isinstance(piece, said.ChangeTable):
            _changes(piece.rows, compact=compact)
        elif isinstance(piece, said.ReadAnswer):
            st.dataframe(pd.DataFrame(cells.answer_rows(piece.result)), hide_index=True, width="stretch")
        else:
            getattr(st, piece.tone)(cite(piece.text))


def _record_links(nb: nbk.Notebook | None, turn: str | None) -> Callable[[str], str]:
    """A record's id as a link to its row on Runs, on this notebook's memory (its run found once); else bold."""
    run = cells.run_of(nb.events(), turn) if nb is not None and turn else None
    if nb is None or run is None:
        return lambda record: f"**{inert(record)}**"
    return lambda record: record_link(run, record, record, query=f"&mem=notebook&nb={nb.id}")


def kept(nb: nbk.Notebook) -> None:
    """What the notebook keeps, said beside it, and the scrub of what its cells erased (#26)."""
    caption(
        f"**What this notebook keeps**, in a file on this machine (`{nb.id}.notebook.json`, beside the scratch "
        "memory the sidebar names): your cells as you wrote them, and what each did when it ran (its result, the "
        "reads' answers, the refusals). A cell that deletes a run or an account, or an ephemeral run's end, erases it "
        "from the notebook's memory (R17, R29, R30, R31); your cells keep your words, and the results saved before it "
        "keep copies until you scrub them."
    )
    said_once("_nb_scrubbed")
    if notebook_scrub.pending(nb) and st.button(
        "Scrub what this notebook's deletions erased from its saved results",
        key="nb_scrub",
        help="Its cells stay as you wrote them; running them again brings the copies back until you scrub again.",
    ):
        n = nb.scrub_results()
        st.session_state["_nb_scrubbed"] = (
            f"Scrubbed {plural(n, 'saved value')} of what this notebook's deletions erased: the results say what "
            "memory says now. Your cells are as you wrote them."
        )
        rerun(nb)


def preview(nb: nbk.Notebook, turn: str) -> None:
    """Side by side: what the turn teaches if it completes, fails or is cancelled now (R1, R2)."""
    outcomes = nb.preview_end_turn(turn)
    for col, status in zip(st.columns(3), TURN_END_STATUSES, strict=True):
        with col:
            st.markdown(f"**If {status}**")
            res = outcomes[status]
            if res["status"] == "ok" and not res["changes"] and not res["skipped"]:
                st.caption("Teaches nothing." + (" " + cite(f"R2: {RULE_TEXT['R2']}") if not teaches(status) else ""))
            else:
                show_result(res, compact=True)


def stale_note(nb: nbk.Notebook, i: int, event: Obj) -> None:
    """A note written for another outcome than the cell's now is flagged, with both outcomes."""
    written_for, res = nb.notes[i], nb.results.get(str(i))
    if cells.stale(event, written_for, res):
        assert written_for is not None and res is not None
        st.warning(
            f"This note was written for another outcome: the cell {cells.outcome_words(written_for)} then, "
            f"and it is {cells.outcome_words(cells.outcome(res))} now. Edit the note to say what happens now."
        )


# --- the memory compared between two cells -----------------------------------------------------


MANY, TALL = 12, 520  # a comparison of more facts than MANY scrolls in place, TALL pixels high
#: One column each for the weight and the status from A to B: seven columns wrap whole at 1024 px (#25).
COMPARED = ["Graph", "Owner", "Fact", "Change", "Weight A → B", "↑↓", "Status A → B", "Why"]


def compare(nb: nbk.Notebook) -> None:
    """What differs in memory between two cells (R32, R33), and a fact's weight across them."""
    if not (ran := nb.cursor):
        st.caption("Run some cells to compare the memory between two of them.")
        return
    svc, at = nb.service, (nb.db, f"{nb.id} rev {nb.rev}")  # this notebook at this revision
    moments = nb.moments or {}
    evs = nb.scenario["events"]
    options = list(range(-1, ran))

    def label(i: int) -> str:
        return "the setup (before any cell)" if i < 0 else f"[{i}] {evs[i]['do']}"

    keep("nb_cmp_a", options)  # A falls back to the setup, B to the last cell run
    keep("nb_cmp_b", options[::-1])
    left, right = st.columns(2)
    a = left.selectbox("Memory after cell A", options, format_func=label, key="nb_cmp_a")
    b = right.selectbox("\u2026compared with after cell B", options, format_func=label, key="nb_cmp_b")
    table = pd.DataFrame(read_at(svc, at, cells.compare, moments, a, b), columns=COMPARED)
    if table.empty:
        st.caption("Memory is the same after both cells.")
    else:
        counts = ", ".join(f"{n} {what}" for what, n in table["Change"].value_counts().items())
        between = f"between after {label(min(a, b))} and after {label(max(a, b))}"
        st.markdown(f"**{plural(len(table), 'fact')} differ** {between}: {counts}.")
        wrapped(table, height=TALL if len(table) > MANY else None)  # statuses and why read whole (#25)
    caption(
        "Read from memory's history at the moment each cell left (R32): what a later cell erased is "
        "absent from every moment (R33). \u2191 heavier, \u2193 lighter; Why names the supports that came "
        "(+) or were withdrawn by a replacement (R3), and the disputes (R28)."
    )
    _weight_chart(svc, at, ran=ran, moments=moments, table=table)


def _weight_chart(svc: MemoryService, at: Version, *, ran: int, moments: Obj, table: pd.DataFrame) -> None:
    """A fact's weight after each cell run, the fact first compared (or any the cells changed)."""
    if not (facts := read_at(svc, at, cells.facts_in_memory, moments, ran)):
        return
    if st.session_state.get("nb_fact") not in facts:
        first = None if table.empty else " \u00b7 ".join(table.iloc[0][["Graph", "Owner", "Fact"]])
        st.session_state["nb_fact"] = next((i for i, f in facts.items() if f == first), next(iter(facts)))
    fact = st.selectbox("A fact's weight across the cells", list(facts), format_func=facts.__getitem__, key="nb_fact")
    series = read_at(svc, at, cells.weight_series, int(fact), moments, ran)
    st.line_chart(
        pd.DataFrame({"cell": range(ran), "weight": series}).set_index("cell"),
        height=220,
        x_label="Cell (after it ran)",
        y_label="Weight (0 to 1)",
    )
    st.caption(
        "Weight after each cell run; no line where the fact did not exist. Facts memory holds after the last cell run."
    )


def with_guard(fn: Callable[..., object], *args: object) -> bool:
    """Run a notebook change under guard(): False when the core refused it (the message is shown)."""
    with guard():
        fn(*args)
        return True
    return False


# --- the notebook page's own: keeping it, opening a file, finding and naming cells ----------------


def rerun(nb: nbk.Notebook | None = None, goto: int | None = None) -> None:
    """Keep the notebook on disk, move the window to `goto` (the cell just run), and rerun."""
    if nb is not None:
        nb.save()
    if goto is not None:
        st.session_state["_nb_goto"] = goto
    st.rerun()


def load(text: str | bytes, name: str, goto: int = 0) -> None:
    """Open scenario text as a notebook, read and checked exactly as `replay` reads a file."""
    with guard():
        try:
            nb = nbk.load_text(text, name)
        except FormatError as exc:
            st.error(
                f"{inert(name)} is not a memory scenario: {inert(exc)}. Fix that place in the file and load it again."
            )
            return
        open_notebook(nb)
        rerun(nb, goto=goto)


@st.cache_data(show_spinner=False, max_entries=32)
def matching(digest: str, query: str, _events: list[Obj], _checked: list[Obj]) -> list[int]:
    return cells.matching(_events, _checked, query)


@st.cache_data(show_spinner=False, max_entries=8)
def labels(digest: str, _events: list[Obj], _checked: list[Obj]) -> list[str]:
    return cells.labels(_events, _checked)


# --- a cell added or edited: its simple fields and note as a form, or the whole event as JSON -------

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


def event_form(kind: str, lists: dict[str, list[str]]) -> Obj:
    """The event the form holds now, its choices among the scenario's `lists` (the page adds the note and button)."""
    specs = fields(kind)
    simple = simple_fields([f for f in specs if f.simple], {}, prefix="f_", lists=lists)
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


def fact_fields(prefix: str) -> Obj:
    """One claim's subject, relation and object, from the claim's fields."""
    claim = claim_fields(prefix)
    return {k: claim[0][k] for k in ("subject", "relation", "object")} if claim else {}


def record_fields(prefix: str) -> Obj:
    c = st.columns([1, 2, 3, 1])
    origin = c[0].selectbox("origin", ORIGINS, key=f"{prefix}origin")
    source = c[1].text_input("source", key=f"{prefix}source", help=cite("URL, document, tool or person id (R25)"))
    excerpt = c[2].text_input("excerpt", key=f"{prefix}excerpt")
    rel = c[3].text_input("reliability", key=f"{prefix}rel", help=cite("optional, strictly between 0.5 and 1 (R26)"))
    reliability: str | float | None = rel  # not a number: the format check names the field
    with suppress(ValueError):
        reliability = float(rel) if rel else None
    given = {"origin": origin, "source": source, "excerpt": excerpt, "reliability": reliability}
    return cells.compact(given | {"claims": claim_fields(prefix)})


def edit_cell(nb: nbk.Notebook, i: int, event: Obj, lists: dict[str, list[str]]) -> None:
    """A cell's editor: its simple fields and note, or the event as JSON; a save is said (#25)."""
    said_once(f"_nb_saved-{nb.id}-{i}")
    drawn = json.dumps(event, indent=2, ensure_ascii=False)
    fresh = st.session_state.get(f"_edit_for_{i}") != drawn  # another cell now stands here, or this one changed
    st.session_state[f"_edit_for_{i}"] = drawn
    with st.expander("Edit"):
        as_form, as_json = st.tabs(["Fields", "JSON"])
        with as_form:
            edited = _fields_of(i, event, fresh, lists)
            if st.button(
                "Save cell", key=f"save-form-{i}", help="Saves the fields and note above; Undo takes it back."
            ):
                _save(nb, i, event, edited)
        with as_json:
            if fresh:
                st.session_state[f"edit-{i}"] = drawn
            text = st.text_area("Event (JSON)", key=f"edit-{i}", height=180)
            if st.button("Save cell", key=f"save-{i}", help="Saves the event as written; Undo takes it back."):
                _save(nb, i, event, text)


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


def _save(nb: nbk.Notebook, i: int, before: Obj, edited: Obj | str) -> None:
    """Save a cell (its fields, or its JSON as written), said after the rerun that shows it (not only in a toast)."""
    ran = nb.cursor
    try:
        event = decode(edited) if isinstance(edited, str) else edited
        if event == before:
            st.info("Nothing to save: the cell is as it was.")
            return
        nb.update_cell(i, event)
    except FormatError as exc:
        st.error(f"Not saved: {exc}")
        return
    again = " The cells run so far ran again on the edited story." if i < ran else ""
    st.session_state[f"_nb_saved-{nb.id}-{i}"] = f"Cell [{i}] saved.{again} Undo takes it back."
    st.toast(f"Cell [{i}] saved.")
    rerun(nb, goto=i)
