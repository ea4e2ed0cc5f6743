"""Graph storage inside one session: entities, facts, supports, and weight upkeep (R24 to R28).

Every write keeps three things true without rescanning a graph (R27): a fact's log-odds,
weight, sources and status follow from its own supports and disputes; an entity's
`active_facts` counts the active facts that name it (the map reads it, R18); a fact or
entity left with no support is gone (R3).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, or_
from sqlmodel import Session, col, select

from .models import Alias, Dispute, Entity, Fact, MapCount, Support
from .rules import display_name, name_key
from .weights import score

Obj = dict[str, Any]


@dataclass
class FactChange:
    """A fact's weight and status before and after a use case; None where it did not exist."""

    graph: str
    owner: str
    fact: Obj  # {"subject", "relation", "object"} as in the state format
    before: tuple[float, str] | None
    after: tuple[float, str] | None

    @property
    def kind(self) -> str:
        """added, strengthened, weakened, withdrawn, or status (same weight, new status)."""
        if self.before is None:
            return "added"
        if self.after is None:
            return "withdrawn"
        if self.after[0] > self.before[0]:
            return "strengthened"
        if self.after[0] < self.before[0]:
            return "weakened"
        return "status" if self.after[1] != self.before[1] else "unchanged"


@dataclass
class Changes:
    """What one use case did to facts, keyed by fact id, first `before` and last `after` kept."""

    facts: dict[int, FactChange] = field(default_factory=dict)

    def note(
        self,
        graph: str,
        owner: str,
        fact: Obj,
        fid: int,
        before: tuple[float, str] | None,
        after: tuple[float, str] | None,
    ) -> None:
        if fid in self.facts:
            self.facts[fid].after = after
        else:
            self.facts[fid] = FactChange(graph, owner, fact, before, after)

    def listed(self) -> list[FactChange]:
        return [c for c in self.facts.values() if c.kind != "unchanged"]


def entity_ref(e: Entity) -> Obj:
    return {"name": e.name, "kind": e.kind}


def fact_ref(s: Session, fact: Fact) -> Obj:
    """The fact as the state format names it: subject, relation, object."""
    subject = s.get(Entity, fact.subject_id)
    assert subject is not None
    obj: Obj
    if fact.object_id is None:
        obj = {"value": fact.value}
    else:
        target = s.get(Entity, fact.object_id)
        assert target is not None
        obj = entity_ref(target)
    return {"subject": entity_ref(subject), "relation": fact.relation, "object": obj}


# --- entities ----------------------------------------------------------------------------


def find_entity(s: Session, graph: str, owner: str, kind: str, name: str) -> Entity | None:
    return s.exec(
        select(Entity).where(
            Entity.graph == graph, Entity.owner == owner, Entity.kind == kind, Entity.key == name_key(name)
        )
    ).first()


def drop_entity_if_orphan(s: Session, entity_id: int) -> None:
    """R3: an entity named by no fact is gone."""
    used = s.exec(
        select(Fact.id).where(or_(col(Fact.subject_id) == entity_id, col(Fact.object_id) == entity_id)).limit(1)
    ).first()
    if used is None:
        s.exec(delete(Alias).where(col(Alias.entity_id) == entity_id))  # type: ignore[call-overload]
        s.exec(delete(Entity).where(col(Entity.id) == entity_id))  # type: ignore[call-overload]


# --- facts -------------------------------------------------------------------------------


def find_fact(s: Session, graph: str, owner: str, ref: Obj) -> Fact | None:
    """The fact a reference names in one graph, or None (entity identity applies)."""
    subject = find_entity(s, graph, owner, ref["subject"]["kind"], ref["subject"]["name"])
    if subject is None:
        return None
    obj = ref["object"]
    if "value" in obj:
        okey = "v:" + obj["value"]
    else:
        target = find_entity(s, graph, owner, obj["kind"], obj["name"])
        if target is None:
            return None
        okey = f"e:{target.id}"
    return s.exec(
        select(Fact).where(
            Fact.graph == graph,
            Fact.owner == owner,
            Fact.subject_id == subject.id,
            Fact.relation == ref["relation"],
            Fact.object_key == okey,
        )
    ).first()


