"""The Graphs page's drawing in a real Chromium (tests/chromium.py): what only a browser shows. A focus
drawn whole and readable, measured from vis-network's own geometry (#39): the drawing in the window's top
half, every name and relation written, nothing overlapping or outside the frame, the focus centred and
marked; a click opens neighbours within 1 s without moving what is drawn, a double-click walks, the trail
leads back; a click on a fact opens its weight; the drawing at a past moment and with a diff. The layout
without a browser is tests/test_viz.py's.
"""

from __future__ import annotations

import re

import pytest
from chromium import (
    ARTIFACTS,
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
    tooltip,
)

pytestmark = marks()


#: The drawing's measures (#39), from vis-network's geometry in the frame's own pixels: each node's box (its dot
#: and name whole, or its box) and each relation written on an edge; those that overlap, those outside the frame; the
#: edges whose drawn line passes through a node's box not of its ends (`crossed`: a name or values under a line; a
#: box's dashed tie behind its entity's other boxes aside); the focus's distance from the frame's middle (as a part of
#: its width and height); nodes named and edges unnamed.
MEASURES = """() => {
  const el = document.getElementById('mynetwork'), W = el.clientWidth, H = el.clientHeight;
  const box = (a, c, id) => { const p = network.canvasToDOM(a), q = network.canvasToDOM(c);
    return {id, l: p.x, t: p.y, r: q.x, b: q.y}; };
  const data = network.body.data, boxes = [];
  data.nodes.getIds().forEach(id => { const b = network.getBoundingBox(id), s = network.body.nodes[id].labelModule.size;
    boxes.push(box({x: Math.min(b.left, s.left), y: b.top},  // a dot's name to its foot: vis-network's box stops above it
                   {x: Math.max(b.right, s.left + s.width), y: Math.max(b.bottom, s.top + s.height)}, id)); });
  const nodeBoxes = boxes.slice(), crossed = [], own = (box, n) => String(box).endsWith(':' + n);
  Object.values(network.body.edges).forEach(e => {
    const at = Array.from({length: 97}, (_, i) => network.canvasToDOM(e.edgeType.getPoint(i / 96)));
    nodeBoxes.filter(b => b.id !== e.fromId && b.id !== e.toId && !(own(e.toId, e.fromId) && own(b.id, e.fromId)))
      .forEach(b => { if (at.some(p => p.x > b.l && p.x < b.r && p.y > b.t && p.y < b.b)) crossed.push([e.id, b.id]); }); });
  let unnamed = 0;
  data.edges.getIds().forEach(id => { const e = network.body.edges[id];
    if (!e.options.label) { const to = data.nodes.get(e.toId), twin = data.edges.get().some(o => o.id !== id
        && o.label && [o.from, o.to].sort().join() === [e.fromId, e.toId].sort().join());
      if (!(to && to.shape === 'box') && !twin) { unnamed++; } return; }
    const s = e.labelModule.size; boxes.push(box({x: s.left, y: s.top}, {x: s.left + s.width, y: s.top + s.height}, id)); });
  const hits = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5) hits.push([a.id, b.id]); }
  const outside = boxes.filter(b => b.l < 0 || b.t < 0 || b.r > W || b.b > H).map(b => b.id);
  const nodes = data.nodes.get(), focus = nodes.filter(n => n.borderWidth === 4);
  const f = focus.length ? network.canvasToDOM(network.getPositions([focus[0].id])[focus[0].id]) : {x: 0, y: 0};
  const marked = focus.length === 1 && nodes.every(n => n.id === focus[0].id || (n.color !== focus[0].color && (n.size || 0) < focus[0].size));
  return {nodes: nodes.length, edges: data.edges.length, hits, outside, crossed, unnamed, marked,
    named: nodes.every(n => (n.label || '').trim()), cut: nodes.filter(n => (n.label || '').includes('…')).length,
    dx: Math.abs(f.x - W / 2) / W, dy: Math.abs(f.y - H / 2) / H, font: 18 * network.getScale(),
    px: Math.min(...Object.values(network.body.nodes).concat(Object.values(network.body.edges))
      .filter(x => x.options.label).map(x => x.options.font.size)) * network.getScale()};
}"""


