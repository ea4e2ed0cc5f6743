"""A graph as the Graphs page draws it: its heaviest facts with only what a drawing shows.

The state format's graph (snapshot.graph_json) carries each fact's supports and disputes in full;
a drawing shows how many there are ("12 supports, 1 dispute" on hover). So this read counts them
in the database and loads no support row: one statement for the heaviest facts with their ends'
names and their counts, one for the graph's size (issue #16, B8: at 120k supports the Graphs page
spent most of its first render loading the 5,000 heaviest facts' supports).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, aliased
from sqlmodel import col

from .models import Dispute, Entity, Fact, Support

Obj = dict[str, Any]


def graph_for_drawing(s: Session, graph: str, owner: str, *, limit: int) -> Obj:
    """A graph's `limit` heaviest facts (ties by id) as the drawing reads them: each fact's `id`,
    subject and object (name and kind, or a value), relation, status, weight, independent
    `sources`, and the number of its `supports` and `disputes` (counts, not rows); the entities
    they name (by name, then kind), and `total`, the number of facts the graph holds. Facts are
    sorted as the state format sorts them (subject name, relation, object)."""
    top = (
        select(
            col(Fact.id),
            col(Fact.subject_id),
            col(Fact.object_id),
            col(Fact.relation),
            col(Fact.value),
            col(Fact.status),
            col(Fact.weight),
            col(Fact.sources),
        )
        .where(col(Fact.graph) == graph, col(Fact.owner) == owner)
        .order_by(col(Fact.weight).desc(), col(Fact.id))
        .limit(limit)
        .subquery("top")
    )
    subject, target = aliased(Entity, name="subject"), aliased(Entity, name="target")
    supports = select(func.count()).where(col(Support.fact_id) == top.c.id).scalar_subquery()
    disputes = select(func.count()).where(col(Dispute.fact_id) == top.c.id).scalar_subquery()
    rows = s.connection().execute(
        select(
            top.c.id,
            col(subject.name),
            col(subject.kind),
            top.c.relation,
            col(target.name),
            col(target.kind),
            top.c.value,
            top.c.status,
            top.c.weight,
            top.c.sources,
            supports,
            disputes,
        )
        .select_from(top)
        .join(subject, col(subject.id) == top.c.subject_id)
        .outerjoin(target, col(target.id) == top.c.object_id)
    )
    facts: list[Obj] = []
    entities: set[tuple[str, str]] = set()
    for fid, s_name, s_kind, relation, o_name, o_kind, value, status, weight, sources, n_sup, n_dis in rows:
        entities.add((s_name, s_kind))
        if o_kind is not None:
            entities.add((o_name, o_kind))
        facts.append(
            {
                "id": fid,
                "subject": {"name": s_name, "kind": s_kind},
                "relation": relation,
                "object": {"name": o_name, "kind": o_kind} if o_kind is not None else {"value": value},
                "status": status,
                "weight": weight,
                "sources": sources,
                "supports": int(n_sup),
                "disputes": int(n_dis),
            }
        )
    facts.sort(key=_state_order)
    total = s.connection().execute(
        select(func.count()).select_from(Fact).where(col(Fact.graph) == graph, col(Fact.owner) == owner)
    )
    return {
        "entities": [{"name": n, "kind": k} for n, k in sorted(entities)],
        "facts": facts,
        "total": int(total.scalar_one()),
    }


def _state_order(f: Obj) -> tuple[str, ...]:
    """The state format's order of facts (snapshot.fact_sort_key), so a drawing's ties fall as before."""
    o = f["object"]
    return (
        f["subject"]["name"],
        f["relation"],
        o.get("name", o.get("value", "")),
        f["subject"]["kind"],
        o.get("kind", ""),
    )
