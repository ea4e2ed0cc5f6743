"""Memory as plain data: graphs, facts and the `memory-state/1` document."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlmodel import Session, col, select

from ..plain import Obj
from ..rules.settings import SETTINGS
from .lookups import OrgRef, picked
from .models import Organization, Person, Run, Turn

STATE_FORMAT = "memory-state/1"


def settings_of(org: Organization | OrgRef) -> dict[str, bool]:
    """The four settings of an organization, by their names (R11 to R14)."""
    return {st.name: bool(getattr(org, st.column)) for st in SETTINGS}


#: A SUPPORT of the state format: its keys, in order.
SUPPORT = ("key", "origin", "run", "turn", "record", "contribution")


def fact_sort_key(f: Obj) -> tuple[str, ...]:
    """Facts are sorted by subject name, relation, then object name or value."""
    s, o = f["subject"], f["object"]
    return (s["name"], f["relation"], o.get("name", o.get("value", "")), s["kind"], o.get("kind", ""))


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
