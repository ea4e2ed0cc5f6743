"""The Graphs page's drawing in a real Chromium (tests/chromium.py): what only a browser shows. It
stands still, a click on a fact opens its weight, a double-click explores, its measures (issue #25)
read from vis-network's own geometry, the drawing at a past moment and with a diff. The layout's
geometry without a browser, on every graph of the demo, is tests/test_viz.py's.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest
from chromium import (
    ARTIFACTS,
    GEOMETRY,
    drawn,
    drawn_edges,
    drawn_nodes,
    frames,
    goto,
    in_view,
    marks,
    moment_shown,
    no_tooltip,
    said_nodes,
    settle,
    shot,
    still,
    tooltip,
)

from memory_core import MemoryService, make_engine
from memory_core.views import viz

pytestmark = marks()


def test_graph_draws_the_nodes_it_says_and_a_filter_changes_them(page):
    goto(page, "graphs")
    before = said_nodes(page)
    assert before > 20 and drawn_nodes(page) == before
    cap = page.get_by_label("Entity cap")
    cap.fill("15")
    cap.press("Enter")
    settle(page)
    page.get_by_text("were left out").first.wait_for(timeout=60_000)
    settle(page)
    after = said_nodes(page)
    assert after <= 15 and drawn_nodes(page) == after
    assert page.get_by_text("were left out").count() >= 1
    shot(page, "graph-capped")


def test_graph_stands_still_and_a_fact_edge_opens_its_weight(page):
    goto(page, "graphs")
    assert drawn_nodes(page) > 0
    page.mouse.move(0, 0)  # no tooltip in the way
    frame = page.locator("iframe").first
    drawn(page)
    first = frame.screenshot()
    positions = page.frame_locator("iframe").first.locator("body").evaluate("() => network.getPositions()")
    frames(page, 30)  # half a second of frames: a layout that still moved would have moved by now
    second = frame.screenshot()
    assert page.frame_locator("iframe").first.locator("body").evaluate("() => network.getPositions()") == positions
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "graph-still-1.png").write_bytes(first)
    (ARTIFACTS / "graph-still-2.png").write_bytes(second)
    assert first == second, "the drawing moved after it was drawn"
    body = page.frame_locator("iframe").first.locator("body")
    edges = body.evaluate("() => network.body.data.edges.get().map(e => [e.id, e.fact])")
    assert edges and all(isinstance(fact, int) for _, fact in edges)
    edge_id, fact = edges[0]
    # a click on that edge, as vis-network reports it to its listeners
    body.evaluate("(_, id) => network.emit('click', {nodes: [], edges: [id]})", edge_id)
    page.wait_for_function(f"() => /\\/fact-weights\\?.*fact={fact}\\b/.test(location.href)", timeout=30_000)
    settle(page)
    assert "graph=world" in page.url
    page.locator("h1").first.wait_for(timeout=30_000)
    assert page.locator("h1").first.inner_text().strip().startswith("Fact weights")
    assert page.locator("[data-testid='stException']").count() == 0
    in_view(page, "Why this weight?")  # issue #25: the fact opened, not below the fold
    shot(page, "graph-edge-opened-weight")


def test_open_a_fact_weight_from_the_user_and_flow_graphs_opens_a_fact_of_that_graph(page):
    """Issue #25: "Open a fact's weight" on the User and Flow graphs opened a World fact (the link's graph
    was taken as already seen, since Graphs had written the same param)."""
    for path, name in (("graphs?graph=user", "User"), ("graphs?graph=flow&run=run-company-profile", "Flow")):
        goto(page, path)
        link = page.get_by_role("link", name="Why this weight?")
        assert f"graph={name.lower()}" in (link.get_attribute("href") or "")
        link.click()
        page.wait_for_function("() => location.pathname.endsWith('/fact-weights')", timeout=30_000)
        settle(page)
        page.locator("h1").first.wait_for(timeout=30_000)
        assert page.get_by_role("radio", name=re.compile(name)).is_checked(), page.url
        assert page.get_by_text("does not hold").count() == 0 and f"graph={name.lower()}" in page.url


def test_a_click_opens_the_fact_whose_tooltip_shows_even_on_a_node(page):
    """#16's trial: in a dense drawing, with an edge's tooltip showing, a click landed on a node and opened
    nothing (or another fact). The click opens the fact the pointer is over, as its tooltip names it."""
    goto(page, "graphs")
    assert drawn_nodes(page) > 0
    body = page.frame_locator("iframe").first.locator("body")
    drawn(page)
    # The pointer, a real one, over the middle of a fact's edge until its tooltip shows: the drawing in view
    # (a pointer below the window moves nothing), first the edges whose middle vis-network's own hit test
    # gives to that edge and to no node (the others after them).
    page.locator("iframe").first.scroll_into_view_if_needed()
    box = page.locator("iframe").first.bounding_box()
    assert box is not None
    middles = body.evaluate(
        """() => { const r = document.getElementById('mynetwork').getBoundingClientRect();
             return network.body.data.edges.get().map(e => {
               const d = network.canvasToDOM(network.body.edges[e.id].edgeType.getPoint(0.5));
               const clear = network.getNodeAt(d) === undefined && network.getEdgeAt(d) === e.id;
               return [e.id, e.fact, d.x + r.left, d.y + r.top, clear ? 0 : 1]; }).sort((a, b) => a[4] - b[4]); }"""
    )
    for edge_id, edge_fact, x, y, _ in middles:
        page.mouse.move(box["x"] + x, box["y"] + y)
        tip = tooltip(page)
        title = body.evaluate("(_, id) => network.body.data.edges.get(id).title", edge_id)
        if tip and tip == title:
            fact = edge_fact
            break
    else:
        raise AssertionError("no fact's tooltip showed under the pointer")
    node = body.evaluate("() => network.body.data.nodes.getIds()[0]")
    # near a node, vis-network's hover and click hit test report the node, though the tooltip names the edge
    body.evaluate("(_, n) => network.emit('hoverNode', {node: n})", node)
    body.evaluate("(_, n) => network.emit('click', {nodes: [n], edges: []})", node)  # reported as the node's
    page.wait_for_function(f"() => /\\/fact-weights\\?.*fact={fact}\\b/.test(location.href)", timeout=30_000)
    settle(page)
    assert page.locator("[data-testid='stException']").count() == 0


def readable(where: str, m: dict) -> None:
    """Issue #25's measures: no dots or names overlapping, spread <= 2, every name and relation drawn at
    >= 10 px at the default fit, every entity named up to 60 drawn, the 60 heaviest beyond."""
    assert m["overlaps"] == 0 and m["names"] == 0, (where, m)
    assert m["spread"] <= 2.0, (where, m)
    assert m["font"] >= 10 and m["edge_font"] >= 10, (where, m)
    assert m["named"] == min(m["nodes"], 60), (where, m)


def alone(pg, svc: MemoryService, graph: str, owner: str) -> dict:
    """The measures of the drawing the Graphs page sends for a graph at its default filters (viz.to_html
    of its plan, the page's 5,000 heaviest facts), drawn alone in `pg`, a window the size of the page's frame."""
    p = viz.plan(svc.graph_drawing(graph, owner, limit=5000), viz.Filters())
    pg.set_content(viz.to_html(p, drawing=viz.layout_of(p), graph=graph))
    pg.locator("canvas").first.wait_for(timeout=30_000)
    still(pg.locator("body"))
    return pg.evaluate(GEOMETRY)


def test_drawings_are_readable_on_the_world_and_every_flow_graph(page, demo_app):
    """Issue #25's measures (`readable`) on the demo's World graph and every Flow graph. The app draws the
    World graph and run-company-profile's Flow graph (the densest; a link with `graph=flow` draws the Flow
    graph); then every Flow graph's drawing, as the page sends it, is drawn alone in a window the size of
    the app's frame, which measures the app's two exactly as the app drew them (checked here), without
    loading the app once per run."""
    svc = MemoryService(make_engine(demo_app.db))
    runs = [r["id"] for r in svc.runs("acme") if svc.graph_drawing("flow", r["id"], limit=1)["facts"]]
    assert "run-company-profile" in runs and len(runs) > 1
    in_app = {}
    for graph, owner in (("world", "acme"), ("flow", "run-company-profile")):
        path = f"graphs?graph={graph}" + (f"&run={owner}" if graph == "flow" else "")
        goto(page, path)
        assert page.get_by_role("radio", name=re.compile(graph.capitalize())).is_checked(), path
        drawn(page)
        in_app[graph, owner] = m = page.frame_locator("iframe").first.locator("body").evaluate(GEOMETRY)
        readable(path, m)
        shot(page, "graph-" + path.rsplit("=", 1)[-1], page.locator("iframe").first)
    box = page.locator("iframe").first.bounding_box()
    assert box is not None
    window = page.context.new_page()  # opened last: a page in the background draws no frames
    window.set_viewport_size({"width": round(box["width"]), "height": round(box["height"])})
    for (graph, owner), m in in_app.items():
        assert alone(window, svc, graph, owner) == pytest.approx(m), owner  # the same drawing, the same measures
    for run in runs:
        readable(run, alone(window, svc, "flow", run))
    svc.engine.dispose()


def test_double_click_explores_from_an_entity_and_closes_again(page):
    """Explore by expanding (issue #25): a double-click on an entity of the whole graph makes it the focus
    (?entity=); a double-click on a neighbour opens its neighbours (?expand=) and a second closes them. The
    page draws only the graph the reader may see (R20)."""
    goto(page, "graphs")
    body = page.frame_locator("iframe").first.locator("body")
    drawn(page)
    whole = drawn_nodes(page)
    hub = body.evaluate(
        "() => network.body.data.nodes.get().sort((a, b) => b.size - a.size || (a.id < b.id ? -1 : 1))[0].id"
    )
    body.evaluate("(_, id) => network.emit('doubleClick', {nodes: [id], edges: []})", hub)
    page.wait_for_function("() => new URL(location.href).searchParams.get('entity') !== null", timeout=30_000)
    settle(page)
    drawn(page)
    focused = drawn_nodes(page)
    assert 1 < focused < whole
    others = body.evaluate("(_, hub) => network.body.data.nodes.getIds().filter(id => id !== hub)", hub)
    for other in others:  # a neighbour whose own neighbours were not all drawn
        body.evaluate("(_, id) => network.emit('doubleClick', {nodes: [id], edges: []})", other)
        page.wait_for_function("() => new URL(location.href).searchParams.get('expand') !== null", timeout=30_000)
        settle(page)
        drawn(page)
        if drawn_nodes(page) > focused:
            break
        body.evaluate("(_, id) => network.emit('doubleClick', {nodes: [id], edges: []})", other)
        page.wait_for_function("() => new URL(location.href).searchParams.get('expand') === null", timeout=30_000)
        settle(page)
        drawn(page)
    else:
        raise AssertionError("no neighbour opened more entities")
    shot(page, "graph-expanded", page.locator("iframe").first)
    # A name may hold a comma: each id in ?expand= has its "%" and "," escaped, the list split on the rest.
    raw = body.evaluate("() => expandUrl('organization:Acme, Inc. 100%').searchParams.get('expand')")
    assert [unquote(v) for v in raw.split(",")][-1] == "organization:Acme, Inc. 100%"
    body.evaluate("(_, id) => network.emit('doubleClick', {nodes: [id], edges: []})", other)
    page.wait_for_function("() => new URL(location.href).searchParams.get('expand') === null", timeout=30_000)
    settle(page)
    drawn(page)
    assert drawn_nodes(page) == focused


def test_graph_filters_survive_leaving_the_page(page):
    """Issue #25: the Graphs page's filters are as they were when the reader comes back from another page."""
    goto(page, "graphs?graph=world")
    cap = page.get_by_label("Entity cap")
    cap.fill("15")
    cap.press("Enter")
    settle(page)
    page.get_by_text("were left out").first.wait_for(timeout=60_000)
    page.locator("[data-testid='stSidebarNav']").get_by_text("Overview").first.click()
    settle(page)
    page.locator("h1").first.wait_for(timeout=30_000)
    page.locator("[data-testid='stSidebarNav']").get_by_text("Graphs").first.click()
    settle(page)
    page.get_by_text("were left out").first.wait_for(timeout=60_000)
    assert page.get_by_label("Entity cap").input_value() == "15"


def test_the_overview_moment_carries_over_to_graphs(page, moments):
    """Issue #25: a past moment chosen on the Overview is the moment Graphs draws when the reader goes there."""
    cp1 = moments.end["cp-1"]
    goto(page, f"home?at={cp1}")
    assert moment_shown(page) == moments.place(cp1)
    page.locator("[data-testid='stSidebarNav']").get_by_text("Graphs").first.click()
    page.wait_for_function("() => location.pathname.endsWith('/graphs')", timeout=30_000)
    settle(page)
    page.get_by_text(re.compile(rf"Showing \d+ entities and \d+ facts .* after moment {cp1}\b")).first.wait_for(
        timeout=30_000
    )
    assert moment_shown(page) == moments.place(cp1) and f"at={cp1}" in page.url


def test_graphs_at_a_past_moment_and_with_a_diff(page, moments):
    """Issue #17, point 4: Graphs opened at a past moment draws the graph as it stood, and with a
    comparison draws what changed on it (added green, weights moved orange with ↑↓, gone dashed grey)."""
    cp1 = moments.end["cp-1"]
    goto(page, f"graphs?at={cp1}")
    page.get_by_text(
        re.compile(rf"Showing \d+ entities and \d+ facts of the \d+ facts in this graph after moment {cp1}\b")
    ).first.wait_for(timeout=30_000)
    assert moment_shown(page) == moments.place(cp1) and drawn_nodes(page) == said_nodes(page)
    then = len(drawn_edges(page))
    no_tooltip(page)
    drawn(page)
    shot(page, "graphs-at-moment-4", page.locator("iframe").first)
    page.get_by_role("button", name="Step ▶").click()
    page.wait_for_function(f"() => /[?&]at={moments.after(cp1)}\\b/.test(location.href)", timeout=30_000)
    assert page.locator("[data-testid='stException']").count() == 0
    # cw-1 taught, then cw-2 replaced it: facts added, one gone, one weight moved.
    cw1, cw2 = moments.end["cw-1"], moments.end["cw-2"]
    goto(page, f"graphs?at={cw2}&from={cw1}")
    page.get_by_text(re.compile(rf"World · Acme Robotics, from moment {cw1}\b")).first.wait_for(timeout=30_000)
    page.get_by_text(re.compile(r"fact gone")).first.wait_for(timeout=30_000)
    edges = drawn_edges(page)
    added = [e for e in edges if e["color"] == "#2ca02c"]
    gone = [e for e in edges if e["color"] == "#c7c7c7"]
    moved = [e for e in edges if e["color"] == "#ff7f0e"]
    assert added and all(f"added since moment {cw1}" in e["title"] for e in added)
    assert len(gone) == 1 and gone[0]["dashes"] and f"gone since moment {cw1}" in gone[0]["title"]
    assert len(moved) == 1 and re.search(r"weight \d\.\d{3} [↑↓] \d\.\d{3}", moved[0]["title"])
    assert len(edges) > then and drawn_nodes(page) == said_nodes(page)
    page.get_by_text(re.compile(r"\d+ added, 1 gone, 1 changed")).first.wait_for(timeout=30_000)
    assert page.locator("[data-testid='stException']").count() == 0
    no_tooltip(page)
    drawn(page)
    shot(page, "graphs-diff-cw1-cw2", page.locator("iframe").first)
    shot(
        page,
        "graphs-diff-cw1-cw2-table",
        page.get_by_text(re.compile(rf"World · Acme Robotics, from moment {cw1}\b")).first,
    )
    first, last = moments.corrections  # five disputes and a retraction: weights down, no fact added
    goto(page, f"graphs?at={last}&from={first}")
    page.get_by_text(re.compile(rf"World · Acme Robotics, from moment {first}\b")).first.wait_for(timeout=30_000)
    moved = [e for e in drawn_edges(page) if e["color"] == "#ff7f0e"]
    assert moved and all("↓" in e["title"] for e in moved)
    shot(page, "graphs-diff-corrections", page.locator("iframe").first)


def test_names_never_overlap_in_a_narrower_frame(page):
    """At a 1024 px window the fit draws the drawing smaller: names are made 10.5 px and the lighter of two
    that touch goes to its tooltip (issue #25: names readable and apart at any width)."""
    page.set_viewport_size({"width": 1024, "height": 900})
    goto(page, "graphs?graph=flow&run=run-company-profile")
    drawn(page)
    body = page.frame_locator("iframe").first.locator("body")
    for _ in range(100):  # until the names that touched are handed to their tooltips (a few frames)
        m = body.evaluate(GEOMETRY)
        if m["names"] == 0:
            break
        frames(page, 2)
    assert m["names"] == 0 and m["overlaps"] == 0 and m["font"] >= 10 and 20 <= m["named"] < m["nodes"], m
    shot(page, "graph-1024", page.locator("iframe").first)
