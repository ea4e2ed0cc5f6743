"""#26, point 5: a notebook's saved file kept what its own deletion cells erased (a read's excerpt, a
turn's id, a deleted person's name). The author's scrub takes those copies out of the saved results,
and nothing else: the cells as written, the cursor, the notes and every other result stay."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory_core.views import notebook as nbk
from memory_core.views.notebook_scrub import erased, pending

pytestmark = pytest.mark.backend_free  # a notebook's scratch memory is its own SQLite file
ROOT = Path(__file__).resolve().parent.parent


def saved(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def results_text(data: dict) -> str:
    """Everything the file saved beside the cells as written: results, reads, refusals, notes."""
    return json.dumps({k: v for k, v in data.items() if k != "scenario"}, ensure_ascii=False)


@pytest.fixture
def erasure_notebook(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path))
    nb = nbk.new(json.loads((ROOT / "sample_data" / "erasure.json").read_text()), "erasure.json")
    nb.run_all()
    nb.save()
    return nb, tmp_path / f"{nb.id}.notebook.json"


def test_scrubbing_takes_what_the_notebooks_deletions_erased_out_of_its_file(erasure_notebook):
    nb, path = erasure_notebook
    before = saved(path)
    gone = erased(nb)
    assert gone.runs and gone.people, "the sample deletes runs and an account"
    # Before: the saved results hold copies of what the cells erased (a read's excerpt of a run deleted later).
    held = [t for t in gone.texts if t in results_text(before)]
    assert held, gone.texts
    assert pending(nb) > 0
    assert nb.scrub_results() > 0
    after = saved(path)
    text = results_text(after)
    assert [t for t in gone.texts if t in text] == []
    for word in gone.runs | gone.turns | gone.people:  # ids, as values or inside a sentence or a record's id
        assert not re.search(rf"(?<![\w-]){re.escape(word)}(?:#\d+)?(?![\w-])", text), word
    # Nothing else lost: the cells as their author wrote them, the cursor, the notes, the moments...
    for key in ("scenario", "cursor", "notes", "moments", "gen", "story", "last", "file", "id"):
        assert after[key] == before[key], key
    assert held[0] in json.dumps(after["scenario"], ensure_ascii=False)  # the author's words stay in the cells
    # ...and every result that held nothing erased, as it was.
    words = gone.texts | gone.words
    untouched = [
        k for k, r in before["results"].items() if not any(w in json.dumps(r, ensure_ascii=False) for w in words)
    ]
    assert untouched and all(after["results"][k] == before["results"][k] for k in untouched)
    assert set(after["results"]) == set(before["results"])
    # The scrubbed file reopens as it was written, and a second scrub has nothing left to do.
    again = nbk.reopen(nb.id)
    assert again is not None and again.results == after["results"] and again.reads == after["reads"]
    assert pending(again) == 0 and again.scrub_results() == 0


def test_a_pointer_into_an_erased_run_is_cleared_as_memory_clears_it(erasure_notebook):
    """A read answered before the run was deleted: its support keeps key, origin and contribution (R29)."""
    nb, path = erasure_notebook
    reads = [s for r in nb.reads for s in (r["result"] or [])]
    pointed = [s for s in reads if s.get("run") in erased(nb).runs]
    assert pointed
    nb.scrub_results()
    after = [s for r in saved(path)["reads"] for s in (r["result"] or [])]
    assert [(s["key"], s["origin"], s["contribution"]) for s in after] == [
        (s["key"], s["origin"], s["contribution"]) for s in reads
    ]
    assert all(s["run"] is None and s["excerpt"] is None for s in after if s["key"] in {p["key"] for p in pointed})


def test_a_notebook_whose_cells_erased_nothing_has_nothing_to_scrub(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path))
    nb = nbk.new(json.loads((ROOT / "sample_data" / "learn_from_users.json").read_text()), "learn_from_users.json")
    nb.run_all()
    nb.save()
    path = tmp_path / f"{nb.id}.notebook.json"
    before = path.read_bytes()
    assert not erased(nb) and pending(nb) == 0 and nb.scrub_results() == 0
    assert path.read_bytes() == before
