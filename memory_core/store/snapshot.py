"""Memory as plain data: graphs, facts and the `memory-state/1` document."""

from __future__ import annotations

from sqlmodel import Session, select

from ..plain import Obj
from ..rules.settings import SETTINGS
from .driver import driver_of, json_value
from .lookups import OrgRef
from .models import Organization, Person, Run

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


#: What the state format shows of a step (R22): the step, whether it ran, its shortcut; the store also keeps which
#: record a step kept (`record`, for the scenario export: usecases/export.py), which the state leaves out.
STEP_SHOWN = ("step", "ran", "shortcut")


#: A run's turns in order, each with its map, then as the state shows it: now, from the turn's row; after moment :n,
#: from its last log by then (none yet: open, nothing taught, R32), with probes_used null.
_TURNS = "SELECT id, map, status, taught_world, taught_user, taught_flow, skipped, steps, probes_used FROM turn"
_TURNS_AT = """SELECT t.id, t.map, l.status, l.taught_world, l.taught_user, l.taught_flow, l.skipped, l.steps, NULL
 FROM turn t LEFT JOIN turnlog l ON l.turn_id = t.id AND l.moment = (SELECT max(moment) FROM turnlog
 WHERE turn_id = t.id AND moment <= :n) WHERE t.run_id = :r AND t.opened_at <= :n ORDER BY t.seq"""


def turns_json(s: Session, run_id: str, n: int | None = None) -> dict[str, Obj]:
    """A run's turns as the state format shows them now, or (`n`) those opened by moment `n` as they stood then."""
    with driver_of(s) as db:
        rows = db.rows(f"{_TURNS} WHERE run_id = :r ORDER BY seq" if n is None else _TURNS_AT, {"r": run_id, "n": n})
    out = {}
    for tid, taken, *then, probes_used in rows:
        status, w, u, f, skipped, steps = then if then[0] is not None else ("open", 0, 0, 0, [], [])
        out[tid] = {
            "status": status,
            "map": json_value(taken),
            "taught": {"world": w, "user": u, "flow": f},
            "skipped": list(json_value(skipped)),
            "steps": [{k: v for k, v in step.items() if k in STEP_SHOWN} for step in json_value(steps)],
            "probes_used": probes_used,
        }
    return out


def holds_memory(s: Session) -> bool:
    """Whether the database holds an organization, person or run."""
    return any(s.exec(select(t).limit(1)).first() is not None for t in (Organization, Person, Run))
