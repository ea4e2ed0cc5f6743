"""A notebook cell for people: its line, its note's outcome, a failed turn's evidence (R2), memory between (R32)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from ..plain import Obj
from ..rules.wording import fact_label
from ..usecases.facade import MemoryService
from . import history
from .text import plural

FACT_KEYS = frozenset({"subject", "relation", "object"})
GONE = ["no support left"]

# --- a note and the outcome it was written for ------------------------------------------------


def outcome(res: Obj) -> Obj:
    """What a note is judged against: applied or refused, what a turn taught (R1), its rule (R2, R5)."""
    d = res.get("detail") or {}
    return {"status": res["status"], "reason": res.get("reason"), "taught": d.get("taught"), "rule": d.get("rule")}


def stale(event: Obj, written_for: Obj | None, res: Obj | None) -> bool:
    """A note written for another outcome than the cell's result now (after an edit of the story)."""
    return bool(event.get("note")) and written_for is not None and res is not None and outcome(res) != written_for


def outcome_words(o: Obj) -> str:
    if o["status"] == "refused":
        return f"refused ({o['reason']})"
    if t := o.get("taught"):
        return f"taught {t['world']} World, {t['user']} User and {t['flow']} Flow supports"
    return f"applied, {o['rule']}" if o.get("rule") else "applied"


def evidence(events: list[Obj], results: Obj, turn: str, upto: int) -> list[str]:
    """The records the cells before `upto` kept for `turn`, a failed turn's evidence (R2, R6)."""
    out = []
    for i in range(min(upto, len(events))):
        e, r = events[i], results.get(str(i))
        if r and r["status"] == "ok" and e.get("turn") == turn:
            if e["do"] == "open_turn":  # the request is the turn's record #0 (R6)
                out.append(f"{turn}#0")
            elif e["do"] in ("record", "step") and r["detail"].get("record"):
                out.append(r["detail"]["record"])
    return out


def run_of(events: list[Obj], turn: str) -> str | None:
    """The run a turn opened in, as the cells say (None when no cell opens it)."""
    return next((e["run"] for e in events if e.get("do") == "open_turn" and e.get("turn") == turn), None)


# --- the memory compared between cells, read from memory's history (R32) ----------------------


def _row(name: str, f: Obj, change: str, weights: tuple, statuses: tuple, *, arrow: str, why: list[str]) -> Obj:
    """One fact compared, as the Notebook's table says it (the weight and status from A to B)."""
    graph, owner = name.split(" ", 1)
    (wa, wb), (sa, sb) = (("absent" if w is None else f"{w:.4f}") for w in weights), statuses
    row = {"Graph": graph.lower(), "Owner": owner, "Fact": f["fact"], "Change": change, "Weight A → B": f"{wa} → {wb}"}
    return row | {"↑↓": arrow, "Status A → B": f"{sa or 'absent'} → {sb or 'absent'}", "Why": "; ".join(why)}


def _changed(name: str, f: Obj) -> Obj:
    (wa, wb), (sa, sb), n = f["weight"], f["status"], f["disputes_added"]
    what = "status changed" if sa != sb else "weight changed" if wa != wb else "supports changed"
    why = [f"+ {v}" for v in f["supports_added"]] + [f"\u2212 withdrawn: {v}" for v in f["supports_withdrawn"]]
    why += [plural(n, "dispute")] if n else []
    return _row(name, f, what, (wa, wb), (sa, sb), arrow=history.arrow(wa, wb), why=why)


def compare(svc: MemoryService, moments: Obj, a: int, b: int) -> list[Obj]:
    """What differs in memory after cells `a` and `b` (-1: the setup), from its history (R32, R33)."""
    a, b = sorted((a, b))
    rows = []
    for name, parts in history.diff(*svc.facts_between(moments[str(a)], moments[str(b)])).items():
        for f in parts["added"]:
            why = [f"+ {v}" for v in f["supports"]] + ([f"{f['disputes']} disputed"] if f["disputes"] else [])
            rows.append(_row(name, f, "added", (None, f["weight"]), (None, f["status"]), arrow="new", why=why))
        for f in parts["gone"]:
            rows.append(_row(name, f, "gone", (f["weight"], None), (f["status"], None), arrow="gone", why=GONE))
        rows += [_changed(name, f) for f in parts["changed"]]
    return rows


def facts_in_memory(svc: MemoryService, moments: Obj, ran: int) -> dict[int, str]:
    """The facts the cells run changed that memory still holds, by id, each as a label."""
    if ran <= 0:
        return {}
    after = svc.facts_between(moments["-1"], moments[str(ran - 1)])[1]
    return {f["id"]: f"{f['graph']} \u00b7 {f['owner']} \u00b7 {fact_label(f)}" for f in after}


def weight_series(svc: MemoryService, fact_id: int, moments: Obj, ran: int) -> list[float | None]:
    """A fact's weight after each cell run (None where it did not exist), through time (R32)."""
    steps = history.weight_through_time(svc.fact_history(fact_id))
    then = ([s["weight"] for s in steps if s["moment"] <= moments[str(i)]] for i in range(ran))
    return [weights[-1] if weights else None for weights in then]


# --- cells as people read and write them ---------------------------------------------------


def _record_line(e: Obj) -> str:
    r = e.get("record") or {}  # a checked event keeps the record's fields under `record`
    head = f"step {e['step']} in {e['turn']}" if e["do"] == "step" else f"record in {e['turn']}"
    within = f" within {r['within']}" if r.get("within") else ""
    src = f" from {r.get('origin')} {r.get('source') or ''}".rstrip() if r else ""
    return f"{head}{within}{src}: {plural(len(r.get('claims', [])), 'claim')}"


