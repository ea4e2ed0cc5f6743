"""Notebook: a scenario as cells run one by one, kept on disk under the URL's `?nb=` with its edits (undone, asked)."""

from __future__ import annotations

import json

import streamlit as st

from memory_core import FormatError
from memory_core.views import cells
from memory_core.views import notebook as nbk
from memory_core.views.event_form import kinds
from pages import _cellview as cv
from pages._links import from_link, to_link
from pages._live import every
from pages._tables import download
from pages._ui import NOTEBOOK, ask, guard, inert, notebook, reopen_linked, said_once, use_memory
from pages._words import SAMPLES, caption, cite, plural

#: How a cell is marked: not run, applied, refused.
MARKS = {
    None: ":material/radio_button_unchecked:",
    "ok": ":green[:material/check_circle:]",
    "refused": ":red[:material/block:]",
}
LINK = {"nb": "nb_id", "sample": "nb_sample", "cell": "nb_jump"}
WINDOW = 8  # cells drawn at once, from the one "Jump to" names


samples = sorted(p.name for p in SAMPLES.glob("*.json"))


def ask_or_load(text: bytes, name: str) -> None:
    """Open `name`, or first ask, when the open notebook has edits that loading it would replace."""
    if (nb := notebook()) is not None and nb.edited():
        st.session_state["_nb_confirm_load"] = (name, text)
    else:
        cv.load(text, name)


# A view is a link: ?nb= reopens a notebook kept on disk, ?sample= opens a sample, ?cell= a cell.
linked_before = st.session_state.get("nb_id")
from_link(LINK, ints=("cell",))
linked = st.session_state.get("nb_id")
if linked and linked != linked_before and ((nb := notebook()) is None or nb.id != linked):
    reopened, damaged = reopen_linked(linked)  # damaged, or not the signed-in caller's (#40)
    if reopened is not None:
        st.session_state["notebook"] = reopened
        use_memory(NOTEBOOK)
        cv.rerun(goto=st.session_state.get("nb_jump", reopened.last or 0))
    st.session_state["nb_id"] = None
    st.session_state["_nb_link_lost"] = (
        f"The notebook this link names was not reopened: {damaged}"
        if damaged
        else "No notebook is kept under this link on this machine (it was never saved here, or its files were removed)"
    ) + (": the sample it names is opened afresh." if st.session_state.get("nb_sample") else ".")
if notebook() is None and st.session_state.get("nb_sample") in samples:
    name, cell = st.session_state["nb_sample"], st.session_state.get("nb_jump")
    cv.load((SAMPLES / name).read_bytes(), name, goto=cell if isinstance(cell, int) else 0)
if "_nb_goto" in st.session_state:  # a button asked to move the window before "Jump to" is drawn
    st.session_state["nb_jump"] = st.session_state.pop("_nb_goto")

st.title("Notebook")
said_once("_nb_link_lost", st.warning)
nb = notebook()
with st.expander("Open a scenario", expanded=nb is None):
    pick = go = st.container(horizontal=True, vertical_alignment="center")  # the button's label whole (#25)
    chosen = pick.selectbox("Sample", samples, key="sample_pick", label_visibility="collapsed")
    if go.button("Load sample", key="load_sample"):
        ask_or_load((SAMPLES / chosen).read_bytes(), chosen)
    upload = st.file_uploader("…or upload a scenario file (memory-scenario/1)", type=["json"], key="upload")
    if upload is not None and st.button("Load upload", key="load_upload"):
        ask_or_load(upload.getvalue(), upload.name)
    pending = st.session_state.get("_nb_confirm_load")
    if pending and ask(
        "_nb_confirm_load",
        f"This notebook has edits. Loading {inert(pending[0])} replaces it; its edits stay only under its own "
        "link (copy the address first to come back to it).",
        ("Discard my edits and load", "load_confirm"),
        ("Keep my notebook", "load_cancel"),
    ):
        cv.load(pending[1], pending[0])

