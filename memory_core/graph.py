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

from .models import Alias, Dispute, Entity, Fact, Support
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


def upsert_entity(s: Session, graph: str, owner: str, spec: Obj) -> Entity:
    """The entity of `spec` in this graph, made with the claim's spelling if new; aliases accumulate."""
    e = find_entity(s, graph, owner, spec["kind"], spec["name"])
    if e is None:
        e = Entity(
            graph=graph,
            owner=owner,
            kind=spec["kind"],
            key=name_key(spec["name"]),
            name=display_name(spec["name"]),
            aliases=[],
        )
        s.add(e)
        s.flush()
    _add_aliases(s, e, spec.get("aliases") or [])
    return e


def _add_aliases(s: Session, e: Entity, aliases: Iterable[str]) -> None:
    known = {e.key, *(name_key(a) for a in e.aliases)}
    new = list(e.aliases)
    for alias in aliases:
        key = name_key(alias)
        if key and key not in known:
            known.add(key)
            new.append(display_name(alias))
            assert e.id is not None
            s.add(Alias(entity_id=e.id, key=key))
    if len(new) != len(e.aliases):
        e.aliases = new
        s.add(e)


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


def upsert_fact(s: Session, graph: str, owner: str, claim: Obj) -> Fact:
    """The fact a claim names in this graph; subject is made before object (entity spelling)."""
    subject = upsert_entity(s, graph, owner, claim["subject"])
    obj = claim["object"]
    if "value" in obj:
        object_id, value, okey = None, obj["value"], "v:" + obj["value"]
    else:
        target = upsert_entity(s, graph, owner, obj)
        object_id, value, okey = target.id, None, f"e:{target.id}"
    fact = s.exec(
        select(Fact).where(
            Fact.graph == graph,
            Fact.owner == owner,
            Fact.subject_id == subject.id,
            Fact.relation == claim["relation"],
            Fact.object_key == okey,
        )
    ).first()
    if fact is None:
        assert subject.id is not None
        fact = Fact(
            graph=graph,
            owner=owner,
            subject_id=subject.id,
            relation=claim["relation"],
            object_id=object_id,
            value=value,
            object_key=okey,
            status="new",
        )
        s.add(fact)
        s.flush()
    return fact


def _shift_active(s: Session, fact: Fact, delta: int) -> None:
    for eid in (fact.subject_id, fact.object_id):
        if eid is not None:
            e = s.get(Entity, eid)
            assert e is not None
            e.active_facts += delta
            s.add(e)


def refresh_fact(s: Session, fact: Fact, changes: Changes) -> None:
    """Recompute one fact from its own supports and disputes (R26 to R28); drop it if none left."""
    assert fact.id is not None
    before = None if fact.status == "new" else (fact.weight, fact.status)
    ref = fact_ref(s, fact)
    supports = s.exec(select(Support.origin, Support.key, Support.contribution).where(Support.fact_id == fact.id)).all()
    was_active = fact.status == "active"
    if not supports:
        if was_active:
            _shift_active(s, fact, -1)
        s.exec(delete(Dispute).where(col(Dispute.fact_id) == fact.id))  # type: ignore[call-overload]
        s.exec(delete(Fact).where(col(Fact.id) == fact.id))  # type: ignore[call-overload]
        for eid in {fact.subject_id, fact.object_id} - {None}:
            drop_entity_if_orphan(s, eid)  # type: ignore[arg-type]
        changes.note(fact.graph, fact.owner, ref, fact.id, before, None)
        return
    disputes = s.exec(select(Dispute.contribution).where(Dispute.fact_id == fact.id)).all()
    sc = score([(o, k, c) for o, k, c in supports], list(disputes), retracted=fact.retracted)
    fact.log_odds, fact.weight, fact.sources, fact.status = sc.log_odds, sc.weight, sc.sources, sc.status
    s.add(fact)
    if was_active != (sc.status == "active"):
        _shift_active(s, fact, 1 if sc.status == "active" else -1)
    changes.note(fact.graph, fact.owner, ref, fact.id, before, (sc.weight, sc.status))


def withdraw(s: Session, supports: list[Support], changes: Changes) -> None:
    """Remove these supports and recompute every fact they touched (R3)."""
    fact_ids = sorted({sp.fact_id for sp in supports})
    for sp in supports:
        s.delete(sp)
    s.flush()
    for fid in fact_ids:
        fact = s.get(Fact, fid)
        if fact is not None:
            refresh_fact(s, fact, changes)


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


def map_counts(s: Session, org_id: str) -> Obj:
    """R18: entities of active facts by kind, and active facts, from indexed columns only."""
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
