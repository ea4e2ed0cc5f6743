"""The Graphs page's drawing (memory_core/views/viz.py, layout.py, focus.py): a focus drawn whole, readable,
stable, linked, walked (#39); and the store's read of a focus's neighbourhood, on every backend."""

from __future__ import annotations

import json
import re
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

from memory_core import MemoryService, load, make_engine, replay
from memory_core.views import communities, focus, layout, viz
from memory_core.views.compare import compare

ROOT = Path(__file__).resolve().parent.parent

#: No test database: the same on every backend.
pytestmark = pytest.mark.backend_free

EVIL = '<img src=x onerror=alert(1)>"</script><script>alert(2)</script>'


def fact(subject: str, relation: str, obj: str, weight: float = 0.8, *, status: str = "active", id: int = 0) -> dict:
    s_kind, s_name = subject.split(":")
    o_kind, o_name = obj.split(":")
    return {
        "id": id,
        "subject": {"name": s_name, "kind": s_kind},
        "relation": relation,
        "object": {"name": o_name, "kind": o_kind},
        "weight": weight,
        "status": status,
        "sources": 1,
    }


def star(n: int) -> dict:
    """One hub with n spokes, plus a ring among the spokes: degrees differ, ids run 1..2n."""
    facts = [fact("person:Hub", "knows", f"person:P{i:03}", 0.5 + i / (4 * n), id=i + 1) for i in range(n)]
    facts += [fact(f"person:P{i:03}", "likes", f"idea:I{i % 7}", 0.4, id=n + i + 1) for i in range(n)]
    return {"facts": facts}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('viz') / 'demo.db'}"
    svc = MemoryService(make_engine(url))
    replay(load(str(ROOT / "sample_data" / "demo.json")), svc)
    return svc