if nb is None:
    st.info("Load a sample or upload a scenario to start. Each cell is one event; run them one by one.")
    to_link(LINK)
    st.stop()
# Every second, the page runs again if another tab or window saved the notebook (its run, edit or reset, told).
every(1.0, lambda: (now := notebook()) is not None and now.changed_elsewhere())
book: nbk.Notebook = nb  # as the download buttons' callbacks see it
st.session_state["nb_id"] = nb.id
st.session_state["nb_sample"] = nb.file if nb.file in samples else None

scenario = nb.scenario
st.subheader(inert(scenario.get("title") or "Untitled scenario"))
if scenario.get("description"):
    caption(inert(scenario["description"]))
events = scenario["events"]
org_ids = [o["id"] for o in scenario.get("organizations", [])]  # what the cells' choice fields offer
lists = {"orgs": org_ids, "people": [p["id"] for p in scenario.get("people", [])]}
checked_events = nb.events()
cursor = nb.cursor

bar = st.container(horizontal=True, gap="small")  # the buttons flow and wrap: readable at any width
if bar.button("Run next", key="run_next", type="primary", disabled=cursor >= len(events)):
    cv.with_guard(nb.run_next)
    cv.rerun(nb, goto=nb.last)
if bar.button("Run all", key="run_all", disabled=cursor >= len(events)):
    progress = st.progress(0.0, text="Running cells…")
    with guard():

        def told(ran: int) -> None:
            if ran % 10 == 0:
                progress.progress(ran / len(events), text=f"Cell {ran} of {len(events)}")

        nb.run_all(told)
    cv.rerun(nb, goto=nb.last)
if bar.button("Reset", key="reset"):
    nb.reset()
    cv.rerun(nb, goto=0)
if bar.button("Undo", key="undo", disabled=not nb.edited(), help="Undo the last edit of the cells"):
    cv.with_guard(nb.undo)
    cv.rerun(nb)
as_json = lambda: json.dumps(scenario, indent=2, ensure_ascii=False)  # named as it was opened (Notebook.file)
download(bar.download_button, "Download scenario", as_json, file_name=nb.file or "scenario.json", key="dl_scenario")
state = lambda: json.dumps(book.state(), indent=2, ensure_ascii=False)
download(bar.download_button, "Download state", state, file_name="state.json", key="dl_state")
if nb.outside:
    st.warning(
        "This notebook's memory was also changed outside its cells, so replaying the cells (or the downloaded "
        "scenario) would not give it: " + "; ".join(nb.outside) + ". Reset to go back to the cells alone."
    )
st.caption(
    f"{cursor} of {len(events)} cells run. The memory in use is this notebook's own scratch memory; "
    "the other pages show it while it is selected in the sidebar. The notebook is kept on this machine: "
    "this page's address reopens it, with its edits and cursor."
)
cv.kept(nb)


# --- follow the story: a window of cells from the one "Jump to" names ------------------------

digest = nb.digest()
find, jump = st.columns([2, 3])
query = find.text_input("Search cells", key="nb_search", placeholder="a turn, a name, a kind of event, #12…")
shown = cv.matching(digest, query, events, checked_events)
names = cv.labels(digest, events, checked_events)
if not shown:
    st.info("No cell holds all these words.")
