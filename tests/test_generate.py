"""The generator writes the memory its turns would have taught: weights, statuses and the map agree."""

from __future__ import annotations

from backend import SERVER, counted_map, database_url, empty
from sqlalchemy import text
from sqlmodel import Session

from memory_core import MemoryService, make_engine
from memory_core.generate import generate
from memory_core.rules.weights import score
from memory_core.store.graph import map_counts


def _engine(tmp_path, name):
    if SERVER:
        engine = make_engine(database_url(name))
        empty(engine)
        return engine
    return make_engine(f"sqlite:///{tmp_path / (name + '.db')}")


def test_generated_memory_is_consistent_and_deterministic(tmp_path):
    a, b = _engine(tmp_path, "gen_a"), _engine(tmp_path, "gen_b")
    counts = generate(a, supports=3000, seed=11)
    assert counts == generate(b, supports=3000, seed=11)
    assert counts["supports"] >= 3000 and counts["world_facts"] > 100
    assert MemoryService(a).export_state() == MemoryService(b).export_state()
    with Session(a) as s:
        assert map_counts(s, "bench") == counted_map(s, "bench")
        kinds = map_counts(s, "bench")["kinds"]
        assert set(kinds) == {"person", "place", "organization", "event", "idea"}
        facts = s.exec(text("SELECT id, weight, status, sources FROM fact ORDER BY id")).all()
        supports: dict[int, list] = {}
        for fid, origin, key, contrib in s.exec(text("SELECT fact_id, origin, key, contribution FROM support")):
            supports.setdefault(fid, []).append((origin, key, contrib))
        disputes: dict[int, list] = {}
        for fid, contrib in s.exec(text("SELECT fact_id, contribution FROM dispute")):
            disputes.setdefault(fid, []).append(contrib)
        for fid, weight, status, sources in facts:
            sc = score(supports[fid], disputes.get(fid, []), retracted=False)
            assert (sc.weight, sc.status, sc.sources) == (weight, status, sources)
        statuses = {st for _, _, st, _ in facts}
        assert "disputed" in statuses and "active" in statuses


def test_generator_is_seeded_by_its_seed_alone():
    """The same seed writes the same memory, another seed another (a seeded `random.Random`, never
    the module's global one)."""

    def written(seed: int) -> dict:
        svc = MemoryService(make_engine("sqlite://"))
        generate(svc.engine, supports=300, seed=seed)
        return svc.export_state()

    assert written(3) == written(3)
    assert written(3) != written(4)
