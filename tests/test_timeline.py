"""Runs at a glance (issue #39.5): the facade's `timeline` (one read, on the backend under test) holds the
newest runs and their turns as Runs has them, each turn's records and reads in the order they came; the
view (memory_core/views/timeline.py, pure) makes a bar a turn and a tick a record or read inside it, and
says what a cap leaves out."""

from __future__ import annotations

import json
import re
from pathlib import Path

from memory_core import MemoryService, parse, replay
from memory_core.views.history import weight_through_time
from memory_core.views.timeline import GAP, STATUSES, SYMBOLS, capped, chart, rows, titled

DEMO = Path(__file__).resolve().parent.parent / "sample_data" / "demo.json"


def demo(svc: MemoryService) -> MemoryService:
    replay(parse(DEMO.read_text()), svc)
    return svc


def test_the_timeline_holds_the_runs_and_turns_runs_shows(svc):
    demo(svc)
    t = svc.timeline("acme")
    runs = svc.runs("acme")[::-1]  # newest first, as Runs lists them
    assert [r["id"] for r in t["runs"]] == [r["id"] for r in runs]
    assert t["runs_total"] == len(runs) and t["turns_total"] == sum(len(r["turns"]) for r in runs)
    for shown, run in zip(t["runs"], runs, strict=True):
        assert [(x["id"], x["status"]) for x in shown["turns"]] == [(x["id"], x["status"]) for x in run["turns"]]
        detail = svc.run_detail("acme", run["id"])
        for turn, whole in zip(shown["turns"], detail["turns"], strict=True):
            assert turn["records"] == len(whole["records"])
            request = next((r["excerpt"] for r in whole["records"] if r["number"] == 0), None)
            assert turn["request"] == request
            made = svc.turn_reads(turn["id"])
            assert [(r["records"], r["call"], r["outcome"]) for r in turn["reads"]] == [
                (r["records"], r["call"], r["outcome"]) for r in made
            ]
    assert any(turn["reads"] for run in t["runs"] for turn in run["turns"])  # the demo's turns read


def test_the_timeline_keeps_the_newest_runs_and_turns_and_says_how_many(svc):
    demo(svc)
    t = svc.timeline("acme", runs=3, turns=2)
    newest = [r["id"] for r in svc.runs("acme")[::-1][:3]]
    assert [r["id"] for r in t["runs"]] == newest
    assert sum(len(r["turns"]) for r in t["runs"]) == 2
    said = capped(t)
    assert f"the 3 newest of {len(svc.runs('acme'))} runs" in said and "their 2 newest turns of" in said
    assert capped(svc.timeline("acme")) == ""  # the demo drawn whole: nothing said
    assert svc.timeline("nobody") == {"runs": [], "runs_total": 0, "turns_total": 0}


def turn(turn_id: str, seq: int, status: str, records: int, reads: list[int]) -> dict:
    made = [
        {"records": n, "call": "GraphResolve", "outcome": "ok" if i else "budget_exhausted"}
        for i, n in enumerate(reads)
    ]
    return {"id": turn_id, "seq": seq, "status": status, "records": records, "request": f"Ask {turn_id}", "reads": made}


TIMELINE = {
    "runs": [
        {"id": "r2", "person": "lee", "ended": False, "turns": [turn("b1", 2, "open", 3, [1, 3])]},
        {
            "id": "r1",
            "person": None,
            "ended": True,
            "turns": [turn("a1", 1, "completed", 1, []), turn("a2", 3, "failed", 2, [0])],
        },
    ],
    "runs_total": 2,
    "turns_total": 3,
}


def test_a_bar_a_turn_in_the_order_turns_opened_on_its_run_s_row():
    bars, ticks, lanes = rows(TIMELINE, {"lee": "Lee Okafor"})
    assert lanes == ["r2 · Lee Okafor", "r1 · erased (R30)"]  # newest run on top; an erased account said so
    assert [(b["turn"], b["lane"], b["status"]) for b in bars] == [
        ("b1", "r2 · Lee Okafor", "open"),
        ("a1", "r1 · erased (R30)", "completed"),
        ("a2", "r1 · erased (R30)", "failed"),
    ]
    place = {b["turn"]: (b["x"], b["x2"]) for b in bars}
    assert place == {"a1": (GAP, 1 - GAP), "b1": (1 + GAP, 2 - GAP), "a2": (2 + GAP, 3 - GAP)}  # by seq: a1, b1, a2
    assert {b["status"] for b in bars} <= set(STATUSES)
    assert bars[0]["title"] == "Ask b1 (b1)" and bars[0]["said"] == "Ask b1 (b1) · open · 3 records, 2 reads"
    assert bars[1]["said"] == "Ask a1 (a1) · completed · 1 record, 0 reads"


def test_a_tick_a_record_or_read_inside_its_bar_in_the_order_they_came():
    bars, ticks, _ = rows(TIMELINE, {})
    b1 = [t for t in ticks if t["turn"] == "b1"]
    # reads of b1 came after 1 record and after 3: request, read, record 1, record 2, read
    assert [t["kind"] for t in b1] == ["record", "read", "record", "record", "read"]
    assert [t["what"] for t in b1] == [
        "its request (R24)",
        "GraphResolve: refused, budget_exhausted",
        "record b1#1",
        "record b1#2",
        "GraphResolve: told",
    ]
    xs = [t["x"] for t in b1]
    assert xs == sorted(xs) and 1 + GAP < xs[0] and xs[-1] < 2 - GAP  # inside its bar, left to right
    a2 = [t["kind"] for t in ticks if t["turn"] == "a2"]
    assert a2 == ["read", "record", "record"]  # a read before any record (records counted 0)
    assert len(ticks) == 1 + 5 + 3