def crowded(p: viz.Plan) -> tuple[int, int]:
    """The drawing's measures as layout.py takes them: node boxes that overlap, relations that touch anything."""
    pos = layout.arrange(p.focus, p.nodes, p.edges, boxes := {n["id"]: focus.box(n) for n in p.nodes})
    ids = [n["id"] for n in p.nodes]
    xy = np.array([pos[i] for i in ids])
    hw, hh, down = (np.array([boxes[i][k] for i in ids]) for k in range(3))
    cy = xy[:, 1] + down
    hit = (np.abs(xy[:, None, 0] - xy[None, :, 0]) < hw[:, None] + hw[None, :]) & (
        np.abs(cy[:, None] - cy[None, :]) < hh[:, None] + hh[None, :]
    )
    np.fill_diagonal(hit, False)
    at = {n: i for i, n in enumerate(ids)}
    named = [e for e in p.edges if e["label"]]
    ends = np.array([(at[e["from"]], at[e["to"]]) for e in named], dtype=int).reshape(-1, 2)
    every = np.array([(at[e["from"]], at[e["to"]]) for e in p.edges], dtype=int).reshape(-1, 2)
    sizes = np.array([layout._label_size(e["label"]) for e in named]).reshape(-1, 2)
    target = np.full(len(every), 12.0)
    labels = layout._crowded(xy, (hw, hh, down), ends, sizes, (every, target))
    return int(hit.sum() // 2), len(labels)


def test_a_focus_is_drawn_in_the_middle_marked_and_at_most_60_nodes():
    p = viz.plan(star(120), "person:Hub")
    centre = next(n for n in p.nodes if n["id"] == "person:Hub")
    others = [n for n in p.nodes if n["id"] != "person:Hub"]
    assert (
        centre["ring"] == 0 and centre["color"] == viz.FOCUS_COLOR and centre["size"] > max(n["size"] for n in others)
    )
    assert all(n["color"] != viz.FOCUS_COLOR for n in others)
    assert len(p.nodes) <= viz.FIRST + viz.MORE <= viz.MOST
    more = [n for n in p.nodes if n["kind"] == "more"]
    assert more and more[0]["label"].startswith("+") and "knows" in more[0]["label"]
    assert (
        p.hidden > 0
        and p.spare["nodes"]
        and all(e["from"] in p.spare["nodes"] or e["to"] in p.spare["nodes"] for e in p.spare["edges"])
    )
    pos = layout.arrange(p.focus, p.nodes, p.edges, {n["id"]: focus.box(n) for n in p.nodes})
    assert pos["person:Hub"] == (0.0, 0.0)


def test_no_focus_opens_on_the_most_connected_and_an_unknown_one_too():
    assert viz.plan(star(5)).focus == "person:Hub" == viz.plan(star(5), "person:Nobody").focus
    assert viz.most_connected(star(5)["facts"]) == "person:Hub"


def test_every_name_whole_every_relation_written_and_nothing_overlaps(demo):
    long = "Warehouse Tech Week 2026 in the Jaarbeurs Utrecht, hall 7"
    graph = {"facts": [*star(12)["facts"], fact(f"event:{long}", "attended_by", "person:Hub", id=99)]}
    p = viz.plan(graph, "person:Hub")
    node = next(n for n in p.nodes if n["name"] == long)
    assert node["label"].replace("\n", " ") == long and all(len(x) <= viz.WRAP for x in node["label"].split("\n"))
    assert all(e["label"] for e in p.edges if not e["to"].startswith(("values:", "more:")))
    assert crowded(p) == (0, 0)
    for graph_, owner in (("world", "acme"), ("user", "dana")):
        data = demo.focus(graph_, owner, None, depth=1)
        drawn = viz.plan(data, viz.node_id(data["focus"]))
        assert drawn.nodes and len(drawn.nodes) <= viz.MOST and crowded(drawn) == (0, 0), graph_
        assert all(n["label"] and "…" not in n["label"] for n in drawn.nodes)


def test_values_are_drawn_beside_their_subject_not_as_entities():
    graph = star(3)
    graph["facts"] += [
        {**fact("person:Hub", "founded_in", "idea:x", id=50), "object": {"value": "2014"}},
        {**fact("person:Hub", "revenue", "idea:x", id=51), "object": {"value": "EUR 80 million"}},
    ]
    p = viz.plan(graph, "person:Hub")
    box = next(n for n in p.nodes if n["id"] == "values:person:Hub")
    text = box["label"].replace("\n", " ")  # wrapped as names are
    assert "founded_in: 2014" in text and "revenue: EUR 80 million" in text and box["ring"] < 0
    assert not any(n["id"].startswith("value:") for n in p.nodes) and "value" not in {x["kind"] for x in viz.legend(p)}
    assert {e["fact"] for e in p.edges if e["to"] == box["id"]} == {50, 51}
    # #39's trial: each value's weight on hover (its tie shows one fact's only), a disputed one said so
    graph["facts"][-1]["status"] = "disputed"
    box = next(n for n in viz.plan(graph, "person:Hub").nodes if n["id"] == "values:person:Hub")
    assert "revenue: EUR 80 million (disputed)" in box["label"].replace("\n", " ")
    assert sorted(box["title"].split("\n")) == [
        "Hub —founded_in→ 2014 · weight 0.800",
        "Hub —revenue→ EUR 80 million · weight 0.800 (disputed)",
    ]
    graph["facts"][-1]["status"] = "active"
    graph["facts"].append({**fact("person:P001", "born", "idea:x", id=52), "object": {"value": "1990"}})
    p = viz.plan(graph, "person:Hub")
    boxes = {n["id"]: focus.box(n) for n in p.nodes}
    pos = layout.arrange(p.focus, p.nodes, p.edges, boxes)
    for subject in ("person:Hub", "person:P001"):  # each values box just below its subject, the focus's too (#39)
        (x, y), (bx, by), (_, h, down) = pos[subject], pos[f"values:{subject}"], boxes[subject]
        assert bx == x and y + down + h < by - boxes[f"values:{subject}"][1] < y + down + h + 3 * layout.GAP
    assert crowded(p) == (0, 0)


def test_positions_are_stable_and_a_walk_keeps_the_trail_out_of_the_layout():
    p = viz.plan(star(30), "person:P003")
    boxes = {n["id"]: focus.box(n) for n in p.nodes}
    assert layout.arrange(p.focus, p.nodes, p.edges, boxes) == layout.arrange(p.focus, p.nodes, p.edges, boxes)
    assert viz.plan(star(30), "person:P003", viz.Filters(depth=2)).nodes[0]["id"] == "person:P003"


def test_edges_carry_fact_ids_and_the_click_opens_the_weight(demo):
    data = demo.graph("world", "acme", ids=True)
    assert all(isinstance(f["id"], int) for f in data["facts"])
    assert "id" not in demo.graph("world", "acme")["facts"][0]  # the state format's facts are unchanged
    p = viz.plan(data, "organization:Acme Robotics")
    page = viz.to_html(p, graph="user")
    edges = json.loads(re.search(r"edges = new vis\.DataSet\((\[.*?\])\);", page).group(1))  # type: ignore[union-attr]
    facts = {e["fact"] for e in p.edges} - {None}  # a "+N more" box's line is no fact
    assert {e.get("fact") for e in edges} - {None} == facts <= {f["id"] for f in data["facts"]}
    assert (
        'network.on("click"' in page
        and '"fact-weights?"' in page
        and 'var GRAPH = "user", FOCUS = ' in page
        and 'network.on("doubleClick"' in page
    )
    assert 'var GRAPH = "world", FOCUS' in viz.to_html(p, graph="</script><b>")  # only a graph's name gets in


def test_memory_text_is_escaped_in_titles_and_labels():
    graph = {"facts": [fact("person:" + EVIL.replace(":", ""), EVIL, "idea:Tea", id=1)]}
    page = viz.to_html(viz.plan(graph, "idea:Tea"))
    body = page.split("<body>", 1)[1]
    assert "<img src=x" not in body and "alert(2)</script>" not in body
    nodes = json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page).group(1))  # type: ignore[union-attr]
    assert any("<img src=x" in n["title"] for n in nodes)  # kept as text: vis-network shows titles as text


