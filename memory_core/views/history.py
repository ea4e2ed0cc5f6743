"""History for people (R32): each moment said, what changed between two, a weight through time; pure but fact_names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from operator import itemgetter
from typing import Any

from ..plain import Obj
from ..rules.weights import Score, score
from ..rules.wording import fact_label
from ..usecases.facade import MemoryService
from ..usecases.shapes import FactHistory
from .compare import arrow, fact_key

#: A read's row as given (a shape of usecases/shapes.py, or a plain dict): read, never changed.
Row = Mapping[str, Any]


#: Each kind of moment in words, from its `run`, `turn`, `detail`, `by` (its person) and `who` (or someone whose
#: account is deleted); the second form once its run is erased (R33: the moment of an erasure names no erased id).
_SAID = {
    "setup": ("memory set up (organizations, people, workflows)",) * 2,
    "run_started": ("run {run} started{by}", "a run (deleted since) started"),
    "turn_opened": ("{turn} opened in {run}{replacing}", "a turn opened in a run deleted since"),
    "step": ("step {detail} in {turn} of {run}", "step {detail} in a run deleted since"),
    "turn_ended": ("{turn} {detail} in {run}", "a turn {detail} in a run deleted since"),
    "run_ended": ("run {run} ended",) * 2,
    "run_deleted": ("a run deleted{by}",) * 2,
    "account_deleted": ("an account deleted",) * 2,
    "dispute": ("{who} disputed a {graph} fact",) * 2,
    "retract": ("{who} retracted a {graph} fact",) * 2,
}


def moment_label(m: Row, names: dict[str, str] | None = None, facts: Mapping[int, str] | None = None) -> str:
    """A moment as a person names it ("t3 completed in r1"), a correction with its fact (R28), erasures said (R33)."""
    by = (names or {}).get(m["person"], m["person"]) if m["person"] else None  # None: no one, or an erased account
    who, what, detail = by or "someone (account deleted)", m["what"], m["detail"]
    named = [facts[i] for i in m["facts"] if i in facts] if facts and what in ("dispute", "retract") else []
    if named:  # a correction, its fact as it stood then
        return f"{who} {what.rstrip('e')}ed {named[0]} ({detail or 'world'})"
    if what == "settings":
        parts = (part.rsplit(" ", 1) for part in (detail or "").split(", ") if part)
        return f"{who} turned " + ", ".join(f"{name} {'on' if state == 'on' else 'off'}" for name, state in parts)
    if what == "run_ended" and detail == "erased":
        return "an ephemeral run ended and was erased"
    return _said(m, by, who) if what in _SAID else what


def _said(m: Row, by: str | None, who: str) -> str:
    """A moment in the words `_SAID` has for its kind, the second form once its run is erased (R33)."""
    detail = m["detail"]
    words = {"run": m["run"], "turn": m["turn"], "detail": detail, "by": f" by {by}" if by else "", "who": who}
    return _SAID[m["what"]][0 if m["run"] else 1].format(
        **words, replacing=f", replacing {detail} (R3)" if detail else "", graph=detail or "world"
    )


def fact_names(svc: MemoryService, rows: Iterable[Row], *, org: str | None = None) -> dict[int, str]:
    """The facts the corrections among `rows` name, by id, as they stood then; in `org`'s view only (R23, R28)."""
    moments = sorted({m["n"] for m in rows if m["what"] in ("dispute", "retract")})  # each read once
    return {f["id"]: fact_label(f) for n in moments for f in svc.facts_between(n - 1, n, org=org)[1]}


def graph_name(graph: str, owner: str) -> str:
    """A graph as a diff keys it (`diff --json`): "World acme", "User dana", "Flow run-1"."""
    return f"{graph.capitalize()} {owner}"


