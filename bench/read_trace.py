"""B10's recall-trace row (issue #38, point 7): a read that keeps its trace (store/reads.py; on
PostgreSQL inside its one statement, probes.counted_read) against the same read with the keeping
switched off, which is the read as it was before, in one process, the two taken in turn so a slow
moment of the machine falls on both sides."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from memory_core.rules.shortcuts import GRAPH_ORDER
from memory_core.store import probes
from memory_core.store import reads as store_reads


def _p50(values: list[float]) -> float:
    return statistics.median(values)


#: The count as it was before the trace (R21): the turn's probes only, no read's id taken (probes.count_read now).
COUNT = "UPDATE turn SET probes_used = probes_used + 1 WHERE id = :t AND status = 'open'"
COUNT_ONE = """UPDATE turn t SET probes_used = t.probes_used + 1
 FROM run r LEFT JOIN workflow w ON w.id = r.workflow_id
 WHERE t.id = :t AND r.id = t.run_id AND t.status = 'open' AND NOT r.ended
 AND (w.memory_probes IS NULL OR t.probes_used < w.memory_probes)
 RETURNING t.probes_used AS used, w.memory_probes AS cap, r.org_id AS world, r.person_id AS usr, r.id AS flow,
 t.id AS turn, t.next_record AS records"""
#: PostgreSQL's one-statement read as it was before the trace: counted and answered, nothing kept (B2's raw SQL too).
UNTRACED = "WITH c AS ({update}) SELECT c.used, c.cap, q.* FROM c LEFT JOIN LATERAL ({query}) q ON true"
UNTRACED_RESOLVE = {
    k: UNTRACED.format(update=COUNT_ONE, query=probes._resolve_sql(k, probes._COUNTED_OWNER)) for k in (False, True)
}
UNTRACED_EXPAND = {
    (g, rel): UNTRACED.format(update=COUNT_ONE, query=probes._expand_sql(rel, probes._COUNTED_OWNER[g]))
    for g in GRAPH_ORDER
    for rel in (False, True)
}


def untraced_count(db: Any, turn_id: str, cap: int | None) -> bool:
    """probes.count_read as it was before the trace: the guarded count alone, no read's id taken."""
    return bool(db.change(COUNT if cap is None else COUNT + " AND probes_used < :cap", {"t": turn_id, "cap": cap}))


@contextmanager
def untraced() -> Iterator[None]:
    """Reads as they were before the trace: counted alone and keeping nothing; PostgreSQL's one statement without its
    INSERT."""
    kept = store_reads.keep, probes.count_read, probes.TRACED_RESOLVE, probes.TRACED_EXPAND
    store_reads.keep = lambda *a, **k: None  # type: ignore[assignment]
    probes.count_read = untraced_count  # type: ignore[assignment]
    probes.TRACED_RESOLVE, probes.TRACED_EXPAND = UNTRACED_RESOLVE, UNTRACED_EXPAND
    try:
        yield
    finally:
        store_reads.keep, probes.count_read, probes.TRACED_RESOLVE, probes.TRACED_EXPAND = kept  # type: ignore[assignment]


def record(b: Any) -> None:
    """GraphResolve and GraphExpand p50 with the trace kept vs without, at B2's size."""
    _, svc = b.generated(b.size["reads"])
    facts = svc.counts()["fact"]
    svc.start_run("trace", org="bench", person="p0")
    svc.open_turn("trace-t", run="trace", request={"text": "read", "claims": []})
    rows = b.world_entities(svc)
    sample = [(name, kind) for name, kind, _ in random.Random(38).sample(rows, min(300, len(rows)))]
    for call in ("GraphResolve", "GraphExpand"):
        times: dict[bool, list[float]] = {True: [], False: []}
        for n in range(4):
            for i, (name, kind) in enumerate(sample):
                args = {"name": name} if call == "GraphResolve" else {"entity": {"name": name, "kind": kind}}
                for traced in (True, False) if (n + i) % 2 else (False, True):  # the second of a pair is warmer
                    with nullcontext() if traced else untraced():
                        t0 = time.perf_counter()
                        svc.read("trace-t", call=call, args=args)
                        times[traced].append(time.perf_counter() - t0)
        kept, bare = _p50(times[True]), _p50(times[False])
        b.record(
            "B10",
            f"{call} p50 ms with its trace kept vs without, {facts:,} facts",
            kept * 1000,
            bare * 1000,
            "ratio <= 1.3",
            kept / bare <= 1.3,
            part="reads",  # run alone (--only b10reads), it replaces only its own rows
        )
