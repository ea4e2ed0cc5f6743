"""The Graphs page's drawing (memory_core/views/viz.py, layout.py): still, stable, readable, linked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from memory_core import MemoryService, load, make_engine, replay
from memory_core.views import layout, viz
from memory_core.views.compare import compare

#: No test database: the same on every backend.
pytestmark = pytest.mark.backend_free

ROOT = Path(__file__).resolve().parent.parent
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


def geometry(p: viz.Plan, drawing: layout.Layout) -> dict:
    """The drawing's measures (issue #25), as the browser tests take them from vis-network: entities whose
    dots overlap (centres closer than the sum of their radii), the spread (95th percentile of the
    distance to the centre over its median), names whose boxes overlap (estimated as layout.py does)."""
    ids = [n["id"] for n in p.nodes]
    xy = np.array([drawing.positions[i] for i in ids])
    r = np.array([n["size"] for n in p.nodes])
    d = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    np.fill_diagonal(d, np.inf)
    dist = np.hypot(*(xy - xy.mean(axis=0)).T)
    chars = np.array([len(n["label"]) for n in p.nodes], dtype=float)
    half_w, half_h, down = layout._boxes(r, chars, drawing.font)
    cy = xy[:, 1] + down
    boxes = (np.abs(xy[:, None, 0] - xy[None, :, 0]) < half_w[:, None] + half_w[None, :]) & (
        np.abs(cy[:, None] - cy[None, :]) < half_h[:, None] + half_h[None, :]
    )
    np.fill_diagonal(boxes, False)
    return {
        "overlaps": int((d < r[:, None] + r[None, :]).sum() // 2),
        "spread": float(np.percentile(dist, 95) / np.median(dist)),
        "boxes": int(boxes.sum() // 2),
    }


def test_positions_are_stable_and_ignore_input_order():
    p = viz.plan(star(60))
    first = viz.layout_of(p)
    assert set(first.positions) == {n["id"] for n in p.nodes}
    assert viz.layout_of(viz.plan(star(60))) == first  # a rerun: the same picture
    nodes, edges, sizes, labels, relation = p.key_for_layout()
    assert (
        layout.arrange(reversed(nodes), list(reversed(edges)), sizes, labels, relation) == first
    )  # order does not matter
    assert len(set(first.positions.values())) == len(first.positions)  # no two entities on one spot


def test_positions_past_the_spring_limit_need_no_scipy():
    nodes = [f"n{i}" for i in range(layout.SPRING_LIMIT + 80)]
    edges = [(nodes[i], nodes[(i * 7 + 1) % len(nodes)]) for i in range(len(nodes))]
    pos = layout.arrange(nodes, edges).positions
    assert set(pos) == set(nodes) and pos == layout.arrange(nodes, edges).positions


def components(n: int) -> dict:
    """A cluster of n people and 14 city -> country pairs: the shape of run-company-profile's Flow graph."""
    facts = [fact(f"person:P{i}", "knows", f"person:P{(i * 3 + 1) % n}", 0.5 + i / (4 * n), id=i + 1) for i in range(n)]
    facts += [fact(f"place:City{i}", "in", f"place:Land{i}", 0.3, id=100 + i) for i in range(14)]
    return {"facts": facts}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A generated memory's World graph at the default cap (400 entities, about 4,000 facts)."""
    from memory_core.generate import generate

    svc = MemoryService(make_engine(f"sqlite:///{tmp_path_factory.mktemp('big') / 'big.db'}"))
    generate(svc.engine, supports=20_000, seed=3)
    return svc.graph_drawing("world", "bench", limit=5000)


def test_components_are_packed_apart_and_nothing_overlaps(demo, generated):
    """Issue #25: each component laid out on its own and packed (no ring of small ones flung around a
    dense middle), no dots overlapping, no names' boxes overlapping, the spread at most 2; the same
    input, the same drawing. On the demo's World and Flow graphs, a generated memory at the default cap
    and a graph of many small components."""
    runs = [r["id"] for r in demo.runs("acme")]
    graphs = [demo.graph_drawing("world", "acme", limit=5000), generated, components(31)]
    graphs += [demo.graph_drawing("flow", run, limit=5000) for run in runs]
    for data in graphs:
        p = viz.plan(data)
        if not p.nodes:
            continue  # a run whose Flow graph holds no fact
        drawing = viz.layout_of(p)
        measured = geometry(p, drawing)
        assert measured["overlaps"] == 0 and measured["boxes"] == 0, measured
        assert measured["spread"] <= 2.0, measured
        assert viz.layout_of(viz.plan(data)) == drawing
    assert len(viz.plan(generated).nodes) == viz.DEFAULT_CAP