#: After a click has opened neighbours and the view has moved to them: the nodes whose box is not wholly within
#: the frame's view (its corners in the drawing's own units, DOMtoCanvas).
SHOWN = """() => new Promise(r => { const w = () => window.fitted ? r(true) : setTimeout(w, 20); w(); }).then(() => {
  const el = document.getElementById('mynetwork');
  const a = network.DOMtoCanvas({x: 0, y: 0}), c = network.DOMtoCanvas({x: el.clientWidth, y: el.clientHeight});
  return network.body.data.nodes.getIds().filter(id => { const b = network.getBoundingBox(id);
    return b.left < a.x || b.top < a.y || b.right > c.x || b.bottom > c.y; }); })"""


def readable(where: str, m: dict) -> None:
    """#39's measures of a focus's drawing: at most 60 nodes, every node named in full and every edge's relation
    written, no name or relation overlapping another or a node, none outside the frame, no line through a name or
    a box of values, the focus marked and within 10% of the frame's middle."""
    assert 1 < m["nodes"] <= 60 and m["named"] and not m["cut"] and not m["unnamed"], (where, m)
    assert m["hits"] == [] and m["outside"] == [] and m["crossed"] == [], (where, m)
    assert m["marked"] and m["dx"] <= 0.1 and m["dy"] <= 0.1, (where, m)


def legible(where: str, m: dict) -> None:
    """#39: `readable`, and every name and relation drawn at 10.5 px at least once fitted (font size x scale)."""
    readable(where, m)
    print(f"{where}: smallest text {m['px']:.1f} px")  # noqa: T201  (the sizes, for the record under -s)
    assert m["px"] >= 10.5, (where, m["px"])


def measured(pg) -> dict:
    drawn(pg)
    body = pg.frame_locator("iframe").first.locator("body")
    body.evaluate("() => new Promise(r => { const w = () => window.centred ? r(true) : setTimeout(w, 20); w(); })")
    return body.evaluate(MEASURES)


def top_half(pg) -> None:
    """The drawing starts in the top half of a 1400 x 1000 window (#39): the controls fit above it."""
    top = pg.locator("iframe").first.bounding_box()
    assert top is not None and top["y"] < 500, top


def test_a_focus_is_drawn_whole_readable_and_in_the_top_half(page):
    """#39: the World graph opens on its most connected entity and says so; a search finds an entity by part of
    its name and focuses it; every view measured (MEASURES); the User graph and a run's Flow graph too."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, "graphs")
    page.get_by_text("the most connected entity here").first.wait_for(timeout=30_000)
    top_half(page)
    legible("world", measured(page))
    no_tooltip(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "graph-focus.png"))  # the window, as docs/img/graph-focus.png shows it
    find = page.get_by_label("Find an entity")
    find.fill("nordic")
    find.press("Enter")
    settle(page)
    page.get_by_text(re.compile(r"Nordic Circuits · organization · \d+ facts?")).first.click()
    page.wait_for_function(
        "() => new URL(location.href).searchParams.get('focus') === 'Nordic Circuits'", timeout=30_000
    )
    settle(page)
    m = measured(page)
    legible("Nordic Circuits", m)
    body = page.frame_locator("iframe").first.locator("body")
    assert body.evaluate("() => network.body.data.nodes.get().find(n => n.borderWidth === 4).name") == "Nordic Circuits"
    paths = ("graphs?graph=user", "graphs?graph=flow&run=run-company-profile", "graphs?focus=Eindhoven&depth=2")
    for path in (*paths, "graphs?graph=flow", "graphs?focus=Voltaic Cells&depth=2"):  # and the second trial's (#39)
        goto(page, path)
        top_half(page)
        legible(path, measured(page))  # depth 2 too: fewer drawn at first, the rest behind "+N more" (#39)


#: Where each drawn node is on the screen, in the frame's px (canvasToDOM).
ON_SCREEN = (
    "() => Object.fromEntries(Object.entries(network.getPositions()).map(([k, p]) => [k, network.canvasToDOM(p)]))"
)


def clicked(body, node: str) -> dict:
    """A click on `node`, as vis-network reports it: the seconds to the frame painted with what it opened, how far
    (px, in the frame) the nodes drawn before it moved once the view stood again, how many nodes it added, and
    the drawing's measures (MEASURES) then."""
    seen = body.evaluate(ON_SCREEN)
    took = body.evaluate(
        """(_, id) => new Promise(r => { const t = performance.now();
             network.emit('click', {nodes: [id], edges: []});
             requestAnimationFrame(() => requestAnimationFrame(() => r((performance.now() - t) / 1000))); })""",
        node,
    )
    body.evaluate("() => new Promise(r => { const w = () => window.fitted ? r(true) : setTimeout(w, 20); w(); })")
    now = body.evaluate(ON_SCREEN)
    jumped = max(abs(now[k]["x"] - p["x"]) + abs(now[k]["y"] - p["y"]) for k, p in seen.items() if k in now)
    return {"took": took, "jumped": jumped, "added": len(set(now) - set(seen)), "m": body.evaluate(MEASURES)}