@pytest.mark.parametrize(
    ("flt", "reason"),
    [
        (viz.Filters(statuses=set()), "no status is chosen, so the status filter excludes all"),
        (viz.Filters(statuses={"retracted"}), "the status filter (retracted) excludes all"),
        (viz.Filters(kinds={"place"}), "there is no fact of kinds place"),
        (viz.Filters(relations={"owns"}), "there is no fact with relations owns"),
        (viz.Filters(min_weight=0.95), "the minimum weight 0.95 leaves no fact"),
        (
            viz.Filters(kinds={"idea"}, min_weight=0.9),
            "the minimum weight 0.90 leaves no fact (of the 2 facts the filters before it keep)",
        ),
    ],
)
def test_an_empty_drawing_names_the_filter_that_emptied_it(flt, reason):
    graph = {
        "facts": [
            fact("person:Ann", "knows", "person:Bo", 0.9),
            fact("person:Ann", "likes", "idea:Tea", 0.6),
            fact("person:Bo", "likes", "idea:Tea", 0.5),
            fact("person:Bo", "knows", "person:Cy", 0.3, status="disputed"),
        ]
    }
    p = viz.plan(graph, None, flt)
    assert not p.nodes and p.reason == reason


def test_an_empty_graph_says_so_and_a_drawn_one_has_no_reason():
    assert viz.plan({"facts": []}).reason == "this graph holds no fact yet"
    assert viz.plan(star(5)).reason == ""


def test_graphml_keeps_every_name_and_relation():
    text = viz.to_graphml(viz.plan(star(80)))
    assert "P079" in text and "knows" in text and "P000" not in text  # the heaviest around the focus


