"""Graph reads on the database driver (R19 to R23): a turn's probe is its hottest use case."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from sqlmodel import Session

from ..plain import Obj
from ..rules.keys import name_key, value_key
from ..rules.shortcuts import GRAPH_ORDER
from ..rules.visibility import evidence_elsewhere
from .dialect import for_update
from .driver import Driver, driver_of, json_value
from .facts import StoredFact, load_facts
from .snapshot import fact_sort_key

TURN = for_update(
    """SELECT t.status, t.probes_used, t.next_record, r.id, r.ended, r.org_id, r.person_id, r.workflow_id, w.memory_probes,
 w.steps FROM turn t JOIN run r ON r.id = t.run_id LEFT JOIN workflow w ON w.id = r.workflow_id WHERE t.id = :t""",
    of="t",
)


class TurnRow(NamedTuple):
    """A row of TURN: the turn a read is made in, its run, and the run's workflow (if any)."""

    status: str
    probes_used: int
    next_record: int  # what its kept read counts as the records before it (reads.keep)
    run_id: str
    ended: bool
    org_id: str
    person_id: str | None
    workflow_id: str | None
    memory_probes: int | None  # the workflow's cap (R21); None: no workflow, no cap
    steps: Any  # the workflow's steps, JSON (text on SQLite); None without a workflow


def turn_to_read(db: Driver, turn_id: str) -> TurnRow | None:
    """The turn a read is made in, its run and workflow (steps decoded), its row locked; or None."""
    turn = next(map(TurnRow._make, db.rows(TURN, {"t": turn_id})), None)
    return None if turn is None else turn._replace(steps=json_value(turn.steps) if turn.steps is not None else None)


def count_read(db: Driver, turn_id: str, cap: int | None) -> bool:
    """R21: count one read of an open turn within its cap, one guarded UPDATE that also takes the id its trace is kept
    under (reads.keep: the turn's last_read); False: nothing counted."""
    sql = f"UPDATE turn SET probes_used = probes_used + 1, {read_range(db.dialect)} WHERE id = :t AND status = 'open'"
    return bool(db.change(sql + (" AND probes_used < :cap" if cap is not None else ""), {"t": turn_id, "cap": cap}))


def read_range(dialect: Any) -> str:
    """A turn's reads' range (models.Turn) reaching a new read's id, taken once (Dialect.next_read_id)."""
    return f"(last_read, first_read) = (SELECT n.rid, coalesce(turn.first_read, n.rid) FROM ({dialect.next_read_id}) n)"


#: Each graph's owner (R20) as the plain reads take it: a parameter named after the graph.
_OWNER_PARAMS = {g: f":{g}" for g in GRAPH_ORDER}


def _resolve_sql(with_kind: bool, owner: dict[str, str] = _OWNER_PARAMS) -> str:
    """GraphResolve's statement; `owner` is each graph's owner as an SQL expression."""
    kind = " AND kind = :kind" if with_kind else ""
    by_name = [
        f"SELECT name, kind, aliases, graph FROM entity WHERE graph = '{g}' AND owner = {owner[g]} AND key = :k "
        f"AND active_facts > 0{kind}"
        for g in GRAPH_ORDER
    ]
    visible = " OR ".join(f"(e.graph = '{g}' AND e.owner = {owner[g]})" for g in GRAPH_ORDER)
    by_alias = (
        "SELECT e.name, e.kind, e.aliases, e.graph FROM alias a JOIN entity e ON e.id = a.entity_id "
        f"WHERE a.key = :k AND e.active_facts > 0 AND ({visible}){' AND e.kind = :kind' if with_kind else ''}"
    )
    return "\nUNION ALL ".join([*by_name, by_alias])


#: GraphResolve: one statement, an index look-up per visible graph by name and one by alias.
RESOLVE = _resolve_sql(False)
RESOLVE_KIND = _resolve_sql(True)


def _expand_sql(with_relation: bool, owner: str = ":o") -> str:
    """GraphExpand's statement; `owner` is the graph's owner as an SQL expression."""
    rel = " AND f.relation = :rel" if with_relation else ""
    entity = f"(SELECT id FROM entity WHERE graph = :g AND owner = {owner} AND kind = :kind AND key = :k)"  # R23
    half = (
        "SELECT f.id, f.relation, f.value, f.status, f.weight, f.log_odds, f.sources, s.name, s.kind, o.name, "
        'o.kind, d.id, d."by", d.contribution FROM fact f JOIN entity s ON s.id = f.subject_id '
        "LEFT JOIN entity o ON o.id = f.object_id LEFT JOIN dispute d ON d.fact_id = f.id "
        f"WHERE f.{{end}} = {entity} AND f.graph = :g AND f.owner = {owner} AND f.status = 'active'{rel}"
    )
    return half.format(end="subject_id") + "\nUNION " + half.format(end="object_id")