def named_graph(label: str, orgs: dict[str, str], people: dict[str, str]) -> str:
    """A diff's graph as people read it (#25): "World · Acme Robotics", "User · Dana Whitfield", "Flow · run-1"."""
    kind, _, owner = label.partition(" ")
    names = orgs if kind == "World" else people if kind == "User" else {}
    return f"{kind} · {names.get(owner, owner)}"


def _changed(old: Row, new: Row) -> Obj | None:
    """A fact's weight, status, supports and disputes from one moment to the other; None if none moved."""
    moved = old["weight"] != new["weight"] or old["status"] != new["status"]
    came = [s for s in new["supports"] if s not in old["supports"]]
    went = [s for s in old["supports"] if s not in new["supports"]]
    disputed = len(new["disputes"]) - len(old["disputes"])
    if not (moved or came or went or disputed):
        return None
    row = {"fact": fact_label(new), "weight": [old["weight"], new["weight"]], "status": [old["status"], new["status"]]}
    return row | {"supports_added": _votes(came), "supports_withdrawn": _votes(went), "disputes_added": disputed}


def _part(old: Row | None, new: Row | None) -> tuple[str, Obj | None]:
    """Where a fact goes in a diff, and its row (None: nothing of it moved)."""
    f = new if old is None else old
    assert f is not None
    row = {"fact": fact_label(f), "weight": f["weight"], "status": f["status"]}
    if old is None:
        return "added", row | {"supports": _votes(f["supports"]), "disputes": len(f["disputes"])}
    return ("gone", row) if new is None else ("changed", _changed(old, new))


def diff(before: Iterable[Row], after: Iterable[Row]) -> Obj:
    """What changed between two moments per graph: facts added, gone and changed, with their supports and disputes."""
    a, b = ({(f["graph"], f["owner"], *fact_key(f)): f for f in facts} for facts in (before, after))
    graphs: dict[str, Obj] = {}
    for k in sorted(set(a) | set(b), key=lambda k: tuple("" if x is None else str(x) for x in k)):
        part, row = _part(a.get(k), b.get(k))
        if row is not None:
            graphs.setdefault(graph_name(*k[:2]), {"added": [], "gone": [], "changed": []})[part].append(row)
    return {g: graphs[g] for g in sorted(graphs, key=lambda g: (("World", "User", "Flow").index(g.split()[0]), g))}


def _votes(supports: list[Obj]) -> list[str]:
    said = [(s, f" ({s['turn']} in {s['run']})" if s["run"] else " (run erased)") for s in supports]
    return [f"{s['origin']} {s['key']}{where}" for s, where in said]


def weight_through_time(h: FactHistory, names: dict[str, str] | None = None) -> list[Obj]:
    """A fact's weight after each moment that changed it, with its causes in words (R3, R23, R25, R28, R32)."""
    names, out = names or {}, []
    for n, causes in groupby(sorted(_causes(h, names), key=itemgetter(0)), key=itemgetter(0)):  # a stable sort
        sc, row = _score_at(n, h), h["moments"].get(n)
        label = moment_label(row, names) if row else "before history was kept"
        out.append(
            {"moment": n, "at": row["at"] if row else None, "weight": sc.weight, "status": sc.status}
            | {"sources": sc.sources, "cause": "; ".join(said for _, said in causes), "moment_label": label}
        )
    return out


def _causes(h: FactHistory, names: Mapping[str, str]) -> list[tuple[int, str]]:
    """What changed a fact's weight, at which moment, in words (R3, R23, R28)."""
    causes = [c for s in h["supports"] for c in _support_causes(s, h["moments"])]
    by = [names.get(d["by"], d["by"]) if d["by"] else "a deleted account" for d in h["disputes"]]
    causes += [(d["since"], f"dispute by {who} (R28)") for d, who in zip(h["disputes"], by, strict=True)]
    retracted = h["retracted_at"]
    return causes + ([(retracted, "retracted by the owner (R28)")] if retracted is not None else [])