def test_names_every_entity_up_to_60_and_the_60_heaviest_beyond():
    small = viz.plan(star(20))
    assert len(small.nodes) <= viz.LABEL_ALL and all(n["label"] == n["name"] for n in small.nodes)
    big = viz.plan(star(80))
    named = [n for n in big.nodes if n["label"]]
    assert len(big.nodes) > viz.LABEL_ALL and len(named) == viz.LABEL_TOP
    assert "person:Hub" in {n["id"] for n in named}  # the heaviest
    assert all(n["name"] in n["title"] for n in big.nodes)  # every name on hover
    focus = viz.plan(star(80), viz.Filters(focus="person:P079", depth=3))
    named_ids = {n["id"] for n in focus.nodes if n["label"]}
    assert "person:P079" in named_ids  # the focus is named, however light


def test_expanding_an_entity_adds_its_neighbours_and_collapsing_removes_them():
    """Explore by expanding (issue #25): from a focus, an expanded entity's neighbours are drawn too; an
    entity not drawn cannot be expanded (the facts given are the graph the reader may see, R20)."""
    g = star(10)
    start = viz.plan(g, viz.Filters(focus="idea:I3"))
    drawn = {n["id"] for n in start.nodes}
    assert "person:Hub" not in drawn and "person:P003" in drawn
    opened = viz.plan(g, viz.Filters(focus="idea:I3", expanded=("person:P003",)))
    assert {n["id"] for n in opened.nodes} >= drawn | {"person:Hub"}
    assert "person:Hub" in {n["id"] for n in opened.nodes if n["label"]} or len(opened.nodes) <= viz.LABEL_ALL
    assert {n["id"] for n in viz.plan(g, viz.Filters(focus="idea:I3", expanded=("person:P009",))).nodes} == drawn
    assert [n["id"] for n in opened.nodes if n["open"]] == ["person:P003"]  # drawn with a thick border
    page = viz.to_html(opened)
    assert '"borderWidth":4' in page and "double-click to close" in page


def test_drawing_is_still_physics_off_and_positions_given(demo):
    for cap in (20, 400):  # small and large drawings alike
        p = viz.plan(demo.graph("world", "acme", ids=True), viz.Filters(cap=cap))
        page = viz.to_html(p)
        options = json.loads(re.search(r"var options = (\{.*\});", page).group(1))  # type: ignore[union-attr]
        assert options["physics"] == {"enabled": False} and options["nodes"]["physics"] is False
        nodes = json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page).group(1))  # type: ignore[union-attr]
        assert nodes and all("physics" not in n and "x" in n and "y" in n for n in nodes)
        assert 'network.on("stabilizationProgress"' not in page and 'id="loadingBar"' not in page


def test_relations_on_edges_while_the_drawing_is_small():
    assert all(e["label"] == e["relation"] for e in viz.plan(star(10)).edges)  # 20 facts
    assert all(e["label"] == "" and e["relation"] in e["title"] for e in viz.plan(star(30)).edges)  # 60: on hover
    small_focus = viz.plan(star(100), viz.Filters(focus="idea:I3"))
    assert small_focus.edges and all(e["label"] == e["relation"] for e in small_focus.edges)
    big_focus = viz.plan(star(200), viz.Filters(focus="person:Hub"))
    assert len(big_focus.edges) > viz.EDGE_LABELS and all(e["label"] == "" for e in big_focus.edges)


def test_edges_carry_fact_ids_and_the_click_opens_the_weight(demo):
    data = demo.graph("world", "acme", ids=True)
    assert all(isinstance(f["id"], int) for f in data["facts"])
    assert "id" not in demo.graph("world", "acme")["facts"][0]  # the state format's facts are unchanged
    p = viz.plan(data)
    page = viz.to_html(p, graph="user")
    edges = json.loads(re.search(r"edges = new vis\.DataSet\((\[.*?\])\);", page).group(1))  # type: ignore[union-attr]
    assert {e["fact"] for e in edges} == {e["fact"] for e in p.edges} <= {f["id"] for f in data["facts"]}
    assert (
        'network.on("click"' in page
        and '"fact-weights?"' in page
        and 'var GRAPH = "user", FONT = ' in page
        and 'network.on("doubleClick"' in page
    )
    assert 'var GRAPH = "world", FONT' in viz.to_html(p, graph="</script><b>")  # only a graph's name gets in


def test_memory_text_is_escaped_in_titles_and_labels():
    graph = {"facts": [fact("person:" + EVIL.replace(":", ""), EVIL, "idea:Tea", id=1)]}
    page = viz.to_html(viz.plan(graph, viz.Filters(focus="idea:Tea")))
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
        (viz.Filters(focus="place:Nowhere"), "the focus entity Nowhere (place) has no facts within depth 1"),
        (viz.Filters(cap=1), "the entity cap 1 is below the two entities a fact needs"),
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
    p = viz.plan(graph, flt)
    assert not p.nodes and p.reason == reason


def test_an_empty_graph_says_so_and_a_drawn_one_has_no_reason():
    assert viz.plan({"facts": []}).reason == "this graph holds no fact yet"
    assert viz.plan(star(5)).reason == ""