def _chunks(items: list[Any], size: int = 500) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class GraphWriter:
    """Batched writes inside one session: every entity and fact a turn's claims name is looked
    up with a few IN queries, new ones are inserted in one flush, in the order the claims come
    (records in order, claims in order, subject before object: the entity spelling rule)."""

    def __init__(self, s: Session) -> None:
        self.s = s
        self.entities: dict[tuple[str, str, str, str], Entity] = {}
        self.facts: dict[tuple[str, str, int, str, str], Fact] = {}

    def load(self, claims: list[tuple[str, str, Obj]]) -> None:
        """Preload the entities and facts that these (graph, owner, claim) triples may name."""
        wanted: dict[tuple[str, str], set[str]] = {}
        for graph, owner, claim in claims:
            for e in (claim["subject"], claim["object"]):
                if "value" not in e:
                    wanted.setdefault((graph, owner), set()).add(name_key(e["name"]))
        for (graph, owner), keys in wanted.items():
            for chunk in _chunks(sorted(keys)):
                for e in self.s.exec(
                    select(Entity).where(Entity.graph == graph, Entity.owner == owner, col(Entity.key).in_(chunk))
                ):
                    self.entities[(graph, owner, e.kind, e.key)] = e
        by_graph: dict[tuple[str, str], list[int]] = {}
        for (graph, owner, _, _), e in self.entities.items():
            if e.id is not None:
                by_graph.setdefault((graph, owner), []).append(e.id)
        for (graph, owner), ids in by_graph.items():
            for chunk in _chunks(sorted(ids)):
                for f in self.s.exec(
                    select(Fact).where(Fact.graph == graph, Fact.owner == owner, col(Fact.subject_id).in_(chunk))
                ):
                    self.facts[(graph, owner, f.subject_id, f.relation, f.object_key)] = f

    def entity(self, graph: str, owner: str, spec: Obj) -> Entity:
        """The entity of `spec` in this graph, made with the claim's spelling if new (not yet flushed)."""
        key = (graph, owner, spec["kind"], name_key(spec["name"]))
        e = self.entities.get(key)
        if e is None:
            e = Entity(
                graph=graph, owner=owner, kind=spec["kind"], key=key[3], name=display_name(spec["name"]), aliases=[]
            )
            self.s.add(e)
            self.entities[key] = e
        if spec.get("aliases"):
            _merge_aliases(e, spec["aliases"])
        return e

    def facts_for(self, writes: list[tuple[str, str, Obj]]) -> list[Fact]:
        """The fact each (graph, owner, claim) names, creating the missing ones; one flush each step."""
        ends = [
            (self.entity(g, o, c["subject"]), None if "value" in c["object"] else self.entity(g, o, c["object"]))
            for g, o, c in writes
        ]
        self.s.flush()  # entity ids
        self._sync_aliases()
        out = []
        for (graph, owner, claim), (subject, target) in zip(writes, ends, strict=True):
            assert subject.id is not None
            okey = "v:" + claim["object"]["value"] if target is None else f"e:{target.id}"
            key = (graph, owner, subject.id, claim["relation"], okey)
            fact = self.facts.get(key)
            if fact is None:
                fact = Fact(
                    graph=graph,
                    owner=owner,
                    subject_id=subject.id,
                    relation=claim["relation"],
                    object_id=None if target is None else target.id,
                    value=claim["object"]["value"] if target is None else None,
                    object_key=okey,
                    status="new",
                )
                self.s.add(fact)
                self.facts[key] = fact
            out.append(fact)
        self.s.flush()  # fact ids
        return out

    def _sync_aliases(self) -> None:
        """Alias rows for aliases added to entities in this batch (GraphResolve finds them, R23)."""
        for e in self.entities.values():
            fresh = getattr(e, "_new_aliases", None)
            if fresh:
                assert e.id is not None
                self.s.add_all(Alias(entity_id=e.id, key=k) for k in fresh)
                e._new_aliases = []  # type: ignore[attr-defined]


def _merge_aliases(e: Entity, aliases: Iterable[str]) -> None:
    known = {e.key, *(name_key(a) for a in e.aliases)}
    new = list(e.aliases)
    fresh: list[str] = getattr(e, "_new_aliases", None) or []
    for alias in aliases:
        key = name_key(alias)
        if key and key not in known:
            known.add(key)
            new.append(display_name(alias))
            fresh.append(key)
    if len(new) != len(e.aliases):
        e.aliases = new
        e._new_aliases = fresh  # type: ignore[attr-defined]


