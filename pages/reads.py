"""Memory reads: what an open turn sees (R18 to R23), tried by hand against its budget."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memory_core import Refusal
from pages._ui import guard, inert, note_change, page

ctx, org = page("Memory reads")

with guard():
    runs = ctx.svc.runs(org)
    open_turns = [(r["id"], t["id"]) for r in runs for t in r["turns"] if t["status"] == "open" and not r["ended"]]
    if not open_turns:
        st.info("No open turn in this organization. Open one in the Notebook (an open_turn cell) to try reads.")
        st.stop()
    run_id, turn_id = st.selectbox("Open turn", open_turns, key="r_turn", format_func=lambda x: f"{x[1]} in run {x[0]}")
    view = ctx.svc.turn_view(turn_id)
    st.markdown("**The map its instructions carry** (taken when it opened, R18)")
    st.info(inert(view["paragraph"]))
    cap = view["cap"]
    st.progress(
        min(view["probes_used"] / cap, 1.0) if cap else 0.0,
        text=f"Probes used: {view['probes_used']} of {cap if cap is not None else 'no cap'} "
        "(Budget.MemoryProbes, R21; refused calls do not count)",
    )

    model_steps = [s["id"] for s in view["steps"]]
    c = st.columns([2, 2, 2])
    call = c[0].selectbox("Call", ["GraphResolve", "GraphExpand", "GraphSource"], key="r_call")
    who = c[1].selectbox(
        "Made by",
        ["the turn's own model", *model_steps],
        key="r_who",
        help="Reads are offered to the turn's model and to model steps admitting calls (R19).",
    )
    graph = c[2].selectbox("Graph", ["world", "user", "flow"], key="r_graph", disabled=call == "GraphResolve")
    name = st.text_input("Entity name", key="r_name")
    kind = st.text_input("Kind (optional for GraphResolve)", key="r_kind")
    args: dict = {}
    if call == "GraphResolve":
        args = {"name": name} | ({"kind": kind} if kind else {})
    elif call == "GraphExpand":
        args = {"entity": {"name": name, "kind": kind}, "graph": graph}
    else:
        f = st.columns(3)
        rel = f[0].text_input("Relation", key="r_rel")
        obj = f[1].text_input("Object (name or value)", key="r_obj")
        okind = f[2].text_input("Object kind (empty: a value)", key="r_okind")
        target = {"name": obj, "kind": okind} if okind else {"value": obj}
        args = {"fact": {"subject": {"name": name, "kind": kind}, "relation": rel, "object": target}, "graph": graph}
    step = None if who == "the turn's own model" else who
    b = st.columns(2)
    if b[0].button("Read", key="r_go", type="primary", disabled=not name):
        try:
            out = ctx.svc.read(turn_id, call=call, args=args, step=step)
        except Refusal as exc:
            st.session_state["r_last"] = {"call": call, "refused": f"{exc.reason}: {exc.message}", "by": who}
        else:
            note_change(ctx, f"Memory reads page: {call} in {turn_id} (a probe counted)")
            st.session_state["r_last"] = {"call": call, "result": out.result}
        st.rerun()
    if b[1].button(
        "Same call from nested work",
        key="r_nested",
        disabled=not name,
        help="A called workflow, agent or debater reads no graph (R4). Tried in a sandbox.",
    ):
        with ctx.svc.sandbox() as box:
            box.call(turn_id, work="agent:explorer")
            try:
                box.read(turn_id, call=call, args=args, within="agent:explorer")
            except Refusal as exc:  # the refusal is the point
                st.session_state["r_last"] = {"call": call, "refused": f"{exc}"}
        st.rerun()
    last = st.session_state.get("r_last")
    if last:
        if "refused" in last:
            st.error(f"Refused ({inert(last.get('by', 'from nested work'))}): {inert(last['refused'])}")
        elif not last["result"]:
            st.info("Empty: nothing there, or nothing this turn may see (R20, R23); a read reveals nothing else.")
        elif last["call"] == "GraphSource":
            rows = pd.DataFrame(last["result"])
            rows["pointer"] = rows["record"].map(lambda r: r or "erased (R29)")
            st.dataframe(
                rows[["key", "origin", "contribution", "pointer", "excerpt"]], hide_index=True, width="stretch"
            )
        elif last["call"] == "GraphExpand":
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "subject": f["subject"]["name"],
                            "relation": f["relation"],
                            "object": f["object"].get("name", f["object"].get("value")),
                            "weight": f["weight"],
                            "sources": f["sources"],
                        }
                        for f in last["result"]
                    ]
                ),
                hide_index=True,
                width="stretch",
            )
        else:
            st.dataframe(pd.DataFrame(last["result"]), hide_index=True, width="stretch")
