"""A focus's neighbourhood as the Graphs page draws it (#39): each entity's heaviest facts, never the whole."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlmodel import Session

from ..plain import Obj
from ..rules.keys import name_key
from . import words
from .driver import Driver, driver_of

#: Facts read per entity, heaviest first: more than a drawing of 60 nodes shows, so "+N more" opens some.
PER = 30
#: Entities of a ring whose own facts are read (by their heaviest fact): those a drawing holds, and a few more.
RING = 16
#: Entities a search lists.
FOUND = 12

_ENDS = """SELECT f.id, f.relation, f.value, f.status, f.weight, f.sources, s.name, s.kind, o.name, o.kind,
 (SELECT count(*) FROM support u WHERE u.fact_id = f.id), (SELECT count(*) FROM dispute d WHERE d.fact_id = f.id),
 s.id, o.id, t.e FROM (SELECT id, {end} AS e, ROW_NUMBER() OVER (PARTITION BY {end} ORDER BY weight DESC, id) AS k
 FROM fact WHERE {end} IN ({ids}) AND graph = :g AND owner = :o AND status IN ('active', 'disputed')) t
 JOIN fact f ON f.id = t.id JOIN entity s ON s.id = f.subject_id LEFT JOIN entity o ON o.id = f.object_id
 WHERE t.k <= :n ORDER BY t.e, f.weight DESC, f.id"""
_ONE = "SELECT id, name, kind, active_facts FROM entity WHERE graph = :g AND owner = :o AND key = :k"
_TOP = "SELECT id, name, kind, active_facts FROM entity WHERE graph = :g AND owner = :o ORDER BY active_facts DESC, id"


def _fact(r: tuple[Any, ...]) -> Obj:
    """A row as the drawing reads a fact (store/drawing.py's shape)."""
    obj = {"name": r[8], "kind": r[9]} if r[9] is not None else {"value": r[2]}
    fact = dict(id=r[0], subject={"name": r[6], "kind": r[7]}, relation=r[1], object=obj, status=r[3])
    return fact | dict(weight=r[4], sources=r[5], supports=int(r[10]), disputes=int(r[11]))


def focus_of(db: Driver, graph: str, owner: str, name: str | None) -> tuple[Obj | None, str]:
    """The entity named, else found by words, else the most connected (a Flow graph's: its run's); how found."""
    params, by = {"g": graph, "o": owner}, "name"
    rows = sorted(db.rows(_ONE, params | {"k": name_key(name)}), key=lambda r: -r[3]) if name else []
    if name and not rows and (found := find(db, graph, owner, name)):
        rows, by = db.rows(_ONE, params | {"k": name_key(found[0]["name"])}), "words"
    if not rows:
        rows, by = db.rows(_TOP + " LIMIT 1", params), "run" if graph == "flow" and not name else "most connected"
    return ({"id": rows[0][0], "name": rows[0][1], "kind": rows[0][2], "facts": rows[0][3]} if rows else None), by


def neighbourhood(db: Driver, graph: str, owner: str, focus: Obj, *, depth: int) -> list[Obj]:
    """The facts of the focus and its rings to `depth` and one more (for a click), each entity's PER heaviest."""
    facts: dict[int, Obj] = {}
    seen, ring = {focus["id"]}, [focus["id"]]
    for _ in range(depth + 1):
        if not ring:  # nothing further (an entity erased meanwhile): no empty IN list
            break
        nxt: dict[int, None] = {}
        for r in sorted(_ring(db, graph, owner, ring), key=lambda r: (-r[4], r[0])):  # the next ring, heaviest first
            facts.setdefault(r[0], _fact(r))
            nxt |= dict.fromkeys(i for i in (r[12], r[13]) if i is not None and i not in seen)
        seen |= nxt.keys()
        ring = list(nxt)[:RING]
    return sorted(facts.values(), key=lambda f: (-f["weight"], f["id"]))


def _ring(db: Driver, graph: str, owner: str, ring: list[int]) -> list[tuple[Any, ...]]:
    """Each entity's PER heaviest facts as subject, then as object, in the ring's order: one query a direction."""
    params = {"g": graph, "o": owner, "n": PER} | {f"e{i}": e for i, e in enumerate(ring)}
    ids = ", ".join(f":e{i}" for i in range(len(ring)))
    by: dict[tuple[str, int], list[tuple[Any, ...]]] = defaultdict(list)
    for end in ("subject_id", "object_id"):
        for r in db.rows(_ENDS.format(end=end, ids=ids), params):
            by[end, r[14]].append(r)
    return [r for e in ring for end in ("subject_id", "object_id") for r in by[end, e]]


def find(db: Driver, graph: str, owner: str, text: str) -> list[Obj]:
    """GraphResolve's words matching (store/words.py) in one graph: up to FOUND entities with their facts counted."""
    found = words.find(db, {graph: owner}, text)[:FOUND]
    counts = {
        (r[1], r[2]): r[3] for e in found for r in db.rows(_ONE, {"g": graph, "o": owner, "k": name_key(e["name"])})
    }
    return [
        {"name": e["name"], "kind": e["kind"], "graph": graph, "facts": counts.get((e["name"], e["kind"]), 0)}
        for e in found
    ]


def focus_read(s: Session, graph: str, owner: str, name: str | None, *, depth: int) -> Obj:
    """The focus (`focus_of`), how it was found (`by`) and its neighbourhood's facts, in the use case's transaction."""
    with driver_of(s) as db:
        focus, by = focus_of(db, graph, owner, name)
        return {"focus": focus, "by": by, "facts": neighbourhood(db, graph, owner, focus, depth=depth) if focus else []}


def find_read(s: Session, graphs: dict[str, str], text: str) -> list[Obj]:
    """`find` in each of these graphs (graph -> owner), in the use case's transaction."""
    with driver_of(s) as db:
        return [e for g, o in graphs.items() for e in find(db, g, o, text)]
