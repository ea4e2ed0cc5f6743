"""#24, point 3: a notebook cell's result is typed by its event's kind (`do`), never guessed from
which keys it holds, and what the Notebook page shows of it is said by a view (views/cell_said),
which the page only lays out. Every sample's cells, run in a notebook, are read back and said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core.format.events import EVENT_MODELS
from memory_core.format.replay import BY_EVENT
from memory_core.usecases.results import ReadResult
from memory_core.views import cell_said as said
from memory_core.views import notebook as nbk

pytestmark = pytest.mark.backend_free  # scratch SQLite notebooks of their own
ROOT = Path(__file__).resolve().parent.parent
SMALL = sorted(p for p in (ROOT / "sample_data").glob("*.json") if p.name != "demo.json")


def texts(pieces: list[said.Piece]) -> list[str]:
    return [p.text for p in pieces if isinstance(p, said.Said)]


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> list[tuple[str, dict, dict]]:
    """Every small sample run to its end in a notebook: (sample, event, kept result) per cell."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path_factory.mktemp("notebooks")))
    out = []
    try:
        for path in SMALL:
            nb = nbk.new(json.loads(path.read_text()), path.name)
            evs = nb.scenario["events"]
            nb.run_to(len(evs) - 1)
            out += [(path.name, evs[int(i)], res) for i, res in nb.results.items()]
    finally:
        mp.undo()
    return out


def test_every_kind_of_event_has_its_detail_and_its_words(ran):
    assert set(BY_EVENT) == set(EVENT_MODELS)
    bare = [said.read(r).model_copy(update={"changes": [], "skipped": []}) for _, _, r in ran if r["status"] == "ok"]
    assert {c.do for c in bare if said.said(c)} == set(EVENT_MODELS)  # each kind says something of its own


def test_every_samples_cell_reads_back_and_says_something(ran):
    kinds = set()
    for sample, event, res in ran:
        cell = said.read(json.loads(json.dumps(res)))  # as the file keeps it
        assert cell.do == event["do"], sample
        pieces = said.said(cell)
        assert pieces, (sample, res)
        kinds.add(cell.do)
    assert kinds == set(EVENT_MODELS)  # the small samples hold every kind


def test_what_a_use_case_writes_is_what_the_notebook_reads(ran):
    """One model per result: the use case's result (usecases/results) is what the notebook writes
    and reads back, to the byte (R10's skipped claims beside it)."""
    for sample, event, res in ran:
        if res["status"] != "ok":
            continue
        model = BY_EVENT[event["do"]]
        assert model.model_validate(res["detail"]).to_json() == res["detail"], (sample, event["do"])
        assert set(res["detail"]) <= {f.serialization_alias or name for name, f in model.model_fields.items()}, sample
        assert said.read(res).model_dump(mode="json", by_alias=True, exclude={"scrubbed"}) == res, sample


def test_a_completed_turn_says_what_it_taught_and_a_failed_one_its_rule(ran):
    ends = [(e, said.read(r)) for _, e, r in ran if e["do"] == "end_turn" and r["status"] == "ok"]
    done = next(c for e, c in ends if e["status"] == "completed")
    failed = next(c for e, c in ends if e["status"] != "completed")
    assert any(t.startswith("Taught ") and "(R1, R7 to R9)" in t for t in texts(said.said(done)))
    words = texts(said.said(failed, evidence=["t#0"]))
    assert words[0].startswith("R2: ") and any("Records kept as evidence (R2)" in t and "**t\\#0**" in t for t in words)


def test_an_erasure_is_said_in_words_not_as_json(ran):
    gone = [said.read(r) for _, e, r in ran if e["do"] in ("delete_run", "delete_account") and r["status"] == "ok"]
    assert gone
    for cell in gone:
        words = " ".join(texts(said.said(cell)))
        assert words.startswith("Erased ") and ("(R29)" in words or "(R30)" in words)
        assert "{" not in words


