"""The notebook's cells as people read them (memory_core/views/cells.py): the search, a read's
arguments and its answer. Pure functions of the cells: no database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core.views.cells import answer_rows, matching, read_args, summary

pytestmark = pytest.mark.backend_free
ROOT = Path(__file__).resolve().parent.parent
DEMO = json.loads((ROOT / "sample_data" / "demo.json").read_text())


def test_hash_and_a_number_find_that_cell_and_hash_finds_no_other():
    events = DEMO["events"]
    assert len(events) > 130
    assert matching(events, events, "#12") == [12]
    assert matching(events, events, "#129") == [129]
    assert 12 in matching(events, events, "12")  # a number alone: that cell, and the cells that say it
    assert matching(events, events, "#12 #13") == []  # every word must hold: no cell is both


def test_words_find_the_cells_that_hold_them_all():
    events = DEMO["events"]
    found = matching(events, events, "cp-1 end_turn")
    assert found and all(events[i]["do"] == "end_turn" and events[i]["turn"] == "cp-1" for i in found)


def test_a_reads_arguments_are_said_in_words_not_json():
    fact = {
        "subject": {"name": "Kestrel Metals", "kind": "organization"},
        "relation": "headquartered_in",
        "object": {"name": "Sheffield", "kind": "place"},
    }
    assert read_args({"name": "Kestrel Metals"}) == "Kestrel Metals"
    assert read_args({"entity": {"name": "Kestrel Metals", "kind": "organization"}}) == "Kestrel Metals (organization)"
    assert read_args({"fact": fact}) == "Kestrel Metals —headquartered_in→ Sheffield"
    line = summary({"do": "read", "turn": "t1", "call": "GraphSource", "args": {"fact": fact}})
    assert line == "GraphSource in t1: Kestrel Metals —headquartered_in→ Sheffield" and "{" not in line


def test_a_reads_answer_is_rows_with_facts_named_and_numbers_to_three_places():
    rows = answer_rows(
        [
            {"key": "tool:company-registry", "contribution": 2.1972245773362196, "record": "t1#1"},
            {
                "subject": {"name": "Ann", "kind": "person"},
                "relation": "likes",
                "object": {"value": "tea"},
                "weight": 0.9622641509433961,
                "aliases": ["A.", "Annie"],
            },
        ]
    )
    assert rows[0] == {"key": "tool:company-registry", "contribution": 2.197, "record": "t1#1"}
    assert rows[1] == {"fact": "Ann —likes→ tea", "weight": 0.962, "aliases": "A., Annie"}
    assert answer_rows([]) == [] and answer_rows(None) == []