def focused(pg, name: str):
    """The World graph focused on `name`, drawn and centred: its frame's body."""
    goto(pg, f"graphs?graph=world&focus={name}")
    measured(pg)
    return pg.frame_locator("iframe").first.locator("body")


def opened_in_place(where: str, c: dict) -> None:
    """#39: a click adds nodes, the nodes drawn before it move < 20 px in the frame, and the drawing stays readable
    (`readable`: nothing overlapping or outside the frame, every name whole, every relation written). How long it
    takes is printed, not asserted: tests never assert on time (CI's two suites at once on two cores took 1.06 s for
    what takes 0.2 s alone); B8's row "a click that opens its neighbours" measures it (< 1 s, bench/run.py)."""
    print(f"{where}: +{c['added']} nodes in {c['took']:.3f} s, drawn nodes moved {c['jumped']:.1f} px")  # noqa: T201
    assert c["added"] > 0 and c["jumped"] < 20, (where, c)
    readable(where, c["m"])


def more_opened(body, where: str, more: str) -> int:
    """A click on the "+N more" box `more`: it opens in place (`opened_in_place`), or, where the view has no room
    left, it moves nothing, the drawing stays readable and the box says so (#39). How many nodes it added."""
    c = clicked(body, more)
    title = body.evaluate("(_, id) => (network.body.data.nodes.get(id) || {title: 'all opened'}).title", more)
    if c["added"] or "no room left in this view" not in title:
        opened_in_place(where, c)
    print(f"{where}: {title}")  # noqa: T201
    assert c["jumped"] == 0, (where, c)  # its time: B8's row, as opened_in_place says
    readable(where, c["m"])
    return c["added"]


def test_a_click_opens_neighbours_where_there_is_room_and_the_drawing_stays_readable(page):
    """#39's trial: from Intralogistics Expo 2026 a click on Acme Robotics zoomed the view 1.38 -> 0.76 and moved
    the drawn nodes 126-278 px, the neighbours drawn over relations; "+3 more competes_with" on Acme Robotics put
    Orbital Motion over "head_of_procurement_at". Now what opens goes where there is room in the view, clear of
    every box, relation and line drawn; what finds none stays behind "+N more", a click away."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    body = focused(page, "Intralogistics Expo 2026")
    opened_in_place("Acme Robotics", clicked(body, "organization:Acme Robotics"))
    no_tooltip(page)
    page.screenshot(path=str(ARTIFACTS / "graph-walk-opened.png"))
    more = body.evaluate(
        "() => network.body.data.nodes.get().find(n => n.more && n.more[0] === 'organization:Acme Robotics').id"
    )
    more_opened(body, "its +N more", more)
    body = focused(page, "Acme Robotics")
    assert more_opened(body, "+3 more competes_with", "more:competes_with:organization:Acme Robotics")
    no_tooltip(page)
    page.screenshot(path=str(ARTIFACTS / "graph-walk-more.png"))


def test_opening_more_moves_nothing_on_the_screen_and_lands_on_nothing(page):
    """#39's second trial: on Acme Robotics' focus "+3 more customer_of" twice, then "+3 more competes_with", zoomed
    the view out (scale 0.81 -> 0.73) and moved every node on the screen by up to 46 px; Polaris Retail landed on the
    relations beside the focus, its name crossed by edges, and the competes_with edges ran under Acme's values. Now
    a click moves nothing on the screen (zoom and pan included), opens only where the view has room, clear of every
    line and box, and a "+N more" that finds none says so."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    body = focused(page, "Acme Robotics")
    scale, opened = body.evaluate("() => network.getScale()"), 0
    for relation in ("customer_of", "customer_of", "competes_with"):
        opened += more_opened(body, f"+N more {relation}", f"more:{relation}:organization:Acme Robotics")
        assert body.evaluate("() => network.getScale()") == scale
    assert opened > 0
    no_tooltip(page)
    page.screenshot(path=str(ARTIFACTS / "graph-more-in-place.png"))