def refresh_facts(s: Session, facts: list[Fact], changes: Changes) -> None:
    """Recompute facts from their own supports and disputes only (R26 to R28, R27: never the
    graph), in a few batched queries; a fact left with no support is gone, and so is an entity
    left with no fact (R3)."""
    ids = [f.id for f in facts if f.id is not None]
    supports: dict[int, list[tuple[str, str, float]]] = {i: [] for i in ids}
    disputes: dict[int, list[float]] = {i: [] for i in ids}
    for chunk in _chunks(ids):
        for fid, origin, key, contrib in s.exec(
            select(Support.fact_id, Support.origin, Support.key, Support.contribution).where(
                col(Support.fact_id).in_(chunk)
            )
        ):
            supports[fid].append((origin, key, contrib))
        for fid, contrib in s.exec(
            select(Dispute.fact_id, Dispute.contribution).where(col(Dispute.fact_id).in_(chunk))
        ):
            disputes[fid].append(contrib)
    shift: dict[int, int] = {}
    gone: list[Fact] = []
    for fact in facts:
        assert fact.id is not None
        before = None if fact.status == "new" else (fact.weight, fact.status)
        was_active = fact.status == "active"
        if not supports[fact.id]:
            now_active, after = False, None
            gone.append(fact)
        else:
            sc = score(supports[fact.id], disputes[fact.id], retracted=fact.retracted)
            fact.log_odds, fact.weight, fact.sources, fact.status = sc.log_odds, sc.weight, sc.sources, sc.status
            s.add(fact)
            now_active, after = sc.status == "active", (sc.weight, sc.status)
        if was_active != now_active:
            for eid in (fact.subject_id, fact.object_id):
                if eid is not None:
                    shift[eid] = shift.get(eid, 0) + (1 if now_active else -1)
            if fact.graph == "world":
                _count(s, fact.owner, "", 1 if now_active else -1)
        changes.note(fact.graph, fact.owner, fact_ref(s, fact), fact.id, before, after)
    for eid, delta in shift.items():
        if delta:
            e = s.get(Entity, eid)
            assert e is not None
            was_on_map = e.active_facts > 0
            e.active_facts += delta
            s.add(e)
            if e.graph == "world" and was_on_map != (e.active_facts > 0):
                _count(s, e.owner, e.kind, 1 if e.active_facts > 0 else -1)
    if gone:
        _drop_facts(s, gone)


def refresh_fact(s: Session, fact: Fact, changes: Changes) -> None:
    """Recompute one fact (a dispute, a retraction)."""
    refresh_facts(s, [fact], changes)


def _drop_facts(s: Session, facts: list[Fact]) -> None:
    s.flush()
    ids = [f.id for f in facts]
    s.exec(delete(Dispute).where(col(Dispute.fact_id).in_(ids)))  # type: ignore[call-overload]
    for f in facts:
        s.expunge(f)
    s.exec(delete(Fact).where(col(Fact.id).in_(ids)))  # type: ignore[call-overload]
    for eid in sorted({f.subject_id for f in facts} | {f.object_id for f in facts if f.object_id is not None}):
        drop_entity_if_orphan(s, eid)


def withdraw(s: Session, supports: list[Support], changes: Changes) -> None:
    """Remove these supports and recompute every fact they touched (R3)."""
    fact_ids = sorted({sp.fact_id for sp in supports})
    for sp in supports:
        s.delete(sp)
    s.flush()
    facts = [f for f in (s.get(Fact, fid) for fid in fact_ids) if f is not None]
    refresh_facts(s, facts, changes)


def drop_graph(s: Session, graph: str, owner: str) -> None:
    """Erase a whole graph: its supports, disputes, facts, aliases and entities (R29, R30)."""
    fact_ids = select(Fact.id).where(Fact.graph == graph, Fact.owner == owner)
    entity_ids = select(Entity.id).where(Entity.graph == graph, Entity.owner == owner)
    for stmt in (
        delete(Support).where(col(Support.fact_id).in_(fact_ids)),
        delete(Dispute).where(col(Dispute.fact_id).in_(fact_ids)),
        delete(Fact).where(col(Fact.graph) == graph, col(Fact.owner) == owner),
        delete(Alias).where(col(Alias.entity_id).in_(entity_ids)),
        delete(Entity).where(col(Entity.graph) == graph, col(Entity.owner) == owner),
    ):
        s.exec(stmt)  # type: ignore[call-overload]


def _count(s: Session, org_id: str, kind: str, delta: int) -> None:
    row = s.get(MapCount, (org_id, kind))
    if row is None:
        row = MapCount(org_id=org_id, kind=kind, n=0)
    row.n += delta
    s.add(row)


def map_counts(s: Session, org_id: str) -> Obj:
    """R18: entities of active facts by kind, and active facts, from the map's counters: a few
    rows, however large the graph (counted_map recounts them from the graph, for checks)."""
    rows = {r.kind: r.n for r in s.exec(select(MapCount).where(MapCount.org_id == org_id))}
    return {"kinds": {k: n for k, n in sorted(rows.items()) if k and n}, "facts": int(rows.get("", 0))}


def counted_map(s: Session, org_id: str) -> Obj:
    """The map recounted from the graph itself (a grouped query); equals map_counts."""
    rows = s.exec(
        select(Entity.kind, func.count())
        .where(Entity.graph == "world", Entity.owner == org_id, Entity.active_facts > 0)
        .group_by(Entity.kind)
    ).all()
    facts = s.exec(
        select(func.count())
        .select_from(Fact)
        .where(Fact.graph == "world", Fact.owner == org_id, Fact.status == "active")
    ).one()
    return {"kinds": {k: n for k, n in sorted(rows)}, "facts": int(facts)}