#: GraphExpand: the entity (by its identity, R23) and its active facts at either end, each end an
#: index look-up, with the names of both ends and the fact's disputes: one statement.
EXPAND = _expand_sql(False)
EXPAND_RELATION = _expand_sql(True)

FACT_TO_ENTITY = """SELECT f.id, f.status FROM fact f JOIN entity s ON s.id = f.subject_id
 JOIN entity o ON o.id = f.object_id WHERE s.graph = :g AND s.owner = :o AND s.kind = :sk AND s.key = :skey
 AND o.graph = :g AND o.owner = :o AND o.kind = :ok AND o.key = :okey
 AND f.graph = :g AND f.owner = :o AND f.subject_id = s.id AND f.relation = :rel AND f.object_key = 'e:' || o.id"""

FACT_TO_VALUE = """SELECT f.id, f.status FROM fact f JOIN entity s ON s.id = f.subject_id
 WHERE s.graph = :g AND s.owner = :o AND s.kind = :sk AND s.key = :skey
 AND f.graph = :g AND f.owner = :o AND f.relation = :rel AND f.object_key = :okey"""

#: GraphSource: the fact's supports with the excerpt read through each pointer (R24).
SUPPORTS = """SELECT sp.key, sp.origin, sp.contribution, sp.run_id, sp.turn_id, sp.record_id, r.excerpt,
 coalesce(ru.org_id, sp.erased_run_org) FROM support sp LEFT JOIN record r ON r.id = sp.record_id
 LEFT JOIN run ru ON ru.id = r.run_id WHERE sp.fact_id = :f ORDER BY sp.id"""


def resolve(db: Driver, seen: dict[str, str | None], name: str, kind: str | None = None) -> list[Obj]:
    """GraphResolve: entities of active facts whose name or alias matches, each with its graph."""
    params = {"k": name_key(name), "kind": kind, **seen}
    return resolved(db.rows(RESOLVE if kind is None else RESOLVE_KIND, params))


def resolved(rows: Iterable[tuple[Any, ...]]) -> list[Obj]:
    """GraphResolve's answer from its rows (name, kind, aliases, graph)."""
    found: dict[tuple[str, str, str], Obj] = {}
    for n, k, a, g in rows:
        found[(g, k, n)] = {"name": n, "kind": k, "aliases": list(json_value(a)), "graph": g}
    return sorted(found.values(), key=lambda e: (e["name"], e["kind"], GRAPH_ORDER[e["graph"]]))


def expand_rows(
    db: Driver, seen: dict[str, str | None], entity: Obj, graph: str, relation: str | None = None
) -> list[tuple[Any, ...]]:
    """GraphExpand: the entity's active facts in either direction, as rows (`expanded` shapes them, reads.keep keeps them)."""
    owner = seen.get(graph)
    if owner is None:
        return []
    params = {**expand_params(entity, graph, relation), "o": owner}
    return db.rows(EXPAND if relation is None else EXPAND_RELATION, params)


def expand_params(entity: Obj, graph: str, relation: str | None) -> Obj:
    """GraphExpand's parameters but the graph's owner (:o), which the one statement reads itself."""
    return {"g": graph, "kind": entity["kind"], "k": name_key(entity["name"]), "rel": relation}


def expanded(rows: Iterable[tuple[Any, ...]]) -> list[Obj]:
    """GraphExpand's answer from its rows: one per fact and dispute (the fact's ends by name)."""
    facts: dict[int, Obj] = {}
    disputes: dict[int, list[tuple[int, Obj]]] = {}
    for fid, rel, value, status, weight, log_odds, sources, sn, sk, on, ok, did, by, dc in rows:
        if fid not in facts:
            target = {"name": on, "kind": ok} if on is not None else {"value": value}
            score = {"status": status, "weight": weight, "log_odds": log_odds, "sources": sources}
            facts[fid] = {"subject": {"name": sn, "kind": sk}, "relation": rel, "object": target, **score}
            disputes[fid] = []
        if did is not None:
            disputes[fid].append((did, {"by": by, "contribution": dc}))
    for fid, item in facts.items():
        item["disputes"] = [d for _, d in sorted(disputes[fid], key=lambda pair: pair[0])]
    return sorted(facts.values(), key=fact_sort_key)


# --- a turn's read in one statement (Dialect.one_statement_reads: PostgreSQL, #8, B2): a data-modifying WITH counts
# the probe where R2, R17 and R21 allow it, reads the owners (R20) from the counted row and keeps the trace (reads.py:
# the answer's rows by position, shaped when read); counting nothing, the general path's checks say which rule refuses.

COUNT_ONE = """UPDATE turn t SET probes_used = t.probes_used + 1, last_read = n.rid, first_read = coalesce(t.first_read,
 n.rid) FROM run r LEFT JOIN workflow w ON w.id = r.workflow_id CROSS JOIN n
 WHERE t.id = :t AND r.id = t.run_id AND t.status = 'open' AND NOT r.ended
 AND (w.memory_probes IS NULL OR t.probes_used < w.memory_probes)
 RETURNING t.probes_used AS used, w.memory_probes AS cap, r.org_id AS world, r.person_id AS usr, r.id AS flow,
 t.id AS turn, t.next_record AS records, n.rid AS rid"""