def _score_at(n: int, h: FactHistory) -> Score:
    """A fact's score after moment `n`: the supports live then, the disputes made by then (R25-R28)."""
    live = [s for s in h["supports"] if s["since"] <= n and (s["until"] is None or s["until"] > n)]
    votes = [d["contribution"] for d in h["disputes"] if d["since"] <= n]
    gone = h["retracted_at"] is not None and h["retracted_at"] <= n
    return score([(s["origin"], s["key"], s["contribution"]) for s in live], votes, retracted=gone)


def _support_causes(s: Row, moments: Mapping[int, Row]) -> list[tuple[int, str]]:
    """A support's arrival and its withdrawal by a replacement (R3); another organization's, sourceless (R23)."""
    where = f"{s['turn']} in {s['run']}" if s["run"] else "a run erased since"
    said = f"{s['origin']} {s['key']}"
    if s.get("elsewhere"):
        said, where = s["origin"], "another organization's run, withheld (R23)"
    out = [(s["since"], f"support from {said} ({where})")]
    if s["until"] is not None:
        m = moments.get(s["until"], {})
        replaced = m.get("turn") and s["turn"] and not s.get("elsewhere")
        by = f" when {m['turn']} replaced {s['turn']}" if replaced else " by a replacement (R3)"
        out.append((s["until"], f"support from {said} withdrawn{by}"))
    return out


# --- the look-back commands' text (`history`, `diff`) ----------------------------------------------


def history_lines(rows: Sequence[Row], names: dict[str, str], facts: Mapping[int, str] | None = None) -> list[str]:
    """`history`: each moment's number, time and what happened (a correction's fact named, R28), lined up."""
    width = len(str(rows[-1]["n"])) if rows else 1
    stamp = max((len(m["at"]) for m in rows), default=0)
    head = f"{0:>{width}}  {'':<{stamp}}  before history was kept"
    return [head, *(f"{m['n']:>{width}}  {m['at']:<{stamp}}  {moment_label(m, names, facts)}" for m in rows)]


def tidy(value: object) -> object:
    """A diff's numbers to 12 decimal places: a weight's float noise goes, every real difference stays."""
    if isinstance(value, float):
        return round(value, 12)
    if isinstance(value, dict):
        return {k: tidy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [tidy(v) for v in value]
    return value


def diff_lines(out: Obj) -> list[str]:
    """`diff`: the two moments, then per graph the facts added, gone and changed, each with why."""
    lines = [
        f"{word} moment {end['moment']}: {end['what']}" + (f" ({end['at']})" if end["at"] else "")
        for word, end in (("from", out["from"]), ("to", out["to"]))
    ]
    if not (graphs := out["graphs"]):
        lines.append("no fact changed between them")
    for name, g in graphs.items():
        lines.append(f"{name}: {len(g['added'])} added, {len(g['gone'])} gone, {len(g['changed'])} changed")
        lines += [f"  + {f['fact']}  {f['weight']:.3f} {f['status']}  ({', '.join(f['supports'])})" for f in g["added"]]
        lines += [f"  - {f['fact']}  was {f['weight']:.3f} {f['status']}" for f in g["gone"]]
        lines += [_changed_line(f) for f in g["changed"]]
    return lines


def _changed_line(f: Obj) -> str:
    """`diff`: a fact that changed, its weight and status both ways, and why (supports, disputes)."""
    (w0, w1), (s0, s1) = f["weight"], f["status"]
    why = [*(f"+ {v}" for v in f["supports_added"]), *(f"- {v}" for v in f["supports_withdrawn"])]
    if n := f["disputes_added"]:
        why.append(f"{n:+d} dispute" + ("" if abs(n) == 1 else "s"))
    if s1 == "retracted" != s0:
        why.append("retracted by the owner, R28")
    status = s1 if s0 == s1 else f"{s0} -> {s1}"
    return f"  ~ {f['fact']}  {w0:.3f} {arrow(w0, w1)} {w1:.3f} {status}" + (f"  ({', '.join(why)})" if why else "")
