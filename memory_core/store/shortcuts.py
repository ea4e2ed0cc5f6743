"""Reading memory: what a turn sees (R20) and shortcuts (R22). The graph reads are in probes.py."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from ..rules.shortcuts import shortcut_allowed
from .graph import find_entity
from .models import Fact, Run
from .probes import GRAPH_ORDER
from .snapshot import facts_json

Obj = dict[str, Any]


def visible(run: Run) -> list[tuple[str, str]]:
    """R20: the run's organization's World graph, its person's User graph, its own Flow graph."""
    graphs = [("world", run.org_id)]
    if run.person_id is not None:
        graphs.append(("user", run.person_id))
    graphs.append(("flow", run.id))
    return graphs


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