def test_a_read_answers_with_a_table_and_its_budget(ran):
    reads = [said.read(r) for _, e, r in ran if e["do"] == "read" and r["status"] == "ok"]
    answered = next(c for c in reads if isinstance(c.detail, ReadResult) and c.detail.result)
    pieces = said.said(answered)
    assert isinstance(pieces[1], said.ReadAnswer) and "R21" in texts(pieces)[0]


def test_a_refusal_says_its_sentence_then_its_code():
    cell = said.read(
        {
            "index": 3,
            "do": "end_turn",
            "status": "refused",
            "reason": "turn_not_open",
            "message": "turn t1 is not open (R1)",
        }
    )
    (piece,) = said.said(cell)
    assert piece.tone == "error" and piece.text == r"Refused: turn t1 is not open \(R1\) (`turn_not_open`)"


def test_the_kind_is_the_events_not_the_keys_it_holds():
    """A start_run's result holding another kind's keys says a start_run's words, nothing else."""
    cell = said.read(
        {
            "index": 0,
            "do": "start_run",
            "status": "ok",
            "detail": {"ephemeral": False, "taught": {"world": 9, "user": 0, "flow": 0}, "result": [1]},
        }
    )
    assert texts(said.said(cell)) == ["Run started."]


@pytest.mark.parametrize(
    ("res", "where"),
    [
        ({"index": 1, "do": "end_turn", "status": "ok", "detail": {"taught": {"world": "x"}}}, "taught.world"),
        ({"index": 1, "do": "teleport", "status": "ok"}, "`do`"),
        ({"index": 1, "do": "read", "status": "done"}, "status"),
        ({"index": 1, "do": "delete_run", "status": "ok", "detail": {"run": "r"}}, "turns"),
    ],
)
def test_a_result_of_the_wrong_shape_is_refused_saying_where(res, where):
    with pytest.raises(ValueError, match=where.replace(".", r"\.")):
        said.read(res)


def test_a_notebook_file_holding_a_damaged_result_is_refused_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path))
    nb = nbk.new(json.loads((ROOT / "sample_data" / "erasure.json").read_text()), "erasure.json")
    nb.run_to(2)
    nb.save()
    path = tmp_path / f"{nb.id}.notebook.json"
    data = json.loads(path.read_text())
    data["results"]["1"]["detail"] = {"map": {"facts": "many"}}
    data["results"]["1"]["do"] = "open_turn"
    path.write_text(json.dumps(data))
    with pytest.raises(nbk.NotebookDamaged, match=r"`results\.1`.*map\.facts"):
        nbk.reopen(nb.id)


def test_a_correction_and_a_setting_are_said_in_words(ran):
    """Found in a trial: a dispute that weakened a fact showed only its table, and a setting read
    `False → True` (R15, R28)."""
    disputed = next(said.read(r) for _, e, r in ran if e["do"] == "dispute" and r["status"] == "ok" and r["changes"])
    assert texts(said.said(disputed))[0].startswith("Disputed (R28): ")
    changed = next(said.read(r) for _, e, r in ran if e["do"] == "set_settings" and r["detail"].get("changed"))
    words = texts(said.said(changed))[0]
    assert words.startswith("Settings changed (R15): ") and ("on → off" in words or "off → on" in words)
    assert "True" not in words and "False" not in words


def test_a_reads_answer_says_erased_where_an_erasure_left_nothing():
    from memory_core.views.cells import answer_rows

    (row,) = answer_rows([{"source": "doc:1", "run": None, "excerpt": None, "weight": None}])
    assert row == {"source": "doc:1", "run": "(erased)", "excerpt": "(erased)", "weight": "—"}


def test_a_claim_kept_out_is_counted_from_one_as_people_count(ran):
    """#25: "claim 1 of record t4#0" is a record's first claim (the format's positions count from 0)."""
    warned = 0
    for _, _, res in ran:
        cell = said.read(json.loads(json.dumps(res)))
        for s, text in zip(
            cell.skipped, [t for t in texts(said.said(cell)) if t.startswith("Kept out by")], strict=True
        ):
            assert f"claim {s.claim + 1} of record " in text
            warned += 1
    assert warned  # the samples keep claims out (R10, R11)