def test_the_focus_s_more_boxes_stand_by_the_focus(page):
    """#39's second trial: the focus's "+N more" boxes stood in the columns of its neighbours ("+3 more competes_with"
    under Dana Whitfield, "+2 more works_at" under Priya Nair), tied to Acme by a thin dashed line only. Now they
    stand by the focus, on its side no neighbour stands: in its column, no entity between them and it."""
    body = focused(page, "Acme Robotics")
    apart = body.evaluate(
        """() => { const at = network.getPositions(), f = at['organization:Acme Robotics'];
             const nodes = network.body.data.nodes.get(), between = (m, n) => Math.abs(at[n.id].x - f.x) < 100
               && Math.min(f.y, at[m.id].y) < at[n.id].y && at[n.id].y < Math.max(f.y, at[m.id].y);
             return nodes.filter(m => m.more && m.more[0] === 'organization:Acme Robotics').map(m => [m.id,
               Math.abs(at[m.id].x - f.x), nodes.filter(n => n.name && between(m, n)).map(n => n.id)]); }"""
    )
    assert len(apart) > 1 and all(dx < 1 and not entities for _, dx, entities in apart), apart


def test_a_click_opens_neighbours_in_place_a_double_click_walks_and_the_trail_leads_back(page):
    """#39: a click on an entity adds its neighbours around it within 1 s, the nodes drawn moving < 20 px; a
    "+N more" box opens its relation's; a double-click focuses on an entity (?focus=); three steps walked, the
    trail links back to each."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    body = focused(page, "Acme Robotics")
    before = body.evaluate("() => network.getPositions()")
    ids = body.evaluate("() => network.body.data.nodes.get().filter(n => n.name && n.borderWidth !== 4).map(n => n.id)")
    for node in ids:  # the first neighbour with neighbours of its own not drawn
        c = clicked(body, node)
        if c["added"]:
            break
    opened_in_place(node, c)
    after = body.evaluate("() => network.getPositions()")
    assert all(after[k] == p for k, p in before.items() if k in after)  # nodes keep their places
    assert body.evaluate(SHOWN) == [], "a node opened outside the frame"
    no_tooltip(page)
    page.screenshot(path=str(ARTIFACTS / "graph-walk.png"))  # docs/img/graph-walk.png
    walked = ["Acme Robotics"]
    for _ in range(3):  # three steps, each a double-click on a neighbour not yet walked through
        name = body.evaluate(
            "(_, w) => network.body.data.nodes.get().filter(n => n.name && n.borderWidth !== 4"
            " && !w.includes(n.name)).map(n => [n.id, n.name])[0]",
            walked,
        )
        body.evaluate("(_, id) => network.emit('doubleClick', {nodes: [id], edges: []})", name[0])
        page.wait_for_function(
            "(n) => new URL(location.href).searchParams.get('focus') === n", arg=name[1], timeout=30_000
        )
        settle(page)
        walked.append(name[1])
        readable(name[1], measured(page))
        body = page.frame_locator("iframe").first.locator("body")
    for step in walked[:-1]:
        assert page.get_by_role("link", name=step).count() >= 1, step
    page.get_by_role("link", name=walked[1]).first.click()
    page.wait_for_function(
        "(n) => new URL(location.href).searchParams.get('focus') === n", arg=walked[1], timeout=30_000
    )
    settle(page)
    assert (
        page.frame_locator("iframe")
        .first.locator("body")
        .evaluate("() => network.body.data.nodes.get().find(n => n.borderWidth === 4).name")
        == walked[1]
    )


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
    edges = body.evaluate(  # the facts' edges (a "+N more" box's dashed line is none)
        "() => network.body.data.edges.get().filter(e => e.fact !== undefined).map(e => [e.id, e.fact])"
    )
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


def test_graph_choices_survive_leaving_the_page(page):
    """Issue #25: the Graphs page's choices are as they were when the reader comes back from another page."""
    goto(page, "graphs?graph=world")
    depth = page.get_by_label("Depth", exact=True)
    depth.fill("2")
    depth.press("Enter")
    settle(page)
    page.locator("[data-testid='stSidebarNav']").get_by_text("Overview").first.click()
    settle(page)
    page.locator("h1").first.wait_for(timeout=30_000)
    page.locator("[data-testid='stSidebarNav']").get_by_text("Graphs").first.click()
    settle(page)
    page.get_by_label("Depth", exact=True).wait_for(timeout=60_000)
    assert page.get_by_label("Depth", exact=True).input_value() == "2"