def test_a_comparison_colours_added_and_moved_facts_and_draws_gone_ones_dashed():
    """Issue #17, point 4: what changed since an earlier moment, on the drawing of the later one."""
    before = [
        fact("person:Ann", "knows", "person:Bo", 0.6, id=1),
        fact("person:Ann", "likes", "idea:Tea", 0.5, id=2),
        fact("person:Ann", "visits", "place:Rome", 0.4, id=3),
    ]
    after = [
        fact("person:Ann", "knows", "person:Bo", 0.3, id=1),  # lighter
        fact("person:Ann", "likes", "idea:Tea", 0.5, id=2),  # unchanged
        fact("person:Ann", "visits", "place:Oslo", 0.7, id=9),  # added
    ]  # Ann -visits-> Rome gone
    cmp = compare(before, after, since=4)
    assert cmp.added == {viz.fact_key(after[2])} and [f["id"] for f in cmp.gone] == [3]
    assert cmp.weights == {viz.fact_key(before[0]): 0.6}
    p = viz.plan({"facts": after}, compare=cmp)
    edges = {e["title"].split("\n")[0]: e for e in p.edges}
    assert p.gone == 1 and len(p.edges) == 4 and {n["id"] for n in p.nodes} >= {"person:Ann", "place:Rome"}
    assert (
        edges["Ann —visits→ Oslo"]["change"] == "added"
        and "added since moment 4" in edges["Ann —visits→ Oslo"]["title"]
    )
    moved = edges["Ann —knows→ Bo"]
    assert moved["change"] == "lighter" and "weight 0.600 \u2193 0.300 since moment 4" in moved["title"]
    gone = edges["Ann —visits→ Rome"]
    assert gone["change"] == "gone" and gone["dashes"] and gone["fact"] is None and gone["weight"] == 0.4
    assert edges["Ann —likes→ Tea"]["change"] == ""
    drawn = json.loads(re.search(r"edges = new vis\.DataSet\((\[.*?\])\);\n", viz.to_html(p)).group(1))
    colours = {e["title"].split("\n")[0]: e["color"] for e in drawn}
    assert colours["Ann —visits→ Oslo"] == viz.ADDED_COLOR and colours["Ann —knows→ Bo"] == viz.MOVED_COLOR
    assert colours["Ann —visits→ Rome"] == viz.GONE_COLOR and colours["Ann —likes→ Tea"] == "#555555"
    # Gone facts obey the filters; only those around the focus are drawn.
    assert viz.plan({"facts": after}, None, viz.Filters(relations={"knows"}), compare=cmp).gone == 0
    assert viz.plan({"facts": after}, "person:Bo", viz.Filters(relations={"knows"}), compare=cmp).gone == 0
    # No comparison: the drawing is as before, no change said.
    plain = viz.plan({"facts": after})
    assert plain.gone == 0 and all(e["change"] == "" for e in plain.edges)


def test_communities_are_drawn_one_node_each_and_a_click_opens_one():
    """#39 item 4: each community one node sized by its entities, named, joined to the two it shares most facts with;
    its node carries its most connected entity, which a click focuses (focus.py)."""
    community = namedtuple("community", "id label size central members")
    overview = namedtuple("overview", "communities links entities facts")
    ov = overview(
        tuple(community(i, f"C{i}, D{i} +{9 - i}", 11 - i, f"C{i}", (f"C{i}", f"D{i}")) for i in range(6)),
        ((0, 1, 9), (0, 2, 4), (1, 2, 7), (3, 4, 1), (2, 5, 2), (0, 5, 1)),
        51,
        80,
    )
    p = communities.drawn(ov)
    assert [n["central"] for n in p.nodes] == [f"C{i}" for i in range(6)] and p.focus == "community:0"
    assert [n["size"] for n in p.nodes] == sorted((n["size"] for n in p.nodes), reverse=True)
    assert all(e["label"].endswith(("fact", "facts")) for e in p.edges) and len(p.edges) <= len(ov.links)
    assert crowded(p) == (0, 0) and '"central":"C1"' in viz.to_html(p) and "node.central" in viz.to_html(p)
    assert communities.drawn(overview((), (), 0, 0)).reason
    # #39's trial: colours repeated from the eighth community on, and the middle one's name was dark on mid-blue
    many = communities.drawn(overview(tuple(community(i, f"C{i}", 30 - i, f"C{i}", ()) for i in range(20)), (), 0, 0))
    assert len({n["color"] for n in many.nodes}) == 20
    r, g, b = (int(many.nodes[0]["color"][i : i + 2], 16) for i in (1, 3, 5))
    assert 0.299 * r + 0.587 * g + 0.114 * b > 160  # light: its name, inside it, reads dark on it


