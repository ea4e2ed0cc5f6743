"""Reading memory (R18 to R23): what a turn sees, the graph reads, and shortcuts."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from .graph import find_entity, find_fact
from .models import Alias, Entity, Fact, Record, Run, Support
from .rules import name_key, shortcut_allowed
from .state import facts_json

Obj = dict[str, Any]
GRAPH_ORDER = {"world": 0, "user": 1, "flow": 2}


def visible(run: Run) -> list[tuple[str, str]]:
    """R20: the run's organization's World graph, its person's User graph, its own Flow graph."""
    graphs = [("world", run.org_id)]
    if run.person_id is not None:
        graphs.append(("user", run.person_id))
    graphs.append(("flow", run.id))
    return graphs


def owner_in(run: Run, graph: str) -> str | None:
    return dict(visible(run)).get(graph)


def resolve(s: Session, run: Run, name: str, kind: str | None = None) -> list[Obj]:
    """GraphResolve: entities of active facts whose name or alias matches, each with its graph
    (R20, R23): per visible graph, one look-up by name and one by alias, both on an index."""
    key = name_key(name)
    alias_ids = list(s.exec(select(Alias.entity_id).where(Alias.key == key)))
    columns = (Entity.name, Entity.kind, Entity.aliases, Entity.graph)
    found: dict[tuple[str, str, str], Obj] = {}
    for graph, owner in visible(run):
        where = [Entity.graph == graph, Entity.owner == owner, Entity.active_facts > 0]
        if kind is not None:
            where.append(Entity.kind == kind)
        queries = [select(*columns).where(*where, Entity.key == key)]
        if alias_ids:
            queries.append(select(*columns).where(*where, col(Entity.id).in_(alias_ids)))
        for q in queries:
            for n, k, a, g in s.exec(q):
                found[(g, k, n)] = {"name": n, "kind": k, "aliases": list(a), "graph": g}
    return sorted(found.values(), key=lambda e: (e["name"], e["kind"], GRAPH_ORDER[e["graph"]]))


def expand(s: Session, run: Run, entity: Obj, graph: str, relation: str | None = None) -> list[Obj]:
    """GraphExpand: the entity's active facts in either direction, with weights (no supports)."""
    owner = owner_in(run, graph)
    e = find_entity(s, graph, owner, entity["kind"], entity["name"]) if owner else None
    if e is None:
        return []
    facts: dict[int | None, Fact] = {}
    for end in (Fact.subject_id, Fact.object_id):  # two index look-ups, not one OR over the graph
        query = select(Fact).where(end == e.id, Fact.graph == graph, Fact.owner == owner, Fact.status == "active")
        if relation is not None:
            query = query.where(Fact.relation == relation)
        facts.update((f.id, f) for f in s.exec(query))
    return facts_json(s, list(facts.values()), supports=False)


def source(s: Session, run: Run, fact: Obj, graph: str) -> list[Obj]:
    """GraphSource: an active fact's supports, the excerpt read through each pointer (R23, R24)."""
    owner = owner_in(run, graph)
    f = find_fact(s, graph, owner, fact) if owner else None
    if f is None or f.status != "active":
        return []
    out = []
    for sp in s.exec(select(Support).where(Support.fact_id == f.id).order_by(col(Support.id))):
        rec = s.get(Record, sp.record_id) if sp.record_id else None
        if rec is not None and rec.run_id != run.id:
            source_run = s.get(Run, rec.run_id)
            if source_run is None or source_run.org_id != run.org_id:
                rec = None  # a User fact's evidence from another organization's run stays there (R20)
        out.append(
            {
                "key": sp.key,
                "origin": sp.origin,
                "contribution": sp.contribution,
                "run": sp.run_id,
                "turn": sp.turn_id,
                "record": sp.record_id,
                "excerpt": rec.excerpt if rec else None,
            }
        )
    return out


def shortcut(s: Session, run: Run, answers: Obj, *, min_weight: float, no_memory_shortcuts: bool) -> Obj | None:
    """R22: the heaviest visible active answer at or above the step's minimum weight, or None."""
    if no_memory_shortcuts:  # R14: every step runs
        return None
    best: tuple[float, int, Fact, str] | None = None
    subject = answers["subject"]
    for graph, owner in visible(run):
        e = find_entity(s, graph, owner, subject["kind"], subject["name"])
        if e is None:
            continue
        for f in s.exec(
            select(Fact).where(
                Fact.graph == graph,
                Fact.owner == owner,
                Fact.subject_id == e.id,
                Fact.relation == answers["relation"],
                Fact.status == "active",
            )
        ):
            if shortcut_allowed(no_memory_shortcuts=False, weight=f.weight, min_weight=min_weight, status=f.status):
                rank = (f.weight, -GRAPH_ORDER[graph])
                if best is None or rank > (best[0], best[1]):
                    best = (f.weight, -GRAPH_ORDER[graph], f, graph)
    if best is None:
        return None
    item = facts_json(s, [best[2]], supports=False)[0]
    return {
        "fact": {"subject": item["subject"], "relation": item["relation"], "object": item["object"], "graph": best[3]},
        "weight": best[0],
    }