else:
    want = st.session_state.get("nb_jump")
    if want not in shown:  # the nearest matching cell at or after the one asked for
        base: int = want if isinstance(want, int) else cursor if nb.last is None else nb.last
        st.session_state["nb_jump"] = next((i for i in shown if i >= base), shown[-1])
    elif st.session_state.get("_nb_jump_cells") != digest:  # the cells changed: the box is told its label anew,
        st.session_state["nb_jump"] = want  # or it would still name a deleted or moved cell (#25)
    st.session_state["_nb_jump_cells"] = digest
    at = jump.selectbox("Jump to", shown, key="nb_jump", format_func=names.__getitem__)
    pos = shown.index(at)
    window = shown[pos : pos + WINDOW]
    nav = st.columns([1, 1, 4])
    if nav[0].button("◀ Earlier", key="nb_prev", disabled=pos == 0):
        cv.rerun(goto=shown[max(0, pos - WINDOW)])
    if nav[1].button("Later ▶", key="nb_next", disabled=pos + WINDOW >= len(shown)):
        cv.rerun(goto=shown[pos + WINDOW])
    nav[2].caption(
        f"Showing {plural(len(window), 'cell')}, [{window[0]}] to [{window[-1]}],"
        + (f" of the {len(shown)} that match" if query.strip() else f" of {len(events)}")
        + ". Cells already run are folded; the one just run is marked."
    )
    for i in window:
        event = events[i]
        res = nb.results.get(str(i))
        just_run = i == nb.last and res is not None
        mark = MARKS[res["status"] if res else None]
        with st.container(border=True, key="nb-just-run" if just_run else f"nb-cell-{i}"):
            if just_run:
                st.markdown(":orange-background[**▶ Just run**]")
            elif i == cursor:
                st.caption("Next to run")
            head, acts = st.columns([5, 2])
            head.markdown(f"{mark} `[{i}]` **{event['do']}** · {inert(cells.summary(checked_events[i]))}")
            if event.get("note"):
                head.caption(cite(inert(event["note"])))
            # one row that wraps, not four columns: each symbol keeps its width
            row = acts.container(horizontal=True, gap="xsmall", horizontal_alignment="right")
            if row.button("▶", key=f"to-{i}", help="Run to here"):
                cv.with_guard(nb.run_to, i)
                cv.rerun(nb, goto=i)
            if row.button("↑", key=f"up-{i}", help="Move up", disabled=i == 0) and cv.with_guard(nb.move_cell, i, -1):
                cv.rerun(nb, goto=i - 1)
            if row.button("↓", key=f"down-{i}", help="Move down", disabled=i == len(events) - 1):
                if cv.with_guard(nb.move_cell, i, 1):
                    cv.rerun(nb)
            if row.button("✕", key=f"del-{i}", help="Delete this cell"):
                st.session_state["_nb_confirm_del"] = i
            question = f"Delete cell [{i}] ({event['do']})? Undo can bring it back."
            if st.session_state.get("_nb_confirm_del") == i and ask(
                "_nb_confirm_del", question, ("Delete", f"del-yes-{i}"), ("Keep", f"del-no-{i}")
            ):
                del st.session_state["_nb_confirm_del"]
                if cv.with_guard(nb.delete_cell, i):
                    cv.rerun(nb)
            cv.stale_note(nb, i, event)
            if res is not None and just_run:
                cv.show_result(res, event=event, nb=nb)
            elif res is not None:
                with st.expander("What it did", expanded=False):
                    cv.show_result(res, event=event, nb=nb)
            elif (
                event["do"] == "end_turn"
                and i == cursor
                and st.toggle("Preview: completed vs failed vs cancelled", key=f"preview-{i}")
            ):
                with guard():
                    cv.preview(nb, event["turn"])
            cv.edit_cell(nb, i, event, lists)

with st.expander("Compare two cells", expanded=False):
    cv.compare(nb)

# --- add a cell ------------------------------------------------------------------------------

st.subheader("Add a cell")
kind = st.selectbox(
    "Event", kinds(), key="new_kind", format_func=lambda k: {"open_turn": "open_turn (or replace a turn)"}.get(k, k)
)
event = cv.event_form(kind, lists)
if note := st.text_input("note (shown under the cell)", key="f_note"):
    event["note"] = note
where = st.number_input("Insert at position", 0, len(events), len(events), key="f_pos")
if st.button("Add cell", key="add_cell", type="primary"):
    try:
        nb.insert_cell(int(where), cells.compact(event))
    except FormatError as exc:
        st.error(f"Not added: {exc}")
    else:
        for key in [k for k in st.session_state if str(k).startswith("f_")]:
            del st.session_state[key]  # a fresh form, its position at the new end
        cv.rerun(nb, goto=int(where))

nb.save()
to_link(LINK)
