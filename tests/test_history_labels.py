"""Issue #38, point 11: `history` names the fact a dispute or retraction names, and `diff` says why a
fact was retracted instead of an empty "()" (R28, R32); the dashboard's history lists say the same."""

from __future__ import annotations

from pathlib import Path

from backend import SERVER, fresh_url
from helpers import memory_cli

from memory_core import MemoryService, load, make_engine, replay
from memory_core.views.history import fact_names, moment_label

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "disputes_and_retraction.json"


def test_history_names_each_corrected_fact_and_diff_says_why_one_was_retracted(tmp_path):
    db = fresh_url("memory_labels") if SERVER else f"sqlite:///{tmp_path / 'm.db'}"
    assert memory_cli("replay", str(SAMPLE), "--db", db).returncode == 0
    lines = memory_cli("history", "--db", db).stdout.splitlines()
    assert any(x.endswith("Jon Eriksen disputed Delta Freight —founded_in→ 1998 (world)") for x in lines)
    assert any(x.endswith("Sofia Brandt retracted Delta Freight —headquartered_in→ Lyon (world)") for x in lines)
    assert not any("a world fact" in x for x in lines)
    out = memory_cli("diff", "--db", db, "--from", "4", "--to", "8").stdout
    assert (
        "  ~ Delta Freight —headquartered_in→ Lyon  0.600 = 0.600 active -> retracted  (retracted by the owner, R28)"
        in out
    )
    assert "()" not in out
    assert (
        "to moment 7: Sofia Brandt retracted Delta Freight"
        in memory_cli("diff", "--db", db, "--from", "4", "--to", "7").stdout
    )


def test_a_correction_in_an_organizations_view_names_only_what_that_view_shows(tmp_path):
    """The dashboard's labels read the facts in the organization's view (R23): a fact outside it is
    said as today, "a world fact"; a moment of no correction is said as it always was."""
    db = fresh_url("memory_labels") if SERVER else f"sqlite:///{tmp_path / 'm.db'}"
    svc = MemoryService(make_engine(db))
    replay(load(str(SAMPLE)), svc)
    rows = svc.moments(org="calder")
    names = {p["id"]: p["name"] for p in svc.people()}
    labels = [moment_label(m, names, fact_names(svc, rows, org="calder")) for m in rows]
    assert "Ria Kapoor disputed Claire Martin —ceo_of→ Delta Freight (world)" in labels
    assert [moment_label(m, names) for m in rows if m["what"] == "retract"] == ["Sofia Brandt retracted a world fact"]
    assert fact_names(svc, rows, org="nobody-here") == {}
    svc.engine.dispose()
