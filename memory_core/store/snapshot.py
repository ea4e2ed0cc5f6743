"""Memory as plain data: graphs, facts and the `memory-state/1` document."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from sqlmodel import Session, col, select

from ..plain import Obj
from ..rules.settings import SETTINGS
from .lookups import OrgRef, picked
from .models import Fact, Organization, Person, Run, Turn

if TYPE_CHECKING:
    from .past import PastFact

STATE_FORMAT = "memory-state/1"
F = TypeVar("F")


def settings_of(org: Organization | OrgRef) -> dict[str, bool]:
    """The four settings of an organization, by their names (R11 to R14)."""
    return {st.name: bool(getattr(org, st.column)) for st in SETTINGS}


#: A SUPPORT of the state format: its keys, in order.
SUPPORT = ("key", "origin", "run", "turn", "record", "contribution")


def fact_sort_key(f: Obj) -> tuple[str, ...]:
    """Facts are sorted by subject name, relation, then object name or value."""
    s, o = f["subject"], f["object"]
    return (s["name"], f["relation"], o.get("name", o.get("value", "")), s["kind"], o.get("kind", ""))


def fact_json(f: Fact | PastFact, ends: Mapping[Any, Obj], *, supports: list[Obj], disputes: list[Obj]) -> Obj:
    """A FACT of the state format, now or then: its ends by name and kind, its score, its supports and disputes."""
    subj = ends[f.subject_id]
    target = ends[f.object_id] if f.object_id is not None else None
    return {
        "subject": {"name": subj["name"], "kind": subj["kind"]},
        "relation": f.relation,
        "object": {"name": target["name"], "kind": target["kind"]} if target else {"value": f.value},
        "status": f.status,
        "weight": f.weight,
        "log_odds": f.log_odds,
        "sources": f.sources,
        "supports": supports,
        "disputes": [{"by": d["by"], "contribution": d["contribution"]} for d in disputes],
    }


def in_order(items: Iterable[tuple[F, Obj]]) -> list[tuple[F, Obj]]:
    """Facts with their FACT objects, sorted as the state format sorts facts."""
    return sorted(items, key=lambda pair: fact_sort_key(pair[1]))


def graph_of(entities: Iterable[Obj], items: list[tuple[Any, Obj]], *, ids: bool, total: int | None) -> Obj:
    """A graph of the state format from its entities and sorted facts; with `ids` each fact's id; with `total`."""
    out: Obj = {
        "entities": sorted(entities, key=lambda e: (e["name"], e["kind"])),
        "facts": [{"id": f.id, **item} if ids else item for f, item in items],
    }
    if total is not None:
        out["total"] = total
    return out


#: What the state format shows of a step (R22); the store also keeps which record a step kept
#: (`record`, for the scenario export: usecases/export.py), which the state leaves out.
STEP_SHOWN = ("step", "ran", "shortcut")


def steps_json(steps: Sequence[Obj]) -> list[Obj]:
    """A turn's steps as the state format shows them: each step, whether it ran, its shortcut."""
    return [{k: v for k, v in step.items() if k in STEP_SHOWN} for step in steps]


def turns_json(s: Session, run_id: str) -> dict[str, Obj]:
    """A run's turns as the state format shows them now."""
    return {
        t.id: {
            "status": t.status,
            "map": t.map,
            "taught": {"world": t.taught_world, "user": t.taught_user, "flow": t.taught_flow},
            "skipped": list(t.skipped),
            "steps": steps_json(t.steps),
            "probes_used": t.probes_used,
        }
        for t in s.exec(select(Turn).where(Turn.run_id == run_id).order_by(col(Turn.seq)))
    }


_RUN = "org=org_id person=person_id surface requested_ephemeral ephemeral"  # a run's head, now and then


def document(
    s: Session,
    n: int | None,
    *,
    org: Callable[[Organization], Obj],
    graph: Callable[[str, str], Obj],
    run: Callable[[Run], Obj],
) -> Obj:
    """`memory-state/1` without `reads` and `refused`: of now (`n` None) or of what there was after moment `n` (R32)."""

    def rows(model: Any, since: Any) -> Sequence[Any]:
        return s.exec(select(model).where(*(() if n is None else (since <= n,))).order_by(col(model.seq))).all()

    return {
        "format": STATE_FORMAT,
        "organizations": {
            o.id: {**org(o), "world": graph("world", o.id)} for o in rows(Organization, Organization.since)
        },
        "people": {p.id: {"user": graph("user", p.id)} for p in rows(Person, Person.since)},
        "runs": {r.id: {**picked(r, _RUN), **run(r), "flow": graph("flow", r.id)} for r in rows(Run, Run.started_at)},
    }


def holds_memory(s: Session) -> bool:
    """Whether the database holds an organization, person or run."""
    return any(s.exec(select(t).limit(1)).first() is not None for t in (Organization, Person, Run))
