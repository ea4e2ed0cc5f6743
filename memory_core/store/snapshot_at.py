"""The `memory-state/1` document as memory stood after a moment (R32, R33), from past.py's reads.

It is the present export's shape (snapshot.py) with two differences the contract names: every
erasure made since is applied (erased rows are gone from history too), and each turn's
`probes_used` is null (reads are not moments).
"""

from __future__ import annotations

from sqlmodel import Session, col, select

from ..plain import Obj
from . import past
from .models import Organization, Person, Run
from .snapshot import STATE_FORMAT, fact_sort_key, settings_of


def fact_json(f: past.FactThen, ends: dict[int, Obj], *, supports: bool = True) -> Obj:
    subj = ends[f.subject_id]
    target = ends[f.object_id] if f.object_id is not None else None
    item: Obj = {
        "subject": {"name": subj["name"], "kind": subj["kind"]},
        "relation": f.relation,
        "object": {"name": target["name"], "kind": target["kind"]} if target else {"value": f.value},
        "status": f.status,
        "weight": f.weight,
        "log_odds": f.log_odds,
        "sources": f.sources,
    }
    if supports:
        item["supports"] = f.supports
    item["disputes"] = [{"by": d["by"], "contribution": d["contribution"]} for d in f.disputes]
    return item


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
        items = sorted(((f, fact_json(f, ends)) for f in facts), key=lambda p: fact_sort_key(p[1]))
        out: Obj = {
            "entities": sorted((ends[i] for i in named), key=lambda e: (e["name"], e["kind"])),
            "facts": [{"id": f.id, **item} for f, item in items] if ids else [item for _, item in items],
        }
        if limit is not None:
            out["total"] = total
        return out


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
                "org": r.org_id,
                "person": r.person_id,
                "surface": r.surface,
                "requested_ephemeral": r.requested_ephemeral,
                "ephemeral": r.ephemeral,
                "ended": r.ended_at is not None and r.ended_at <= n,
                "turns": dict(past.turns_at(s, r.id, n)),
                "flow": graph_at(s, "flow", r.id, n),
            }
            for r in runs
        },
    }
