"""The Graphs page's search and trail in a real Chromium (tests/chromium.py), as a fresh-eyes trial met them
(#39): the search box says what it matches (GraphResolve's words: each word typed begins a word of a name) and
lists as the reader types; the entities found leave the drawing in the window's top half; the trail of entities
walked is a breadcrumb above the drawing, and going back a step keeps the steps ahead until a new walk.
The drawing's own measures are tests/test_browser_graphs.py's.
"""

from __future__ import annotations

import re

from chromium import ARTIFACTS, goto, marks, settle

pytestmark = marks()

FOUND = re.compile(r"Acme Robotics · organization · \d+ facts")  # the graph said once, in "N found in World"


def drawing_top(pg) -> float:
    """Where the drawing's frame starts in the window, in px."""
    box = pg.locator("iframe").first.bounding_box()
    assert box is not None
    return float(box["y"])


def test_the_search_says_what_it_matches_and_lists_as_you_type(page):
    """Trial point 1: the box said "part of a name" but matches the start of a word ("obot" found nothing), and
    searched only on Enter. It says what it matches, lists while the reader types, and a miss says why."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, "graphs")
    find = page.get_by_label("Find an entity")
    said = find.get_attribute("placeholder") or ""
    assert "start of" in said and "part of a name" not in said, said
    find.press_sequentially("acme rob")  # no Enter, no leaving the box: listed as typed
    page.get_by_text(FOUND).first.wait_for(timeout=30_000)
    find.fill("")
    find.press_sequentially("obot")
    page.get_by_text(re.compile(r"has a word beginning with “obot”")).first.wait_for(timeout=30_000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "graph-search-miss.png"))


def test_entities_found_leave_the_drawing_in_the_top_half(page):
    """Trial point 2: with entities found listed under the box, the drawing started at y 541 of a 1400 x 1000
    window. They are listed in the row below the bar, which the page has anyway: the drawing stays where it was."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, "graphs")
    before = drawing_top(page)
    said = page.get_by_text(re.compile(r"^Opened on Acme Robotics, the most connected entity here")).bounding_box()
    assert said is not None and said["y"] + said["height"] <= before  # said above the drawing, not below it (#39)
    find = page.get_by_label("Find an entity")
    find.fill("a")  # many found: one row of them, scrolled sideways
    find.press("Enter")
    settle(page)
    page.get_by_text(FOUND).first.wait_for(timeout=30_000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "graph-search-found.png"))
    assert drawing_top(page) < 500 and drawing_top(page) <= before, (before, drawing_top(page))
    # more than the row shows: it scrolls, and says so (Streamlit hides the scrollbar: there was no cue)
    page.get_by_text(re.compile(r"^\d+ found in World \(scroll →\):$")).wait_for(timeout=10_000)
    row = page.locator(".st-key-g_found [data-testid='stButtonGroup'] > div")
    assert row.evaluate("e => e.scrollWidth > e.clientWidth && getComputedStyle(e).scrollbarWidth === 'thin'")
    other = row.locator("button").nth(1)  # not the entity the page opened on (Acme Robotics, the most connected)
    name = other.inner_text().split(" · ")[0]
    other.click()
    page.wait_for_function("(n) => new URL(location.href).searchParams.get('focus') === n", arg=name)
    settle(page)
    assert drawing_top(page) < 500, drawing_top(page)
    assert page.get_by_label("Find an entity").input_value() == ""  # chosen: the list gone, the box empty
    assert trail(page) == [] and page.get_by_text("Walked:").count() == 0  # a new walk: the opened-on not walked


def walk(pg, walked: list[str]) -> str:
    """A double-click on a drawn entity not walked through yet (#39); its name, once the page focused it."""
    body = pg.frame_locator("iframe").first.locator("body")
    body.evaluate("() => new Promise(r => { const w = () => window.centred ? r(true) : setTimeout(w, 20); w(); })")
    node, name = body.evaluate(
        "(_, w) => network.body.data.nodes.get().filter(n => n.name && n.borderWidth !== 4"
        " && !w.includes(n.name)).map(n => [n.id, n.name])[0]",
        walked,
    )
    body.evaluate("(_, id) => network.emit('doubleClick', {nodes: [id], edges: []})", node)
    pg.wait_for_function("(n) => new URL(location.href).searchParams.get('focus') === n", arg=name, timeout=30_000)
    settle(pg)
    return str(name)


def trail(pg) -> list[str]:
    """The steps of the trail the page links to (the step shown is written, not linked)."""
    links = pg.locator("[data-testid='stMainBlockContainer'] [data-testid='stPageLink'] a[href*='graphs']")
    return [t.strip() for t in links.all_inner_texts()]


def test_the_trail_is_a_breadcrumb_above_and_back_keeps_the_steps_ahead(page):
    """Trial point 3: the trail sat below the drawing, and going back to its first step cleared it. It is above the
    drawing; going back to a step keeps the steps after it, as a browser's Back does, until the reader walks
    elsewhere; the drawing stays in the top half."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, "graphs?graph=world&focus=Acme Robotics")
    walked = ["Acme Robotics"]
    for _ in range(2):
        walked.append(walk(page, walked))
    assert trail(page) == walked[:-1], trail(page)
    link = page.get_by_role("link", name=walked[0], exact=True).first.bounding_box()
    assert link is not None and link["y"] + link["height"] <= drawing_top(page), (link, drawing_top(page))
    assert drawing_top(page) < 500, drawing_top(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "graph-trail.png"))
    page.get_by_role("link", name=walked[0], exact=True).first.click()
    page.wait_for_function("(n) => new URL(location.href).searchParams.get('focus') === n", arg=walked[0])
    settle(page)
    assert trail(page) == walked[1:], trail(page)  # back to the first step: the steps ahead stay, as links
    page.screenshot(path=str(ARTIFACTS / "graph-trail-back.png"))
    elsewhere = walk(page, walked)  # a new walk from the first step: the steps ahead go
    assert elsewhere not in walked and trail(page) == walked[:1], (elsewhere, trail(page))


def test_the_bar_holds_the_graph_choice_on_one_line_beside_a_run(page):
    """#39's trial: on a Flow graph the bar also holds the run, and the choice of graph wrapped "Flow" onto a second
    line, pushing the drawing down."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    goto(page, "graphs?graph=flow")
    options = page.locator(".st-key-g_which [data-testid='stRadioOption']")
    tops = {round(box["y"]) for box in (options.nth(i).bounding_box() for i in range(options.count())) if box}
    assert options.count() == 3 and len(tops) == 1 and drawing_top(page) < 500, (tops, drawing_top(page))