def test_the_overview_moment_carries_over_to_graphs(page, moments):
    """Issue #25: a past moment chosen on the Overview is the moment Graphs draws when the reader goes there."""
    cp1 = moments.end["cp-1"]
    goto(page, f"home?at={cp1}")
    assert moment_shown(page) == moments.place(cp1)
    page.locator("[data-testid='stSidebarNav']").get_by_text("Graphs").first.click()
    page.wait_for_function("() => location.pathname.endsWith('/graphs')", timeout=30_000)
    settle(page)
    page.get_by_text(re.compile(rf"Opened with \d+ entities and \d+ facts.* after moment {cp1}\b")).first.wait_for(
        timeout=30_000
    )
    assert moment_shown(page) == moments.place(cp1) and f"at={cp1}" in page.url


def test_graphs_at_a_past_moment_and_with_a_diff(page, moments):
    """Issue #17, point 4: Graphs opened at a past moment draws the graph as it stood, and with a
    comparison draws what changed on it (added green, weights moved orange with ↑↓, gone dashed grey)."""
    cp1 = moments.end["cp-1"]
    goto(page, f"graphs?at={cp1}")
    page.get_by_text(re.compile(rf"Opened with \d+ entities and \d+ facts after moment {cp1}\b")).first.wait_for(
        timeout=30_000
    )
    assert moment_shown(page) == moments.place(cp1) and drawn_entities(page) == said_nodes(page)
    then = len(drawn_edges(page))
    no_tooltip(page)
    drawn(page)
    shot(page, "graphs-at-moment-4", page.locator("iframe").first)
    page.get_by_role("button", name="Step ▶").click()
    page.wait_for_function(f"() => /[?&]at={moments.after(cp1)}\\b/.test(location.href)", timeout=30_000)
    assert page.locator("[data-testid='stException']").count() == 0
    # cw-1 taught, then cw-2 replaced it: facts added, one gone, one weight moved.
    cw1, cw2 = moments.end["cw-1"], moments.end["cw-2"]
    goto(page, f"graphs?at={cw2}&from={cw1}&focus=Orbital Motion")  # drawn around what changed (#39)
    page.get_by_text(re.compile(rf"World · Acme Robotics, from moment {cw1}\b")).first.wait_for(timeout=30_000)
    page.get_by_text(re.compile(r"fact gone")).first.wait_for(timeout=30_000)
    edges = drawn_edges(page)
    added = [e for e in edges if e["color"] == "#2ca02c"]
    gone = [e for e in edges if e["color"] == "#c7c7c7"]
    moved = [e for e in edges if e["color"] == "#ff7f0e"]
    assert added and all(f"added since moment {cw1}" in e["title"] for e in added)
    assert len(gone) == 1 and gone[0]["dashes"] and f"gone since moment {cw1}" in gone[0]["title"]
    assert len(moved) == 1 and re.search(r"weight \d\.\d{3} [↑↓] \d\.\d{3}", moved[0]["title"])
    assert then and drawn_entities(page) == said_nodes(page)
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


