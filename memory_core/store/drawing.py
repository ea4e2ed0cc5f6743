"""Facts as the dashboard draws and lists them (the heaviest), a focus's neighbourhood (#39), entities linked by pair."""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import chain
from typing import Any

from sqlalchemy import ColumnElement, Row, func, select
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from ..plain import Obj
from ..rules.keys import name_key
from . import words
from .dialect import in_list
from .driver import Driver, driver_of
from .lookups import picked
from .models import Dispute, Entity, Fact, Support

#: The fact columns the dashboard's lists and drawing read.
_TOP = "id graph owner subject_id object_id relation value status weight log_odds sources".split()


def _heaviest(s: Session, where: ColumnElement[bool], limit: int | None) -> list[Row[Any]]:
    """The `limit` heaviest facts `where` holds, their ends and vote counts (R29), in the state format's order."""
    by_weight = (col(Fact.weight).desc(), col(Fact.id))
    top = select(*(col(getattr(Fact, c)) for c in _TOP)).where(where).order_by(*by_weight).limit(limit).subquery("top")
    subject, target = aliased(Entity, name="subject"), aliased(Entity, name="target")

    def counted(fact_id: Any, *also: ColumnElement[bool]) -> Any:
        return select(func.count()).where(fact_id == top.c.id, *also).scalar_subquery()

    votes = [counted(col(Support.fact_id)).label("supports"), counted(col(Dispute.fact_id)).label("disputes")]
    votes.append(counted(col(Support.fact_id), col(Support.record_id).is_(None)).label("erased"))
    ends: list[Any] = [col(e.name).label(f"{n}_name") for e, n in ((subject, "subject"), (target, "object"))]
    ends += [col(e.kind).label(f"{n}_kind") for e, n in ((subject, "subject"), (target, "object"))]
    rows = s.connection().execute(  # fetched at once (row by row cost a third of the read)
        select(top, *ends, *votes)
        .select_from(top)
        .join(subject, col(subject.id) == top.c.subject_id)
        .outerjoin(target, col(target.id) == top.c.object_id)
        .order_by(top.c.weight.desc(), top.c.id)
    )
    return sorted(rows.all(), key=_state_order)


def _state_order(r: Row[Any]) -> tuple[str, ...]:
    entity = r.object_kind is not None
    return (r.subject_name, r.relation, r.object_name if entity else r.value or "", r.subject_kind, r.object_kind or "")


def _drawn(r: Any) -> Obj:
    """A fact as the drawing reads it, from a row of a focus's rings (_ENDS)."""
    obj = {"name": r[8], "kind": r[9]} if r[9] is not None else {"value": r[2]}
    fact = dict(id=r[0], subject={"name": r[6], "kind": r[7]}, relation=r[1], object=obj, status=r[3])
    return fact | dict(weight=r[4], sources=r[5], supports=int(r[10]), disputes=int(r[11]))


def fact_rows(s: Session, where: ColumnElement[bool], *, limit: int | None = None) -> list[Obj]:
    """Fact weights' rows for the facts `where` holds, the `limit` heaviest, in the state format's order (R29)."""
    return [
        {
            **picked(r, "id graph owner subject=subject_name subject_kind relation"),
            "object": r.object_name if r.object_kind is not None else r.value,
            "object_kind": r.object_kind if r.object_kind is not None else "value",
            **picked(r, "status weight log_odds sources"),
            **{k: int(getattr(r, k)) for k in ("supports", "disputes", "erased")},
        }
        for r in _heaviest(s, where, limit)
    ]


# --- a focus's neighbourhood as the Graphs page draws it (#39): each entity's heaviest facts, never the whole

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
_NAMED = "SELECT id, name, kind, active_facts FROM entity WHERE graph = :g AND owner = :o AND key IN ({keys})"
_ONE = _NAMED.format(keys=":k")
_MOST = "SELECT id, name, kind, active_facts FROM entity WHERE graph = :g AND owner = :o ORDER BY active_facts DESC, id"


def focus_of(db: Driver, graph: str, owner: str, name: str | None) -> tuple[Obj | None, str]:
    """The entity named, else found by words, else the most connected (a Flow graph's: its run's); how found."""
    params, by = {"g": graph, "o": owner}, "name"
    rows = sorted(db.rows(_ONE, params | {"k": name_key(name)}), key=lambda r: -r[3]) if name else []
    if name and not rows and (found := find(db, graph, owner, name)):
        rows, by = db.rows(_ONE, params | {"k": name_key(found[0]["name"])}), "words"
    if not rows:
        rows, by = db.rows(_MOST + " LIMIT 1", params), "run" if graph == "flow" and not name else "most connected"
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
            facts.setdefault(r[0], _drawn(r))
            nxt |= dict.fromkeys(i for i in (r[12], r[13]) if i is not None and i not in seen)
        seen |= nxt.keys()
        ring = list(nxt)[:RING]
    return sorted(facts.values(), key=lambda f: (-f["weight"], f["id"]))


def _ring(db: Driver, graph: str, owner: str, ring: list[int]) -> list[tuple[Any, ...]]:
    """Each entity's PER heaviest facts as subject, then as object, in the ring's order: one query a direction."""
    params: Obj = {"g": graph, "o": owner, "n": PER}
    ids = in_list("e", ring, params)
    by: dict[tuple[str, int], list[tuple[Any, ...]]] = defaultdict(list)
    for end in ("subject_id", "object_id"):
        for r in db.rows(_ENDS.format(end=end, ids=ids), params):
            by[end, r[14]].append(r)
    return [r for e in ring for end in ("subject_id", "object_id") for r in by[end, e]]


def find(db: Driver, graph: str, owner: str, text: str) -> list[Obj]:
    """GraphResolve's words matching (store/words.py) in one graph: up to FOUND entities with their facts counted."""
    found = words.find(db, {graph: owner}, text)[:FOUND]
    params: Obj = {"g": graph, "o": owner}
    keys = in_list("k", {name_key(e["name"]) for e in found}, params)
    rows = db.rows(_NAMED.format(keys=keys), params) if found else []
    counts = {(name, kind): facts for _, name, kind, facts in rows}  # one statement for all found
    return [
        {k: e[k] for k in ("name", "kind", "graph")} | {"facts": counts.get((e["name"], e["kind"]), 0)} for e in found
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


# --- a graph's entities as facts link them to one another, counted by pair

#: A graph's facts between two entities, each pair as (lower id, higher id); a literal value is no entity, a
#: retracted fact no link (R28). Counted in Python: SQLite's GROUP BY took three times as long (112k facts).
_LINKS = """SELECT CASE WHEN subject_id < object_id THEN subject_id ELSE object_id END,
CASE WHEN subject_id < object_id THEN object_id ELSE subject_id END
FROM fact WHERE graph = :graph AND owner = :owner AND object_id IS NOT NULL AND subject_id <> object_id
AND status <> 'retracted'"""
_NAMES = "SELECT id, name FROM entity WHERE graph = :graph AND owner = :owner ORDER BY id"


def entity_links(db: Driver, graph: str, owner: str) -> Obj:
    """Entities a fact links to others (with degree), by id, and the facts per pair (a < b); the driver's: half the CPU."""
    where = {"graph": graph, "owner": owner}
    rows = db.rows(_LINKS, where)
    counted, degree = Counter(rows), Counter(chain.from_iterable(rows))  # degree: each end of each fact
    return {
        "entities": [{"id": i, "name": name, "degree": degree[i]} for i, name in db.rows(_NAMES, where) if i in degree],
        "links": sorted((a, b, n) for (a, b), n in counted.items()),
    }
