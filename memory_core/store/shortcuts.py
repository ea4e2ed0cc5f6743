"""Shortcuts (R22), over the graphs a turn sees (rules/visibility.py, R20). The graph reads are in probes.py."""

from __future__ import annotations

from sqlmodel import Session, select

from ..plain import Obj
from ..rules.shortcuts import Candidate, choose_shortcut
from ..rules.visibility import visible
from .graph import find_entity
from .lookups import RunRef
from .models import Entity, Fact


def shortcut(s: Session, run: RunRef, answers: Obj, *, min_weight: float, no_memory_shortcuts: bool) -> Obj | None:
    """R22: the heaviest visible active answer at or above the step's minimum weight, or None."""
    if no_memory_shortcuts:  # R14: every step runs
        return None
    found: list[Candidate] = []
    subject = answers["subject"]
    for graph, owner in visible(run_id=run.id, org_id=run.org_id, person_id=run.person_id):
        e = find_entity(s, graph, owner, subject["kind"], subject["name"])
        if e is None:
            continue
        found += [
            Candidate(graph=graph, weight=f.weight, status=f.status, fact=f)
            for f in s.exec(
                select(Fact).where(
                    Fact.graph == graph,
                    Fact.owner == owner,
                    Fact.subject_id == e.id,
                    Fact.relation == answers["relation"],
                    Fact.status == "active",
                )
            )
        ]
    best = choose_shortcut(found, min_weight=min_weight, no_memory_shortcuts=no_memory_shortcuts)
    if best is None:
        return None
    f = best.fact
    subject, target = s.get(Entity, f.subject_id), s.get(Entity, f.object_id) if f.object_id is not None else None
    assert subject is not None
    return {
        "fact": {
            "subject": {"name": subject.name, "kind": subject.kind},
            "relation": f.relation,
            "object": {"name": target.name, "kind": target.kind} if target else {"value": f.value},
            "graph": best.graph,
        },
        "weight": best.weight,
    }
