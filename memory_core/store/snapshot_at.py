"""The `memory-state/1` document as memory stood after a moment (R32, R33), from past.py's reads."""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session, col, select

from ..plain import Obj
from . import past
from .models import Organization, Person, Run
from .snapshot import STATE_FORMAT, fact_json, graph_of, in_order, run_head, settings_of


def then_json(f: past.PastFact, ends: dict[int, Obj]) -> Obj:
    """A FACT of the state format as it stood at a moment (past.facts_at)."""
    return fact_json(f, ends, supports=f.supports, disputes=f.disputes)


def facts_then(s: Session, n: int, ids: set[int], *, keep: Callable[[past.PastFact], bool]) -> list[Obj]:
    """The facts with these ids that `keep` keeps, as they stood after moment `n`: FACT objects
    with their `graph`, `owner` and `id`."""
    facts = [f for f in past.facts_at(s, n, ids=ids) if keep(f)]
    ends = past.entities_at(s, n, {i for f in facts for i in (f.subject_id, f.object_id) if i is not None})
    return [{"graph": f.graph, "owner": f.owner, "id": f.id, **then_json(f, ends)} for f in facts]


def graph_at(s: Session, graph: str, owner: str, n: int, *, limit: int | None = None, ids: bool = False) -> Obj:
    """One graph as it stood after moment `n`, shaped as snapshot.graph_json shapes the present:
    entities in at least one fact, facts sorted; with `limit`, the heaviest facts then and `total`."""
    with past.bulk():
        facts = past.facts_at(s, n, graph=graph, owner=owner, votes=limit is None)
        total = len(facts)
        if limit is not None:  # the heaviest then; only they are read with their supports
            facts = sorted(facts, key=lambda f: -f.weight)[:limit]
            past.with_votes(s, n, facts)
        named = {i for f in facts for i in (f.subject_id, f.object_id) if i is not None}
        ends = past.entities_at(s, n, named, whole=(graph, owner))
        items = in_order((f, then_json(f, ends)) for f in facts)
        return graph_of((ends[i] for i in named), items, ids=ids, total=None if limit is None else total)


def export_at(s: Session, n: int) -> Obj:
    """The whole memory as it stood after moment `n`, as `memory-state/1` without `reads` and
    `refused`: organizations and people made by then, runs started by then and not erased since."""
    orgs = s.exec(select(Organization).where(Organization.since <= n).order_by(col(Organization.seq))).all()
    people = s.exec(select(Person).where(Person.since <= n).order_by(col(Person.seq))).all()
    runs = s.exec(select(Run).where(Run.started_at <= n).order_by(col(Run.seq))).all()
    return {
        "format": STATE_FORMAT,
        "organizations": {
            o.id: {
                "settings": past.settings_at(s, o.id, settings_of(o), n),
                "map": past.map_at(s, o.id, n),
                "world": graph_at(s, "world", o.id, n),
            }
            for o in orgs
        },
        "people": {p.id: {"user": graph_at(s, "user", p.id, n)} for p in people},
        "runs": {
            r.id: {
                **run_head(r),
                "ended": r.ended_at is not None and r.ended_at <= n,
                "turns": dict(past.turns_at(s, r.id, n)),
                "flow": graph_at(s, "flow", r.id, n),
            }
            for r in runs
        },
    }
