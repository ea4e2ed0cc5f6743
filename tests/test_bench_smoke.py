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
