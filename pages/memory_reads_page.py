"""Memory reads: what an open turn sees (R18 to R23), tried by hand against its budget."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memory_core import MemoryService, Refusal
from memory_core.plain import Obj
from memory_core.views.reads_trace import readable_turns
from pages._links import from_link, to_link
from pages._tables import wrapped
from pages._ui import guard, inert, keep, note_change, page, read
from pages._words import cite, markdown, probes_used, refused

#: An answer's item as a row of its table, by the call that answered it.
ROW = {
    "GraphSource": lambda s: {
        "Source": s["key"] if s["key"] is not None else "another organization's (R23)",
        "Origin": s["origin"],
        "Contribution l": f"{s['contribution']:.3f}",
        "Record": s["record"] or ("withheld (R23)" if s["key"] is None else "erased (R29)"),
        "Excerpt": s["excerpt"] if s["excerpt"] is not None else "(none)",
    },
    "GraphExpand": lambda f: {
        "Subject": f["subject"]["name"],
        "Relation": f["relation"],
        "Object": f["object"].get("name", f["object"].get("value")),
        "Weight": f["weight"],
        "Independent sources": f["sources"],
        "Disputes": len(f["disputes"]),
    },
    "GraphResolve": lambda e: {
        "Name": e["name"],
        "Kind": e["kind"],
        "Aliases": ", ".join(e["aliases"]) or "none",
        "Graph": e["graph"],
    },
}

ctx, org = page("Memory reads")
LINKED = {"turn": "r_turn_id", "call": "r_call", "name": "r_name", "kind": "r_kind", "graph": "r_graph"}
from_link(LINKED)

with guard():
    runs = read(ctx, MemoryService.runs, org)
    if not (open_turns := readable_turns(runs, ctx.person)):
        st.info(
            cite(
                f"No open turn of yours in this organization: a person reads memory only through a turn of their "
                f"own run (R19, R20), since a turn sees its person's User graph. You act as {inert(ctx.person)}; "
                "open a turn in the Notebook (an open_turn cell), or act as the person whose turn it is."
            )
        )
        st.stop()
    run_of = {t: r for r, t in open_turns}
    keep("r_turn_id", list(run_of))
    turn_id = st.selectbox("Open turn", list(run_of), key="r_turn_id", format_func=lambda t: f"{t} in run {run_of[t]}")
    view = read(ctx, MemoryService.turn_view, turn_id)
    markdown("**The map its instructions carry** (taken when it opened, R18)")
    st.info(inert(view["paragraph"]))
    cap = view["cap"]
    st.progress(
        min(view["probes_used"] / cap, 1.0) if cap else 0.0,
        text=cite(
            f"{probes_used(view['probes_used'], cap).capitalize()} "
            "(Budget.MemoryProbes, R21; refused calls do not count)"
        ),
    )

    model_steps = [s["id"] for s in view["steps"]]
    c = st.columns([2, 2, 2])
    call = c[0].selectbox("Call", ["GraphResolve", "GraphExpand", "GraphSource"], key="r_call")
    who = c[1].selectbox(
        "Made by",
        ["the turn's own model", *model_steps],
        key="r_who",
        help=cite("Reads are offered to the turn's model and to model steps admitting calls (R19)."),
    )
    graph = c[2].selectbox("Graph", ["world", "user", "flow"], key="r_graph", disabled=call == "GraphResolve")
    name = st.text_input("Entity name", key="r_name")
    kind = st.text_input("Kind (optional for GraphResolve)", key="r_kind")
    args: Obj
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
    to_link(LINKED)
    b = st.columns(2)
    if b[0].button("Read", key="r_go", type="primary", disabled=not name):
        try:
            out = ctx.svc.read(turn_id, call=call, args=args, step=step)
        except Refusal as exc:
            st.session_state["r_last"] = {"call": call, "refused": exc.message, "reason": exc.reason, "by": who}
        else:
            note_change(ctx, f"Memory reads page: {call} in {turn_id} (a probe counted)")
            st.session_state["r_last"] = {"call": call, "result": out.result}
        st.rerun()
    if b[1].button(
        "Same call from nested work",
        key="r_nested",
        disabled=not name,
        help=cite("A called workflow, agent or debater reads no graph (R4). Tried in a sandbox."),
    ):
        with ctx.svc.sandbox() as box:
            box.call(turn_id, work="agent:explorer")
            try:
                box.read(turn_id, call=call, args=args, within="agent:explorer")
            except Refusal as exc:  # the refusal is the point
                st.session_state["r_last"] = {"call": call, "refused": exc.message, "reason": exc.reason}
        st.rerun()
    last = st.session_state.get("r_last")
    if last and "refused" in last:
        st.error(refused(last["reason"], f"{last.get('by', 'from nested work')}: {last['refused']}"))
    elif last and not last["result"]:
        st.info(cite("Empty: nothing there, or nothing this turn may see (R20, R23); a read reveals nothing else."))
    elif last:
        table = pd.DataFrame([ROW[last["call"]](x) for x in last["result"]])
        if last["call"] == "GraphSource":
            wrapped(table)  # each excerpt read whole, the rules it cites linked (#25)
        else:
            st.dataframe(table, hide_index=True)
