"""What a completed turn writes (R1, R5, R7 to R10), and what a replacement withdraws (R3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import insert, select
from sqlmodel import Session

from .graph import Changes, FactRow, GraphWriter, refresh_facts, withdraw
from .models import NestedWork, Organization, Record, Run, Support, Turn
from .rules import RunFacts, record_teaches, skip_rule
from .weights import contribution, independence_key, reliability_of

Obj = dict[str, Any]


@dataclass
class Teaching:
    """What one completed turn taught: supports per graph, claims kept out, fact changes."""

    taught: dict[str, int] = field(default_factory=lambda: {"world": 0, "user": 0, "flow": 0})
    skipped: list[Obj] = field(default_factory=list)
    changes: Changes = field(default_factory=Changes)
    excluded_records: list[str] = field(default_factory=list)  # R5: of failed or cancelled nested work
    skipped_claims: list[str] = field(default_factory=list)  # what each skipped claim says, for people


def claim_label(claim: Obj) -> str:
    o = claim["object"]
    return f"{claim['subject']['name']} —{claim['relation']}→ {o.get('name', o.get('value'))} ({claim['graph']})"


def run_facts(run: Run, org: Organization) -> RunFacts:
    """R16: the settings as they stand now, when the turn's teaching is written."""
    return RunFacts(
        surface=run.surface,
        ephemeral=run.ephemeral,
        person_erased=run.person_id is None,
        learn_from_ephemeral_runs=org.learn_from_ephemeral_runs,
        learn_from_users=org.learn_from_users,
    )


def plan(
    records: list[Any], nested: dict[int, str], facts: RunFacts, *, run_id: str, org_id: str, person_id: str | None
) -> tuple[list[tuple[Any, Obj, str, str]], Teaching]:
    """Pure: which claim goes into which graph (R7 to R9), which are kept out and why (R10).
    A record is anything with `id`, `nested_id`, `origin` and `claims` (a row or a Record)."""
    result = Teaching()
    writes = []
    for rec in records:
        if not record_teaches(nested.get(rec.nested_id) if rec.nested_id is not None else None):
            result.excluded_records.append(rec.id)
            continue
        for i, claim in enumerate(rec.claims):
            writes.append((rec, claim, "flow", run_id))  # R7: every claim into the run's Flow graph
            graph = claim["graph"]
            if graph == "flow":
                continue
            rule = skip_rule(graph, facts, origin=rec.origin)
            if rule:
                result.skipped.append({"record": rec.id, "claim": i, "rule": rule})
                result.skipped_claims.append(claim_label(claim))
            else:
                writes.append((rec, claim, graph, org_id if graph == "world" else person_id or ""))
    return writes, result


def teach(s: Session, turn: Turn, run: Run, org: Organization) -> Teaching:
    """R1: write everything a completed turn teaches, inside the caller's one transaction, in a
    few batched statements (graph.py works on rows, not ORM objects)."""
    s.flush()
    conn = s.connection()
    rt = Record.__table__  # type: ignore[attr-defined]
    cols = [rt.c.id, rt.c.nested_id, rt.c.origin, rt.c.source, rt.c.reliability, rt.c.claims]
    records = list(conn.execute(select(*cols).where(rt.c.turn_id == turn.id).order_by(rt.c.number)))
    nt = NestedWork.__table__  # type: ignore[attr-defined]
    nested: dict[int, str] = dict(conn.execute(select(nt.c.id, nt.c.status).where(nt.c.turn_id == turn.id)).all())
    writes, result = plan(records, nested, run_facts(run, org), run_id=run.id, org_id=org.id, person_id=run.person_id)
    writer = GraphWriter(conn)
    triples = [(graph, owner, claim) for _, claim, graph, owner in writes]
    writer.load(triples)
    facts = writer.facts_for(triples)
    seen: set[tuple[int, str]] = set()
    touched: dict[int, FactRow] = {}
    rows = []
    for (rec, _, graph, _), fact in zip(writes, facts, strict=True):
        if (fact.id, rec.id) in seen:
            continue  # one record, one support per fact
        seen.add((fact.id, rec.id))
        rows.append(
            {
                "fact_id": fact.id,
                "key": independence_key(rec.origin, rec.source, run_id=run.id),
                "origin": rec.origin,
                "contribution": contribution(reliability_of(rec.origin, rec.reliability)),
                "run_id": run.id,
                "turn_id": turn.id,
                "record_id": rec.id,
            }
        )
        result.taught[graph] += 1
        touched[fact.id] = fact
    if rows:
        conn.execute(insert(Support.__table__), rows)  # type: ignore[attr-defined]
    refresh_facts(conn, list(touched.values()), result.changes, writer.entities.values())
    return result


def withdraw_turn(s: Session, turn: Turn) -> Changes:
    """R3: replacing a completed turn withdraws every support it added, in all three graphs."""
    changes = Changes()
    s.flush()
    conn = s.connection()
    st = Support.__table__  # type: ignore[attr-defined]
    rows = conn.execute(select(st.c.id, st.c.fact_id).where(st.c.turn_id == turn.id)).all()
    withdraw(conn, [r[0] for r in rows], [r[1] for r in rows], changes)
    return changes