#: The kept read's id, taken once (a sequence: models.Turn's range), before the count that names it.
NEXT_READ = "n AS MATERIALIZED (SELECT nextval(pg_get_serial_sequence('turnread', 'id')) AS rid)"
#: Each graph's owner as the counted row `c` gives it (R20: the turn's run's organization, person, run).
_COUNTED_OWNER = {"world": "c.world", "user": "c.usr", "flow": "c.flow"}
_TRACED = """WITH {next}, c AS ({update}),
a AS (SELECT c.used, c.cap, q.* FROM c LEFT JOIN LATERAL ({query}) q({names}) ON true),
k AS (INSERT INTO turnread (id, turn_id, moment, records, call, args, outcome, result) SELECT c.rid, c.turn,
 (SELECT coalesce(max(id), 0) FROM moment), c.records, :call, :args, 'ok',
 (SELECT coalesce(json_agg(json_build_array({names})), '[]') FROM a WHERE a.v0 IS NOT NULL) FROM c)
SELECT * FROM a"""


def _traced(query: str, width: int) -> str:
    """_TRACED for a query of `width` columns."""
    names = ", ".join(f"v{i}" for i in range(width))
    return _TRACED.format(next=NEXT_READ, update=COUNT_ONE, query=query, names=names)


Counted = tuple[int, int | None, list[Obj]]  # a read counted in one statement: reads made, the cap (R21), the answer
TRACED_RESOLVE = {k: _traced(_resolve_sql(k, _COUNTED_OWNER), 4) for k in (False, True)}
TRACED_EXPAND = {
    (g, rel): _traced(_expand_sql(rel, _COUNTED_OWNER[g]), 14) for g in GRAPH_ORDER for rel in (False, True)
}


def counted_read(db: Driver, turn_id: str, call: str, args: Obj, *, kept: Obj) -> Counted | None:
    """A turn-level read counted, served and kept (`kept`: its arguments as given) in one statement (R21); None: not."""
    try:
        if call == "GraphResolve":
            params: Obj = {"t": turn_id, "k": name_key(args["name"]), "kind": args.get("kind")}
            sql, shape = TRACED_RESOLVE[params["kind"] is not None], resolved
        else:
            graph = args.get("graph", "world")
            if graph not in GRAPH_ORDER:
                return None
            params = {"t": turn_id, **expand_params(args["entity"], graph, args.get("relation"))}
            sql, shape = TRACED_EXPAND[(graph, params["rel"] is not None)], expanded
    except (KeyError, TypeError, AttributeError):
        return None
    rows = db.rows(sql, params | {"call": call, "args": db.json(kept)})
    if not rows:
        return None
    return rows[0][0], rows[0][1], shape(r[2:] for r in rows if r[2] is not None)


def source(db: Driver, seen: dict[str, str | None], run_id: str, org_id: str, fact: Obj, graph: str) -> list[Obj]:
    """GraphSource: an active fact's supports and excerpts (R23, R24); another organization's evidence hidden (R20)."""
    owner = seen.get(graph)
    hit = None if owner is None else _fact_named(db, graph, owner, fact)
    if hit is None or hit[1] != "active":
        return []
    out = []
    for *shown, from_org in db.rows(SUPPORTS, {"f": hit[0]}):
        item = dict(zip(("key", "origin", "contribution", "run", "turn", "record", "excerpt"), shown, strict=True))
        if evidence_elsewhere(from_org, reader_org=org_id):
            # R23, evidence elsewhere: a User fact's support taught in another organization's run
            # (erased since or not) shows origin and contribution only; its key and pointer are null.
            item.update(key=None, run=None, turn=None, record=None, excerpt=None)
        out.append(item)
    return out


def _fact_named(db: Driver, graph: str, owner: str, fact: Obj) -> tuple[int, str] | None:
    """The id and status of the fact a reference names in one graph (entity identity applies), or None."""
    subject, obj = fact["subject"], fact["object"]
    params = {"g": graph, "o": owner, "sk": subject["kind"], "skey": name_key(subject["name"]), "rel": fact["relation"]}
    if "value" in obj:
        hit = db.rows(FACT_TO_VALUE, params | {"okey": value_key(obj["value"])})
    else:
        hit = db.rows(FACT_TO_ENTITY, params | {"ok": obj["kind"], "okey": name_key(obj["name"])})
    return (int(hit[0][0]), str(hit[0][1])) if hit else None


def find_fact(tx: Session | Driver, graph: str, owner: str, fact: Obj) -> StoredFact | None:
    """The fact a reference names in one graph, or None (a correction's, R28)."""
    with driver_of(tx) as db:
        hit = _fact_named(db, graph, owner, fact)
        return load_facts(db, [hit[0]])[0] if hit else None
