"""Notebook: a scenario as cells, one event each. Run them and watch what memory learns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from memory_core import FormatError
from memory_core.format.checks import EVENT_KINDS
from memory_core.format.scenario import decode
from memory_core.rules.settings import SETTINGS
from memory_core.rules.vocabulary import GRAPHS, READ_CALLS, SURFACES, TURN_END_STATUSES, WORLD_KINDS
from memory_core.rules.weights import ORIGINS
from memory_core.views import notebook as nbk
from pages._ui import NOTEBOOK, guard, inert, notebook, rule_text, use_memory

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"
KINDS = [*WORLD_KINDS, "preference"]


def load(text: str | bytes, name: str) -> None:
    """Open scenario text as a notebook, read and checked exactly as `replay` reads a file."""
    with guard():
        try:
            st.session_state["notebook"] = nbk.load_text(text)
        except FormatError as exc:
            st.error(
                f"{inert(name)} is not a memory scenario: {inert(exc)}. Fix that place in the file and load it again."
            )
            return
        st.session_state["notebook_file"] = name
        use_memory(NOTEBOOK)
        st.rerun()


st.title("Notebook")
with st.expander("Open a scenario", expanded=notebook() is None):
    samples = sorted(p.name for p in SAMPLES.glob("*.json"))
    pick, go = st.columns([4, 1])
    chosen = pick.selectbox("Sample", samples, key="sample_pick", label_visibility="collapsed")
    if go.button("Load sample", key="load_sample", width="stretch"):
        load((SAMPLES / chosen).read_bytes(), chosen)
    upload = st.file_uploader("…or upload a scenario file (memory-scenario/1)", type=["json"], key="upload")
    if upload is not None and st.button("Load upload", key="load_upload"):
        load(upload.getvalue(), upload.name)

nb = notebook()
if nb is None:
    st.info("Load a sample or upload a scenario to start. Each cell is one event; run them one by one.")
    st.stop()
assert nb is not None

scenario = nb["scenario"]
st.subheader(scenario.get("title") or "Untitled scenario")
if scenario.get("description"):
    st.caption(scenario["description"])
events = scenario["events"]
cursor = nb["cursor"]

bar = st.columns([1, 1, 1, 1.4, 1.4])
if bar[0].button("Run next", key="run_next", type="primary", disabled=cursor >= len(events)):
    with guard():
        nbk.run_next(nb)
    st.rerun()
if bar[1].button("Run all", key="run_all", disabled=cursor >= len(events)):
    progress = st.progress(0.0, text="Running cells…")
    with guard():
        while nbk.run_next(nb) is not None:
            progress.progress(nb["cursor"] / max(len(events), 1), text=f"Cell {nb['cursor']} of {len(events)}")
    st.rerun()
if bar[2].button("Reset", key="reset"):
    nbk.reset(nb)
    st.rerun()
bar[3].download_button(
    "Download scenario",
    json.dumps(scenario, indent=2, ensure_ascii=False),
    file_name=st.session_state.get("notebook_file", "scenario.json"),
    mime="application/json",
    key="dl_scenario",
)
bar[4].download_button(
    "Download state",
    json.dumps(nbk.state(nb), indent=2, ensure_ascii=False),
    file_name="state.json",
    mime="application/json",
    key="dl_state",
)
if nb.get("outside"):
    st.warning(
        "This notebook's memory was also changed outside its cells, so replaying the cells (or the downloaded "
        "scenario) would not give it: " + "; ".join(nb["outside"]) + ". Reset to go back to the cells alone."
    )
st.caption(
    f"{cursor} of {len(events)} cells run. The memory in use is this notebook's own scratch memory; "
    "the other pages show it while it is selected in the sidebar."
)


def show_result(res: dict[str, Any], *, compact: bool = False) -> None:
    """What a cell did: refused and why, or its fact changes graph by graph and what rules kept out."""
    if res["status"] == "refused":
        st.error(f"Refused: {res['reason']}. {inert(res['message'])}")
        return
    detail = res["detail"]
    if "taught" in detail:
        t = detail["taught"]
        st.success(f"Taught {t['world']} World, {t['user']} User and {t['flow']} Flow supports (R1, R7 to R9).")
    if detail.get("rule") and detail["rule"] in ("R2", "R5", "R11"):
        st.info(rule_text(detail["rule"]))
    if res["changes"]:
        cols = (
            ["graph", "fact", "weight_after", "status_after"]
            if compact
            else ["graph", "owner", "fact", "change", "weight_before", "weight_after", "status_before", "status_after"]
        )
        st.dataframe(
            pd.DataFrame(res["changes"])[cols],
            hide_index=True,
            width="stretch",
            column_config={
                "weight_before": st.column_config.NumberColumn(format="%.4f"),
                "weight_after": st.column_config.NumberColumn(format="%.4f"),
            },
        )
    for s in res["skipped"]:
        st.warning(
            f"Kept out by {s['rule']}: claim {s['claim']} of record {s['record']}, "
            f"“{s.get('claim_text', '')}”. {s['why']}"
        )
    if detail.get("excluded_records"):
        st.info(
            f"Records {', '.join(detail['excluded_records'])} came from nested work that failed or was "
            "cancelled: they teach nothing (R5)."
        )
    if detail.get("shortcut"):
        sc = detail["shortcut"]
        st.info(
            f"Skipped by a shortcut (R22): memory already answers with weight {sc['weight']:.3f} "
            f"({sc['fact']['graph']} graph)."
        )
    if "result" in detail:
        st.caption(f"Read answered (probes used {detail['probes_used']} of {detail['cap'] or 'no cap'}, R21):")
        st.json(detail["result"], expanded=False)
    if detail.get("changed"):
        st.caption(
            "Settings changed: " + ", ".join(f"{c['setting']} {c['from']} → {c['to']}" for c in detail["changed"])
        )
    if detail.get("erased") or "supports_kept" in detail:
        st.caption(f"Erased: {inert(json.dumps({k: v for k, v in detail.items() if k != 'erased'}))}")


def preview(turn: str) -> None:
    """Side by side: what the turn teaches if it completes, fails or is cancelled now (R1, R2)."""
    outcomes = nbk.preview_end_turn(nb, turn)
    for col, status in zip(st.columns(3), TURN_END_STATUSES, strict=True):
        with col:
            st.markdown(f"**If {status}**")
            res = outcomes[status]
            if res["status"] == "refused":
                st.error(f"{res['reason']}: {inert(res['message'])}")
            elif not res["changes"] and not res["skipped"]:
                st.caption("Teaches nothing." + (f" {rule_text('R2')}" if status != "completed" else ""))
            else:
                show_result(res, compact=True)


checked_events = nbk.events(nb)
for i, event in enumerate(events):
    res = nb["results"].get(str(i))
    mark = (
        ":material/radio_button_unchecked:"
        if res is None
        else ":green[:material/check_circle:]"
        if res["status"] == "ok"
        else ":red[:material/block:]"
    )
    with st.container(border=True):
        head, acts = st.columns([6, 3])
        head.markdown(f"{mark} `[{i}]` **{event['do']}** · {nbk.summary(checked_events[i])}")
        if event.get("note"):
            head.caption(event["note"])
        a = acts.columns(4)
        if a[0].button("▶", key=f"to-{i}", help="Run to here"):
            with guard():
                nbk.run_to(nb, i)
            st.rerun()
        if a[1].button("↑", key=f"up-{i}", help="Move up", disabled=i == 0):
            nbk.move_cell(nb, i, -1)
            st.rerun()
        if a[2].button("↓", key=f"down-{i}", help="Move down", disabled=i == len(events) - 1):
            nbk.move_cell(nb, i, 1)
            st.rerun()
        if a[3].button("✕", key=f"del-{i}", help="Delete this cell"):
            nbk.delete_cell(nb, i)
            st.rerun()
        if res is not None:
            show_result(res)
        elif (
            event["do"] == "end_turn"
            and i == cursor
            and st.toggle("Preview: completed vs failed vs cancelled", key=f"preview-{i}")
        ):
            with guard():
                preview(event["turn"])
        with st.expander("Edit"):
            text = st.text_area(
                "Event (JSON)", json.dumps(event, indent=2, ensure_ascii=False), key=f"edit-{i}", height=180
            )
            if st.button("Save cell", key=f"save-{i}"):
                try:
                    nbk.update_cell(nb, i, decode(text))
                except FormatError as exc:
                    st.error(f"Not saved: {exc}")
                else:
                    st.rerun()


# --- add a cell ------------------------------------------------------------------------------

st.subheader("Add a cell")
kind = st.selectbox(
    "Event", EVENT_KINDS, key="new_kind", format_func=lambda k: {"open_turn": "open_turn (or replace a turn)"}.get(k, k)
)
orgs = [o["id"] for o in scenario.get("organizations", [])]
people = [p["id"] for p in scenario.get("people", [])]


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


event: dict[str, Any] = {"do": kind}
if kind == "start_run":
    c = st.columns(6)
    event |= {
        "run": c[0].text_input("run", key="f_run"),
        "org": c[1].selectbox("org", orgs, key="f_org"),
        "person": c[2].selectbox("person", people, key="f_person"),
        "workflow": c[3].text_input("workflow", key="f_wf") or None,
        "surface": c[4].selectbox("surface", SURFACES, key="f_surface"),
        "ephemeral": c[5].checkbox("ephemeral", key="f_eph"),
    }
elif kind == "open_turn":
    c = st.columns([1, 1, 4, 1])
    event |= {
        "run": c[0].text_input("run", key="f_run"),
        "turn": c[1].text_input("turn", key="f_turn"),
        "request": c[2].text_input("request", key="f_req"),
        "replaces": c[3].text_input("replaces", key="f_repl", help="a turn to replace (R3)") or None,
    }
elif kind in ("record", "step"):
    c = st.columns(3)
    event["turn"] = c[0].text_input("turn", key="f_turn")
    if kind == "step":
        event["step"] = c[1].text_input("step", key="f_step")
        if c[2].checkbox("with a record", key="f_with_rec", value=True):
            event["record"] = record_fields("f_")
    else:
        event["within"] = c[1].text_input("within (nested work)", key="f_within") or None
        event |= record_fields("f_")
elif kind in ("call", "return"):
    c = st.columns(3)
    event |= {
        "turn": c[0].text_input("turn", key="f_turn"),
        "work": c[1].text_input("work", key="f_work", help="workflow:NAME, agent:NAME or debater:NAME"),
    }
    if kind == "return":
        event["status"] = c[2].selectbox("status", TURN_END_STATUSES, key="f_status")
elif kind == "read":
    c = st.columns(4)
    event |= {
        "turn": c[0].text_input("turn", key="f_turn"),
        "call": c[1].selectbox("call", READ_CALLS, key="f_call"),
        "step": c[2].text_input("step", key="f_step") or None,
        "within": c[3].text_input("within", key="f_within") or None,
    }
    args = st.text_area("args (JSON)", '{"name": ""}', key="f_args", height=68)
    try:
        event["args"] = decode(args)
    except FormatError as exc:
        st.error(f"args: {exc}.")
elif kind == "end_turn":
    c = st.columns(2)
    event |= {
        "turn": c[0].text_input("turn", key="f_turn"),
        "status": c[1].selectbox("status", TURN_END_STATUSES, key="f_status"),
    }
elif kind == "end_run":
    event["run"] = st.text_input("run", key="f_run")
elif kind == "delete_run":
    c = st.columns(2)
    event |= {"run": c[0].text_input("run", key="f_run"), "by": c[1].selectbox("by", people, key="f_by")}
elif kind == "delete_account":
    event["person"] = st.selectbox("person", people, key="f_person")
elif kind == "set_settings":
    c = st.columns(2)
    event |= {"org": c[0].selectbox("org", orgs, key="f_org"), "by": c[1].selectbox("by", people, key="f_by")}
    chosen_settings = st.multiselect("settings to set", [s.name for s in SETTINGS], key="f_names")
    event["settings"] = {n: st.toggle(n, key=f"f_set_{n}") for n in chosen_settings}
else:  # dispute, retract
    c = st.columns(3)
    event |= {
        "org": c[0].selectbox("org", orgs, key="f_org"),
        "by": c[1].selectbox("by", people, key="f_by"),
        "graph": c[2].selectbox("graph", GRAPHS, key="f_graph"),
    }
    event["fact"] = fact_fields("f_fact_")

note = st.text_input("note (shown under the cell)", key="f_note")
if note:
    event["note"] = note
where = st.number_input("Insert at position", 0, len(events), len(events), key="f_pos")
if st.button("Add cell", key="add_cell", type="primary"):
    try:
        nbk.insert_cell(nb, int(where), nbk.compact(event))
    except FormatError as exc:
        st.error(f"Not added: {exc}")
    else:
        for key in [k for k in st.session_state if str(k).startswith("f_")]:
            del st.session_state[key]  # a fresh form, its position at the new end
        st.rerun()
