"""What a completed turn writes (R1, R5, R7 to R10); a replacement withdraws it (R3: turns.withdraw_teaching)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..plain import Obj
from ..rules.learning import RunFacts, record_teaches, skip_rule
from ..rules.weights import contribution, independence_key, reliability_of
from ..rules.wording import claim_label
from .driver import Driver, json_value
from .facts import GraphWriter, StoredFact, refresh_facts
from .graph import FactChanges


@dataclass(frozen=True, slots=True)
class SkippedClaim:
    """One claim a completed turn kept out of a graph (R10): the record, the claim's index, the rule, its words."""

    record: str
    claim: int
    rule: str
    label: str

    def stored(self) -> Obj:
        """As the turn's row keeps it (`skipped`, and the state export): no label."""
        return {"record": self.record, "claim": self.claim, "rule": self.rule}

    def to_json(self) -> Obj:
        return {**self.stored(), "label": self.label}


@dataclass
class Teaching:
    """What one completed turn taught: supports per graph, claims kept out, fact changes."""

    taught: dict[str, int] = field(default_factory=lambda: {"world": 0, "user": 0, "flow": 0})
    skipped: list[SkippedClaim] = field(default_factory=list)  # one per claim kept out (R10)
    changes: FactChanges = field(default_factory=FactChanges)
    excluded_records: list[str] = field(default_factory=list)  # R5: of failed or cancelled nested work


def plan(
    records: list[Any], nested: dict[int, str], facts: RunFacts, *, run_id: str, org_id: str, person_id: str | None
) -> tuple[list[tuple[Any, Obj, str, str]], Teaching]:
    """Pure: which claim goes into which graph (R7 to R9), which are kept out and why (R10)."""
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
                result.skipped.append(SkippedClaim(rec.id, i, rule, claim_label(claim)))  # R10
            else:
                writes.append((rec, claim, graph, org_id if graph == "world" else person_id or ""))
    return writes, result


class RecordToTeach(NamedTuple):
    id: str
    nested_id: int | None
    origin: str
    source: str | None
    reliability: float | None
    claims: list[Obj]


SUPPORT_INSERT = (
    'INSERT INTO support (fact_id, "key", origin, contribution, run_id, turn_id, record_id, since) '
    "VALUES (:fact_id, :key, :origin, :contribution, :run_id, :turn_id, :record_id, :since)"
)


def teach(
    db: Driver,
    turn_id: str,
    facts: RunFacts,
    nested: dict[int, str],
    *,
    run_id: str,
    org_id: str,
    person_id: str | None,
    moment: int,
) -> Teaching:
    """R1: write everything a completed turn teaches, in a few batched statements on the driver (R5, R16, R32)."""
    sql = "SELECT id, nested_id, origin, source, reliability, claims FROM record WHERE turn_id = :t ORDER BY number"
    records = [RecordToTeach(*r[:5], json_value(r[5])) for r in db.rows(sql, {"t": turn_id})]  # type: ignore[call-arg]
    writes, result = plan(records, nested, facts, run_id=run_id, org_id=org_id, person_id=person_id)
    writer = GraphWriter(db, moment)
    triples = [(graph, owner, claim) for _, claim, graph, owner in writes]
    writer.load(triples)
    found = writer.facts_for(triples)
    seen: set[tuple[int, str]] = set()
    touched: dict[int, StoredFact] = {}
    pending: dict[int, list[tuple[str, str, float]]] = {}  # each fact's new votes (origin, key, contribution)
    rows = []
    for (rec, _, graph, _), fact in zip(writes, found, strict=True):
        if (fact.id, rec.id) in seen:
            continue  # one record, one support per fact
        seen.add((fact.id, rec.id))
        key = independence_key(rec.origin, rec.source, run_id=run_id)
        weight = contribution(reliability_of(rec.origin, rec.reliability))
        pending.setdefault(fact.id, []).append((rec.origin, key, weight))
        row = dict(fact_id=fact.id, key=key, origin=rec.origin, contribution=weight, record_id=rec.id)
        rows.append({**row, "run_id": run_id, "turn_id": turn_id, "since": moment})
        result.taught[graph] += 1
        touched[fact.id] = fact
    refresh_facts(
        db,
        list(touched.values()),
        result.changes,
        writer.entities.values(),
        moment=moment,
        writer=writer,
        pending=pending,
    )
    db.many(SUPPORT_INSERT, rows)  # after the facts they point to
    return result