def test_a_turn_is_titled_by_its_request_cut_on_one_line():
    assert titled("t1", None) == "t1" and titled("t1", "  ") == "t1"
    assert titled("t1", "Who\nsupplies   us?") == "Who supplies us? (t1)"
    long = titled("t1", "word " * 30)
    assert long.endswith("… (t1)") and len(long) == 60 + len(" (t1)")


def test_the_chart_draws_a_bar_a_turn_each_click_selecting_its_run_and_turn():
    spec = chart(TIMELINE, {})
    layers = {layer["name"]: layer for layer in spec["layer"]}
    assert list(layers) == ["turns", "record", "read", "said"]
    assert [b["turn"] for b in layers["turns"]["data"]["values"]] == ["b1", "a1", "a2"]
    assert len(layers["record"]["data"]["values"]) == 6 and len(layers["read"]["data"]["values"]) == 3
    for name in ("turns", "record", "read"):
        param = layers[name]["params"][0]
        assert param == {"name": name, "select": {"type": "point", "fields": ["run", "turn"], "on": "click"}}
    colour = layers["turns"]["encoding"]["color"]
    assert colour["scale"] == {"domain": list(STATUSES), "range": list(STATUSES.values())} and colour["legend"]
    assert layers["turns"]["encoding"]["y"]["sort"] == ["r2 · lee", "r1 · erased (R30)"]


def test_each_step_of_a_weight_through_time_is_marked_by_its_cause(svc):
    """#39.5 on Fact weights: each moment that changed a weight is marked by the kind of its cause."""
    from pages._history import CAUSES, cause_kind

    demo(svc)
    seen = set()
    for row in svc.facts_table("acme"):
        h = svc.fact_history(row["id"], org="acme")
        for step in weight_through_time(h):
            seen.add(cause_kind(step["cause"]))
    assert {"record (R1)", "correction (R28)"} <= seen <= set(CAUSES)  # the demo's: taught, then disputed
    assert cause_kind("support from web x (t1 in r1); dispute by Dana (R28)") == "correction (R28)"
    assert cause_kind("support from web x (a run erased since)") == "erasure since (R29, R30)"
    assert cause_kind("support from web x withdrawn when t2 replaced t1") == "replacement (R3)"


def test_the_legend_draws_each_mark_inside_a_turn_as_the_chart_draws_it():
    """#39, found by a trial: the legend drew "record" as a triangle, and records are upright ticks in the bars."""
    layers = {layer["name"]: layer for layer in chart(TIMELINE, {})["layer"]}
    assert layers["record"]["mark"]["type"] == "tick" and layers["read"]["mark"]["shape"] == "triangle-down"
    legend = layers["read"]["encoding"]["color"]["legend"]
    shape = legend["encoding"]["symbols"]["shape"]["value"]["expr"]  # a Vega expression: the shape of each entry
    assert "symbolType" not in legend and shape == f"{json.dumps(SYMBOLS)}[datum.value]"
    assert SYMBOLS["read"] == layers["read"]["mark"]["shape"]
    x, y = re.match(r"M(-[\d.]+),(-[\d.]+)H", SYMBOLS["record"]).groups()  # an upright bar in Vega's [-1, 1] box
    width, height = 2 * abs(float(x)), 2 * abs(float(y))
    assert width < 0.5 and height >= 2, (width, height)  # taller than wide, as a tick is


def test_the_rows_are_named_in_words_read_at_a_glance():
    """#39, found by a trial: the runs' names beside the rows were small and grey (Streamlit's theme)."""
    config = chart(TIMELINE, {})["config"]
    for part in ("axis", "legend"):
        assert config[part]["labelFontSize"] >= 12 and config[part]["labelColor"] == "currentColor"  # the text's own


def test_a_bar_pointed_at_is_outlined_and_said_under_the_rows_without_a_box_over_the_others():
    """#39, found by a trial: pointing at a bar opened a tooltip's box over the bars beside it, which showed
    through it near white. The bar pointed at is outlined; its words are written on a line under the rows."""
    turns, *_, said = chart(TIMELINE, {})["layer"]
    assert turns["mark"]["tooltip"] is None and "tooltip" not in turns["encoding"]  # no box over the others
    assert "opacity" not in turns["encoding"] and "opacity" not in turns["mark"]  # none fades
    [hover] = [p for p in turns["params"] if p["name"] == "hover"]
    assert hover["select"] == {"type": "point", "fields": ["turn"], "on": "pointerover", "clear": "pointerout"}
    assert turns["encoding"]["stroke"]["condition"]["param"] == "hover"
    assert turns["encoding"]["description"] == {"field": "said"}  # what a screen reader says of a bar
    assert said["mark"]["type"] == "text" and said["mark"]["y"] == {"expr": "height + 6"}  # under the rows
    assert said["encoding"]["text"] == {"condition": {"param": "hover", "empty": False, "field": "said"}, "value": ""}
    assert [b["said"] for b in said["data"]["values"]] == [b["said"] for b in turns["data"]["values"]]
