"""Sandboxes: what-ifs run through the real service and change nothing."""

import json

import pytest
from backend import SERVER, fresh_service
from helpers import HQ, open_turn, rec, scenario, start, web

from memory_core import MemoryService, TurnEnded, make_engine, parse, replay
from memory_core import errors as E


@pytest.fixture(params=["memory", "file", "server"])
def loaded(request, tmp_path):
    if request.param == "server":
        if not SERVER:
            pytest.skip("needs PostgreSQL")
        svc = fresh_service()
    else:
        svc = MemoryService(make_engine("sqlite://" if request.param == "memory" else f"sqlite:///{tmp_path / 'm.db'}"))
    events = [start(), open_turn("t1"), rec("t1", web("https://a.example/", HQ))]
    replay(parse(json.dumps(scenario(events))), svc)
    return svc


def test_sandbox_shows_what_completing_would_teach_and_changes_nothing(loaded):
    before = loaded.export_state()
    with loaded.sandbox() as sandbox:
        outcome = sandbox.end_turn("t1", status="completed")
        assert {c.kind for c in outcome.changes} == {"added"}
        assert sandbox.export_state()["organizations"]["acme"]["map"]["facts"] == 1
        with pytest.raises(E.TurnNotOpen):
            sandbox.end_turn("t1", status="completed")  # a refusal inside keeps the sandbox usable
        assert sandbox.export_state()["runs"]["r1"]["turns"]["t1"]["status"] == "completed"
    assert loaded.export_state() == before
    assert loaded.end_turn("t1", status="failed") == TurnEnded(status="failed", rule="R2")  # teaches nothing


def test_sandbox_erasure_preview_rolls_back(loaded):
    with loaded.sandbox() as sandbox:
        sandbox.delete_run("r1", by="dana")
        assert sandbox.export_state()["runs"] == {}
    assert "r1" in loaded.export_state()["runs"]