def _read_line(e: Obj) -> str:
    who = f" by step {e['step']}" if e.get("step") else (f" within {e['within']}" if e.get("within") else "")
    return f"{e['call']}{who} in {e['turn']}: {read_args(e.get('args', {}))}"


def _open_turn_line(e: Obj) -> str:
    req = e["request"] if isinstance(e["request"], str) else e["request"].get("text", "")
    rep = f", replacing {e['replaces']}" if e.get("replaces") else ""
    return f"turn {e['turn']} opens in {e['run']}{rep}: “{req}”"


def _correction_line(e: Obj) -> str:
    return f"{e['by']} {e['do']}s {fact_label(e['fact'])} ({e.get('graph', 'world')})"


#: One line that says what a cell of each kind does.
LINES: dict[str, Callable[[Obj], str]] = {
    "start_run": lambda e: (
        f"{e['person']} starts run {e['run']} in {e['org']} "
        f"({e.get('surface', 'workflow')}{', ephemeral' if e.get('ephemeral') else ''})"
    ),
    "open_turn": _open_turn_line,
    "record": _record_line,
    "step": _record_line,
    "call": lambda e: f"call {e['work']} in {e['turn']}",
    "return": lambda e: f"return {e['work']} in {e['turn']} → {e['status']}",
    "read": _read_line,
    "end_turn": lambda e: f"turn {e['turn']} ends {e['status']}",
    "end_run": lambda e: f"run {e['run']} ends",
    "delete_run": lambda e: f"{e['by']} deletes run {e['run']}",
    "delete_account": lambda e: f"{e['person']} deletes their account",
    "set_settings": lambda e: f"{e['by']} sets {json.dumps(e['settings'])} in {e['org']}",
    "dispute": _correction_line,
    "retract": _correction_line,
}


def summary(e: Obj) -> str:
    """One line that says what a cell does."""
    return LINES[e["do"]](e)


def read_args(args: Obj) -> str:
    """A read's arguments as people say them: a name, `name (kind)`, a fact, `key value`."""
    said = []
    for key, value in args.items():
        if isinstance(value, dict) and FACT_KEYS <= value.keys():
            said.append(fact_label(value))
        elif isinstance(value, dict) and "name" in value:
            said.append(f"{value['name']} ({value['kind']})" if value.get("kind") else str(value["name"]))
        elif key == "name":
            said.append(str(value))
        else:
            said.append(f"{key} {json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value}")
    return ", ".join(said) or "no arguments"


#: The keys of a read's answer whose value an erasure nulls (R29, R30): said "(erased)", never None.
ERASABLE = frozenset({"run", "turn", "record", "excerpt", "person", "by"})


def answer_rows(result: object) -> list[dict[str, object]]:
    """A read's answer as table rows, in the words the pages use (facts, names, rounded numbers)."""
    items = result if isinstance(result, list) else [result] if isinstance(result, dict) else []
    return [_answer_row(item) if isinstance(item, dict) else {"answer": item} for item in items]


def _answer_row(item: Obj) -> dict[str, object]:
    is_fact = FACT_KEYS <= item.keys()
    row: dict[str, object] = {"fact": fact_label(item)} if is_fact else {}
    return row | {k: _answer_value(k, v) for k, v in item.items() if not (is_fact and k in FACT_KEYS)}


def _answer_value(key: str, value: object) -> object:
    if value is None:  # a pointer R29 or R30 erased (a support's run, turn, record, excerpt)
        return "(erased)" if key in ERASABLE else "—"
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return value.get("name", value.get("value", json.dumps(value, ensure_ascii=False)))
    if isinstance(value, list):
        return ", ".join(str(v.get("name", v) if isinstance(v, dict) else v) for v in value)
    return value


def matching(events: list[Obj], checked: list[Obj], query: str) -> list[int]:
    """The cells holding every word of the query; `#12` is cell 12 alone, `12` also its text."""
    if not (words := query.casefold().split()):
        return list(range(len(events)))
    out = []
    for i, (e, c) in enumerate(zip(events, checked, strict=True)):
        hay = f"{e['do']} {summary(c)} {json.dumps(e, ensure_ascii=False)}".casefold()  # its line, note and JSON
        if all(w == f"#{i}" if re.fullmatch(r"#\d+", w) else (w in hay or w == str(i)) for w in words):
            out.append(i)
    return out


def claim_from(*, graph: str, subject: str, subject_kind: str, relation: str, obj: str, object_kind: str) -> Obj:
    """A claim from form fields; an object kind of `value` makes a literal."""
    target: Obj = {"value": obj} if object_kind == "value" else {"name": obj, "kind": object_kind}
    return {"graph": graph, "subject": {"name": subject, "kind": subject_kind}, "relation": relation, "object": target}


def compact(event: Obj) -> Obj:
    """Drop empty optional fields a form left blank."""
    return {k: v for k, v in event.items() if v not in (None, "", [], {}) or k in ("claims", "settings", "args")}


def labels(events: list[Obj], checked: list[Obj]) -> list[str]:
    """Each cell as "Jump to" lists it: its place, its kind and what it names, cut at 110 characters."""
    return [f"[{i}] {e['do']} · {summary(c)}"[:110] for i, (e, c) in enumerate(zip(events, checked, strict=True))]