def test_graphml_keeps_every_name_and_relation():
    text = viz.to_graphml(viz.plan(star(80)))
    assert "P079" in text and "knows" in text and "likes" in text


def test_the_drawing_reads_counts_not_supports_and_draws_as_the_state_does(demo):
    """graph_drawing (issue #16, B8): the same facts, ends, weights and entities as the state format's
    graph, each fact's supports and disputes counted instead of loaded, in the same order; the same
    plan. With a limit, the heaviest (ties by id) and the graph's total."""
    people = [p["id"] for p in demo.people()]
    runs = [r["id"] for r in demo.runs("acme")]
    shown = ("id", "subject", "relation", "object", "status", "weight", "sources")
    for graph, owner in [("world", "acme"), *(("user", p) for p in people), *(("flow", r) for r in runs)]:
        drawn = demo.graph_drawing(graph, owner, limit=5000)
        state = demo.graph(graph, owner, limit=5000, ids=True)
        assert drawn["total"] == state["total"] == len(state["facts"])
        assert drawn["entities"] == [{"name": e["name"], "kind": e["kind"]} for e in state["entities"]]
        assert drawn["facts"] == [
            {**{k: f[k] for k in shown}, "supports": len(f["supports"]), "disputes": len(f["disputes"])}
            for f in state["facts"]
        ]
        assert viz.plan(drawn).edges == viz.plan(state).edges
    world = demo.graph_drawing("world", "acme", limit=5000)["facts"]
    assert any(f["disputes"] for f in world) and any(f["supports"] > 1 for f in world)
    heaviest = demo.graph_drawing("world", "acme", limit=7)
    assert heaviest["total"] == len(world) and len(heaviest["facts"]) == 7
    ranked = sorted(world, key=lambda f: (-f["weight"], f["id"]))[:7]
    assert sorted(f["id"] for f in heaviest["facts"]) == sorted(f["id"] for f in ranked)


def test_a_comparison_colours_added_and_moved_facts_and_draws_gone_ones_dashed():
    """Issue #17, point 4: what changed since an earlier moment, on the drawing of the later one."""
    before = [
        fact("person:Ann", "knows", "person:Bo", 0.6, id=1),
        fact("person:Ann", "likes", "idea:Tea", 0.5, id=2),
        fact("person:Cy", "visits", "place:Rome", 0.4, id=3),
    ]
    after = [
        fact("person:Ann", "knows", "person:Bo", 0.3, id=1),  # lighter
        fact("person:Ann", "likes", "idea:Tea", 0.5, id=2),  # unchanged
        fact("person:Ann", "visits", "place:Oslo", 0.7, id=9),  # added
    ]  # Cy -visits-> Rome gone
    cmp = compare(before, after, since=4)
    assert cmp.added == {viz.fact_key(after[2])} and [f["id"] for f in cmp.gone] == [3]
    assert cmp.weights == {viz.fact_key(before[0]): 0.6}
    p = viz.plan({"facts": after}, compare=cmp)
    edges = {e["title"].split("\n")[0]: e for e in p.edges}
    assert p.gone == 1 and len(p.edges) == 4 and {n["id"] for n in p.nodes} >= {"person:Cy", "place:Rome"}
    assert (
        edges["Ann —visits→ Oslo"]["change"] == "added"
        and "added since moment 4" in edges["Ann —visits→ Oslo"]["title"]
    )
    moved = edges["Ann —knows→ Bo"]
    assert moved["change"] == "lighter" and "weight 0.600 \u2193 0.300 since moment 4" in moved["title"]
    gone = edges["Cy —visits→ Rome"]
    assert gone["change"] == "gone" and gone["dashes"] and gone["fact"] is None and gone["weight"] == 0.4
    assert edges["Ann —likes→ Tea"]["change"] == "" and p.matching_facts == 3 and not p.left_out_facts
    drawn = json.loads(re.search(r"edges = new vis\.DataSet\((\[.*?\])\);\n", viz.to_html(p)).group(1))
    colours = {e["title"].split("\n")[0]: e["color"] for e in drawn}
    assert colours["Ann —visits→ Oslo"] == viz.ADDED_COLOR and colours["Ann —knows→ Bo"] == viz.MOVED_COLOR
    assert colours["Cy —visits→ Rome"] == viz.GONE_COLOR and colours["Ann —likes→ Tea"] == "#555555"
    # Gone facts obey the filters and the cap; with a focus, only those touching an entity drawn.
    assert viz.plan({"facts": after}, viz.Filters(relations={"knows"}), compare=cmp).gone == 0
    assert viz.plan({"facts": after}, viz.Filters(focus="person:Ann"), compare=cmp).gone == 0
    assert viz.plan({"facts": after}, viz.Filters(cap=4), compare=cmp).gone == 0
    # No comparison: the drawing is as before, no change said.
    plain = viz.plan({"facts": after})
    assert plain.gone == 0 and all(e["change"] == "" for e in plain.edges)