def test_a_fact_between_two_neighbours_waits_for_a_click_and_the_neighbours_stand_in_two_columns():
    """#39: a focus opens with the facts that join each entity to the one it hangs from (a fact across the drawing
    would cross the middle and crowd it, so the fit would be too small to read); a click on either end opens it.
    The neighbours stand in a column each side of the focus, so the drawing fills the wide frame."""
    graph = {"facts": [fact("person:Hub", "knows", f"person:P{i}", id=i + 1) for i in range(6)]}
    graph["facts"].append(fact("person:P0", "likes", "person:P1", id=99))
    p = viz.plan(graph, "person:Hub")
    assert {(e["from"], e["to"]) for e in p.edges} == {("person:Hub", f"person:P{i}") for i in range(6)}
    assert [e["fact"] for e in p.spare["edges"]] == [99]
    pos = layout.arrange(p.focus, p.nodes, p.edges, {n["id"]: focus.box(n) for n in p.nodes})
    assert sorted({x for x, _ in pos.values()}) == [-pos["person:P0"][0], 0.0, pos["person:P0"][0]]


def test_an_entity_a_click_opens_counts_its_facts_read_as_when_it_is_drawn():
    """#39: an entity's tooltip says how many of its facts were read, its values (amounts, dates) among them, the
    same whether it is drawn at first or opened by a click (it said only its links to entities once opened)."""
    graph = {"facts": [fact("person:Hub", "knows", f"person:P{i}", id=i + 1) for i in range(3)]}
    graph["facts"] += [fact("person:P0", "likes", "idea:I0", id=10), fact("idea:I0", "since", "idea:x", id=11)]
    graph["facts"][-1]["object"] = {"value": "2014"}  # a value, not an entity
    spare = viz.plan(graph, "person:Hub", viz.Filters(depth=1)).spare["nodes"]["idea:I0"]
    drawn = next(n for n in viz.plan(graph, "person:Hub", viz.Filters(depth=2)).nodes if n["id"] == "idea:I0")
    assert "2 facts read" in drawn["title"] and spare["title"].split("\n")[1] == drawn["title"].split("\n")[1]


def test_an_entity_s_tooltip_says_whether_a_click_opens_anything():
    """#39: a click opens an entity's neighbours not drawn; where there are none its tooltip says so (it offered to
    open them on every entity); the focus says neither, and every other entity offers the double-click."""
    graph = {"facts": [fact("person:Hub", "knows", f"person:P{i}", id=i + 1) for i in range(3)]}
    graph["facts"].append(fact("person:P0", "likes", "idea:I0", id=10))
    p = viz.plan(graph, "person:Hub", viz.Filters(depth=1))
    hint = {n["id"]: n["title"].split("\n")[2:] for n in p.nodes} | {
        n: e["title"].split("\n")[2:] for n, e in p.spare["nodes"].items()
    }
    assert hint["person:Hub"] == []
    assert hint["person:P0"] == ["click: open its neighbours · double-click: focus on it"]
    assert hint["person:P1"] == hint["idea:I0"] == ["nothing more to open here · double-click: focus on it"]


@pytest.mark.parametrize(
    "text, lines",
    [
        ("expected_commercial: 2028", ["expected_commercial:", "2028"]),  # was "expected_commercia" / "l: 2028"
        ("supplies_component: LFP battery packs", ["supplies_component:", "LFP battery packs"]),  # was ": LFP ..."
        ("Robots-as-a-Service pricing", ["Robots-as-a-Service", "pricing"]),
        ("Warehouse Tech Week 2026", ["Warehouse Tech", "Week 2026"]),
        ("x" * 40, ["x" * 36, "x" * 4]),  # past twice a line: split, never cut
    ],
)
def test_names_and_values_wrap_between_words(text, lines):
    """#39's trial: a word a little longer than a line was split mid-word ("Robots-as-a-Servic" / "e pricing")."""
    assert viz.wrapped(text).split("\n") == lines


def test_no_kind_is_coloured_like_the_focus():
    """#39's trial: preferences were yellow (#edc948) beside the focus's yellow (#ffd400) on the User graph."""
    rgb = lambda c: [int(c[i : i + 2], 16) for i in (1, 3, 5)]
    for kind, color in (viz.KIND_COLORS | {"other": viz.OTHER_COLOR}).items():
        assert sum(abs(a - b) for a, b in zip(rgb(color), rgb(viz.FOCUS_COLOR), strict=True)) > 120, kind  # orange 126