def drawn_entities(pg) -> int:
    """The entities drawn (not the boxes of values or of "+N more")."""
    body = pg.frame_locator("iframe").first.locator("body")
    return int(body.evaluate("() => network.body.data.nodes.get().filter(n => n.name).length"))


def test_names_never_overlap_in_a_narrower_frame(page):
    """At a 1024 px window the frame is narrower: the focus's drawing is still whole and readable (#39)."""
    page.set_viewport_size({"width": 1024, "height": 900})
    goto(page, "graphs?graph=flow&run=run-company-profile")
    readable("1024", measured(page))
    shot(page, "graph-1024", page.locator("iframe").first)


def test_communities_open_as_a_focus_with_their_members(page):
    """#39 item 4: the World graph as its communities (each one node, named, sized by its entities); a click on one
    opens it around its most connected entity and lists its members. Runs once MemoryService.communities is there."""
    pytest.importorskip("memory_core.views.communities")
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, "graphs")  # opened on the most connected entity, then the toggle: as a reader comes to them
    page.get_by_text("Communities", exact=True).first.click()
    page.get_by_text(re.compile(r"\d+ communities of \d+ entities")).first.wait_for(timeout=60_000)
    settle(page)
    top_half(page)
    m = measured(page)
    assert 1 < m["nodes"] <= 60 and m["named"] and m["hits"] == [] and m["outside"] == [], m
    no_tooltip(page)
    page.screenshot(path=str(ARTIFACTS / "graph-communities.png"))  # docs/img/graph-communities.png
    body = page.frame_locator("iframe").first.locator("body")
    central = body.evaluate("() => network.body.data.nodes.get()[1].central")
    node = body.evaluate("() => network.body.data.nodes.get()[1].id")
    body.evaluate("(_, id) => network.emit('click', {nodes: [id], edges: []})", node)
    page.wait_for_function("(n) => new URL(location.href).searchParams.get('focus') === n", arg=central, timeout=30_000)
    settle(page)
    page.get_by_text(re.compile(r"^Community ")).first.wait_for(timeout=30_000)
    readable(central, measured(page))
    assert page.get_by_text("Walked:").count() == 0  # a new walk: the entity the page opened on was not walked (#39)


def test_what_a_click_leaves_unopened_is_said_by_relation(page):
    """#39's second trial: from Voltaic Cells a click on Acme Robotics (40 neighbours) opened 5 and left one "+9 more",
    not grouped by relation as the first view's are. Its tooltip says them by relation, the counts adding up."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, "graphs?graph=world&focus=Voltaic%20Cells")
    body = page.frame_locator("iframe").first.locator("body")
    body.evaluate("() => new Promise(r => { const w = () => window.centred ? r(true) : setTimeout(w, 20); w(); })")
    body.evaluate("() => network.emit('click', {nodes: ['organization:Acme Robotics'], edges: []})")
    body.evaluate("() => new Promise(r => { const w = () => window.fitted ? r(true) : setTimeout(w, 20); w(); })")
    left = body.evaluate("() => network.body.data.nodes.get().filter(n => n.more && !n.more[1]).map(n => n.title)")
    assert len(left) == 1, left
    said = re.match(r"(\d+) neighbours \((.+)\) not drawn: click to open", left[0])
    assert said, left
    counts = [int(part.split(" ")[0]) for part in said.group(2).split(", ")]
    assert sum(counts) == int(said.group(1)) and len(counts) > 1, left
