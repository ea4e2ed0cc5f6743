"""The three graphs through the ORM: fact changes, a graph erased, the map counts (R18), shortcuts (R22)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import delete
from sqlmodel import Session, col, select

from ..plain import Obj
from ..rules.keys import name_key
from ..rules.shortcuts import Candidate, choose_shortcut
from ..rules.visibility import visible
from .driver import Driver, driver_of
from .lookups import RunRef, picked
from .models import Alias, Dispute, DisputeGone, Entity, EntityGone, Fact, FactGone, Support, SupportGone

if TYPE_CHECKING:
    from .facts import FactIdentity

#: A fact's weight and status; None where it did not exist.
Score = tuple[float, str] | None


def triple(fact: Fact | FactIdentity, end: Callable[[int], Obj]) -> Obj:
    """A fact as the formats name it (R3): its subject, relation and object, each entity by `end` (name, kind)."""
    target = end(fact.object_id) if fact.object_id is not None else {"value": fact.value}
    return {"subject": end(fact.subject_id), "relation": fact.relation, "object": target}


@dataclass
class FactChange:
    """A fact's weight and status before and after a use case; None where it did not exist."""

    graph: str
    owner: str
    fact: Obj  # {"subject", "relation", "object"} as in the state format
    before: Score
    after: Score

    @property
    def kind(self) -> str:
        """added, strengthened, weakened, withdrawn, or status (same weight, new status)."""
        if self.before is None:
            return "added"
        if self.after is None:
            return "withdrawn"
        if self.after[0] != self.before[0]:
            return "strengthened" if self.after[0] > self.before[0] else "weakened"
        return "status" if self.after[1] != self.before[1] else "unchanged"


@dataclass
class FactChanges:
    """What one use case did to facts, keyed by fact id, first `before` and last `after` kept."""

    facts: dict[int, FactChange] = field(default_factory=dict)

    def note(self, graph: str, owner: str, fact: Obj, fid: int, before: Score, after: Score) -> None:
        self.facts.setdefault(fid, FactChange(graph, owner, fact, before, after)).after = after

    def listed(self) -> list[FactChange]:
        return [c for c in self.facts.values() if c.kind != "unchanged"]


def drop_graph(s: Session, graph: str, owner: str) -> None:
    """Erase a whole graph: its supports, disputes, facts, aliases and entities (R29, R30), and their history (R33)."""
    of_graph = lambda t: delete(t).where(col(t.graph) == graph, col(t.owner) == owner)
    fact_ids = select(Fact.id).where(Fact.graph == graph, Fact.owner == owner)
    entity_ids = select(Entity.id).where(Entity.graph == graph, Entity.owner == owner)
    for stmt in (
        delete(Support).where(col(Support.fact_id).in_(fact_ids)),
        delete(Dispute).where(col(Dispute.fact_id).in_(fact_ids)),
        of_graph(Fact),
        delete(Alias).where(col(Alias.entity_id).in_(entity_ids)),
        *map(of_graph, (Entity, SupportGone, FactGone, DisputeGone, EntityGone)),
    ):
        s.exec(stmt)  # type: ignore[call-overload]


def map_counts(tx: Session | Driver, org_id: str) -> Obj:
    """R18: entities of active facts by kind, and active facts, from the map's counters (a few rows)."""
    with driver_of(tx) as db:
        rows = db.rows("SELECT kind, n FROM mapcount WHERE org_id = :o", {"o": org_id})
    return map_of({str(k): int(n) for k, n in rows})


def map_of(counters: dict[str, int]) -> Obj:
    """The map from an organization's counters (kind -> n; kind "" counts active facts)."""
    return {"kinds": {k: n for k, n in sorted(counters.items()) if k and n}, "facts": int(counters.get("", 0))}


def shortcut(s: Session, run: RunRef, answers: Obj, *, min_weight: float, no_memory_shortcuts: bool) -> Obj | None:
    """R22: the heaviest visible active answer at or above the step's minimum weight (R20: the graphs a turn sees)."""
    if no_memory_shortcuts:  # R14: every step runs
        return None
    found: list[Candidate] = []
    subject = answers["subject"]
    for graph, owner in visible(run_id=run.id, org_id=run.org_id, person_id=run.person_id):
        ours = (Entity.graph == graph, Entity.owner == owner, Entity.kind == subject["kind"])
        e = s.exec(select(Entity).where(*ours, Entity.key == name_key(subject["name"]))).first()
        if e is not None:
            active = (Fact.graph == graph, Fact.owner == owner, Fact.relation == answers["relation"])
            facts = s.exec(select(Fact).where(*active, Fact.status == "active", Fact.subject_id == e.id))
            found += [Candidate(graph, f.weight, f.status, f) for f in facts]
    best = choose_shortcut(found, min_weight=min_weight, no_memory_shortcuts=no_memory_shortcuts)
    if best is None:
        return None
    fact = triple(best.fact, lambda i: picked(s.get_one(Entity, i), "name kind"))  # its subject: read above
    return {"fact": fact | {"graph": best.graph}, "weight": best.weight}
