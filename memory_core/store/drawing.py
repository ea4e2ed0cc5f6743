"""Facts as the dashboard draws and lists them: the heaviest, their supports and disputes counted in the database."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Row, func, select
from sqlalchemy.orm import Session, aliased
from sqlmodel import col

from ..plain import Obj
from .lookups import picked
from .models import Dispute, Entity, Fact, Support

#: The fact columns the dashboard's lists and drawing read.
_TOP = "id graph owner subject_id object_id relation value status weight log_odds sources".split()


def _heaviest(s: Session, where: ColumnElement[bool], limit: int | None, *, erased: bool = True) -> list[Row[Any]]:
    """The `limit` heaviest facts `where` holds, their ends and counts of their votes (R29), in the state format's
    order (subject name, relation, object name or value, kinds)."""
    by_weight = (col(Fact.weight).desc(), col(Fact.id))
    top = select(*(col(getattr(Fact, c)) for c in _TOP)).where(where).order_by(*by_weight).limit(limit).subquery("top")
    subject, target = aliased(Entity, name="subject"), aliased(Entity, name="target")

    def counted(fact_id: Any, *also: ColumnElement[bool]) -> Any:
        return select(func.count()).where(fact_id == top.c.id, *also).scalar_subquery()

    votes = [counted(col(Support.fact_id)).label("supports"), counted(col(Dispute.fact_id)).label("disputes")]
    votes += [counted(col(Support.fact_id), col(Support.record_id).is_(None)).label("erased")] if erased else []
    ends: list[Any] = [col(e.name).label(f"{n}_name") for e, n in ((subject, "subject"), (target, "object"))]
    ends += [col(e.kind).label(f"{n}_kind") for e, n in ((subject, "subject"), (target, "object"))]
    rows = s.connection().execute(  # fetched at once (row by row cost a third of the read)
        select(top, *ends, *votes)
        .select_from(top)
        .join(subject, col(subject.id) == top.c.subject_id)
        .outerjoin(target, col(target.id) == top.c.object_id)
        .order_by(top.c.weight.desc(), top.c.id)
    )
    return sorted(rows.all(), key=_state_order)


def _state_order(r: Row[Any]) -> tuple[str, ...]:
    entity = r.object_kind is not None
    return (r.subject_name, r.relation, r.object_name if entity else r.value or "", r.subject_kind, r.object_kind or "")


def graph_for_drawing(s: Session, graph: str, owner: str, *, limit: int) -> Obj:
    """A graph's `limit` heaviest facts (ties by id) as the drawing reads them, the entities they name, and `total`."""
    where = (col(Fact.graph) == graph) & (col(Fact.owner) == owner)
    rows = _heaviest(s, where, limit, erased=False)  # a drawing does not show it
    ends = {(r.subject_name, r.subject_kind) for r in rows} | {(r.object_name, r.object_kind) for r in rows}
    total = s.connection().execute(select(func.count()).select_from(Fact).where(where)).scalar_one()
    return {
        "entities": [{"name": n, "kind": k} for n, k in sorted(e for e in ends if e[1] is not None)],
        "facts": [
            {
                "id": r.id,
                "subject": {"name": r.subject_name, "kind": r.subject_kind},
                "relation": r.relation,
                "object": {"value": r.value}
                if r.object_kind is None
                else {"name": r.object_name, "kind": r.object_kind},
                **picked(r, "status weight sources"),
                "supports": int(r.supports),
                "disputes": int(r.disputes),
            }
            for r in rows
        ],
        "total": int(total),
    }


def fact_rows(s: Session, where: ColumnElement[bool], *, limit: int | None = None) -> list[Obj]:
    """Fact weights' rows for the facts `where` holds, the `limit` heaviest, in the state format's order (R29)."""
    return [
        {
            **picked(r, "id graph owner subject=subject_name subject_kind relation"),
            "object": r.object_name if r.object_kind is not None else r.value,
            "object_kind": r.object_kind if r.object_kind is not None else "value",
            **picked(r, "status weight log_odds sources"),
            **{k: int(getattr(r, k)) for k in ("supports", "disputes", "erased")},
        }
        for r in _heaviest(s, where, limit)
    ]
