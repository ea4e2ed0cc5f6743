"""The benchmarks' own workload still runs against the product (B1's teach_workload): a bench that rots silently
publishes nothing (B1 broke when a turn's `taught` became a mapping, found only when B1 was run again)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memory_core import MemoryService, make_engine
from memory_core.generate import generate

pytestmark = pytest.mark.backend_free
ROOT = Path(__file__).resolve().parent.parent


def test_b1_teach_workload_teaches_through_the_service(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    monkeypatch.setattr(sys, "argv", ["run.py"])
    from bench.run import teach_workload

    engine = make_engine(f"sqlite:///{tmp_path / 'b1.db'}")
    generate(engine, supports=300, seed=1)
    taught, ending = teach_workload(MemoryService(engine), turns=2, run_id="smoke", records=2, claims=2)
    assert taught > 0 and ending > 0


def test_b1_baseline_inserts_every_row_the_workload_wrote(tmp_path, monkeypatch):
    """B1's baseline is "the same rows raw": inserted into the copy from before the workload, each table holds
    as many rows as the service left (a table the product starts writing and the baseline forgets fails here)."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    monkeypatch.setattr(sys, "argv", ["run.py"])
    from sqlalchemy import inspect, text

    from bench.run import Bench, raw_insert_rate, teach_workload
    from memory_core.store.database import checkpoint

    b = Bench("sqlite", "quick")
    url, svc = b.generated(300)
    with svc.engine.connect() as conn:
        before = tuple(int(conn.execute(text(f"SELECT max(id) FROM {t}")).scalar_one()) for t in ("entity", "fact"))
    checkpoint(svc.engine)
    svc.engine.dispose()
    pristine = b.url(copy_of=url)
    taught, _ = teach_workload(svc, turns=3, run_id="bench-teach", records=3, claims=2)
    assert taught > 0

    def counts(engine):
        with engine.connect() as conn:
            tables = inspect(conn).get_table_names()
            return {t: conn.execute(text(f'SELECT count(*) FROM "{t}"')).scalar_one() for t in tables}

    wrote = counts(svc.engine)
    for unit in ("turn", "use case", "bulk"):
        assert raw_insert_rate(b, svc, "bench-teach", unit, before, pristine) > 0  # type: ignore[arg-type]
        copy = make_engine(str(b.tmp / f"b{b.n}.db").join(("sqlite:///", "")), create=False)
        inserted = counts(copy)
        copy.dispose()
        assert {t: (n, inserted[t]) for t, n in wrote.items() if inserted[t] != n} == {}, unit
