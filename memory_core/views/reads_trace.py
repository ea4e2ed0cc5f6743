"""Reads in words: the open turns a person may read through (R19, R20), a turn's recall trace (#38, point 7)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from ..plain import Obj
from ..rules.visibility import reads_through
from ..usecases.shapes import KeptRead, RunRow

#: A page's words for a text: `esc` escapes it.
Words = Callable[[str], str]


class Link(Protocol):  # a page's link from a text to Fact weights, for `q` (the text if None) in `graph`
    def __call__(self, text: str, q: str | None = None, graph: str | None = None, /) -> str: ...


def readable_turns(runs: Iterable[RunRow], person: str | None) -> list[tuple[str, str]]:
    """(run, turn) of each open turn of a run still going whose person is `person` (R19, R20), in the runs' order."""
    return [
        (r["id"], t["id"])
        for r in runs
        if not r["ended"] and reads_through(person, runs_person=r["person"])
        for t in r["turns"]
        if t["status"] == "open"
    ]


def asked(r: KeptRead, esc: Words) -> str:
    """What a read asked, in a few words."""
    a = r["args"]
    if r["call"] == "GraphResolve":
        words = " by words" if a.get("match") == "words" else ""
        return f"GraphResolve “{esc(str(a.get('name', '')))}”{words}"
    if r["call"] == "GraphExpand":
        e = a.get("entity") or {}
        return f"GraphExpand {esc(str(e.get('name', '')))} ({esc(str(e.get('kind', '')))}) in {a.get('graph', 'world')}"
    f = a.get("fact") or {}
    obj = f.get("object") or {}
    said = [(f.get("subject") or {}).get("name", ""), f.get("relation", ""), obj.get("name", obj.get("value", ""))]
    return "GraphSource " + " ".join(esc(str(w)) for w in said)


def told(r: KeptRead, esc: Words, link: Link) -> str:
    """What a read was told: names with graphs, facts with weights, supports with origins; or its refusal."""
    if r["outcome"] != "ok":
        return f"refused, {r['outcome']}: {esc(r['message'] or '')}"
    hits = r["result"] or []
    if not hits:  # an exact resolve that found nothing was told what is near (R23)
        return f"told nothing by that name; near: {_names(r['near'], esc, link)}" if r["near"] else "told nothing"
    if r["call"] == "GraphResolve":
        return "told " + _names(hits, esc, link)
    if r["call"] == "GraphExpand":
        return "told " + "; ".join(_fact(h, esc, link, r["args"].get("graph", "world")) for h in hits)
    return "told " + "; ".join(_support(h, esc) for h in hits)


def _names(found: list[Obj], esc: Words, link: Link) -> str:
    """Names a read was told, each with its kind and graph."""
    return ", ".join(f"{link(h['name'])} ({esc(h['kind'])}, {h['graph']})" for h in found)


def _fact(h: Obj, esc: Words, link: Link, graph: str) -> str:
    """A fact a read was told, its names linked, its weight linked to that fact's (a value not linked)."""
    obj = h["object"]["name"] if "name" in h["object"] else str(h["object"].get("value", ""))
    end = link(obj) if "name" in h["object"] else esc(obj)
    weight = link(f"{h['weight']:.6g}", f"{h['subject']['name']} {h['relation']} {obj}", graph)
    return f"{link(h['subject']['name'])} {esc(h['relation'])} {end} at {weight}"


def _support(h: Obj, esc: Words) -> str:
    """A support a read was told: its origin, key and contribution."""
    return f"{h['origin']} {esc(h['key'] or '(elsewhere, R23)')} {h['contribution']:+.3g}"


def trace_lines(reads: list[KeptRead], esc: Words, link: Link) -> list[str]:
    """One line per read, in the order made: what it asked, who in the turn made it (R4, R19), what it was told."""
    lines = []
    for r in reads:
        by = f"by step {esc(r['step'])}" if r["step"] else "by the turn's model"
        by = f"from {esc(r['within'])}" if r["within"] else by
        lines.append(f"{asked(r, esc)} {by}: {told(r, esc, link)}")
    return lines
