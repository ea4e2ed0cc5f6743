"""Runs for agents (#38.8) in Chromium: "Open in the Notebook" moves the address to the Notebook's
(it reopens that notebook), and a latest turn's link on the Overview opens Runs on its run with that
turn open; an agent's reads appear on its turn as it reads (#38.7). Screenshots: artifacts/screenshots/runs-*.png."""

from __future__ import annotations

import re
import threading

import anyio
import httpx2
import pytest
from chromium import ARTIFACTS, PlaywrightTimeout, goto, marks, painted, settle, shot
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from served import mcp_http

from memory_core import MemoryService, make_engine

pytestmark = marks()
HERE = "() => location.pathname + location.search"


def test_open_in_the_notebook_moves_the_address(page):
    goto(page, "runlog?run=run-supplier-scan")  # the old address, as people shared it
    page.get_by_role("button", name="Open in the Notebook").click()
    page.wait_for_function("() => location.pathname.endsWith('/notebook')", timeout=30_000)
    settle(page)
    assert page.locator("h1").first.inner_text().strip() == "Notebook"
    address = page.evaluate(HERE)
    assert "mem=notebook" in address and "nb=" in address and "run=" not in address, address


def test_a_latest_turn_s_link_opens_its_run_with_that_turn_open(page, demo_app):
    svc = MemoryService(make_engine(demo_app.db))
    try:
        svc.agent_server_started("srv-b", host="elsewhere", pid=1, transport="http", now=0.0)
        svc.agent_session_opened("ses-b", server="srv-b", client="my-agent 0.1", transport="http", now=0.0)
        svc.start_run("run-agent", org="acme", person="lee", workflow="company_profile", session="ses-b")
        svc.open_turn("turn-agent", run="run-agent", request={"text": "Who supplies our servo drives?", "claims": []})
    finally:
        svc.engine.dispose()
    goto(page, "")  # the Overview lists the latest turns too
    page.get_by_role("link", name="Who supplies our servo drives? (turn-agent)").first.click()
    page.wait_for_function("() => location.pathname.endsWith('/runs')", timeout=30_000)
    settle(page)
    assert "run=run-agent" in page.evaluate(HERE) and "turn=turn-agent" in page.evaluate(HERE)
    opened = page.locator("[data-testid='stExpander'] details[open] summary")
    opened.first.wait_for(timeout=30_000)
    assert [t for t in opened.all_inner_texts() if "(turn-agent)" in t and "linked" in t], opened.all_inner_texts()
    opened_in_view(page, "turn-agent")  # a link to a turn shows it, as a click on its bar does
    shot(page, "runs-agents-linked-turn")


def test_an_agent_s_reads_appear_on_runs_as_it_reads(page, demo_app):
    """#38 point 7, the recall trace live: Runs open on an agent's run, the agent reads over MCP (HTTP);
    each read appears in its turn, with what it was told, without a reload; a refused read says why."""
    svc = MemoryService(make_engine(demo_app.db))
    token = svc.issue_token("lee", org="acme")
    svc.engine.dispose()
    opened, first_shown, done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, str] = {}

    async def agent(base: str) -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with Client(streamable_http_client(base, http_client=http)) as c:
            run = (await c.call_tool("start_run", {"workflow": "competitor_watch"})).structured_content or {}
            turn = await c.call_tool("open_turn", {"run": run["run"], "request": "Who are our competitors?"})
            seen["turn"] = (turn.structured_content or {})["turn"]
            opened.set()
            await anyio.to_thread.run_sync(lambda: first_shown.wait(60))
            await c.call_tool("GraphResolve", {"turn": seen["turn"], "name": "Acme Robotics"})
            for _ in range(4):  # competitor_watch allows 4 probes (R21): the fifth read is refused
                await c.call_tool("GraphResolve", {"turn": seen["turn"], "name": "Orbital", "match": "words"})
            done.set()

    with mcp_http(demo_app.db) as base:
        worker = threading.Thread(target=lambda: anyio.run(agent, base), daemon=True)
        worker.start()
        assert opened.wait(60)
        goto(page, "runs")  # the agent's run is the newest: selected, its one turn open
        page.get_by_text(re.compile(r"\(" + re.escape(seen["turn"]) + r"\)")).first.wait_for(timeout=30_000)
        first_shown.set()
        assert done.wait(60)
        page.get_by_text(re.compile("GraphResolve “Acme Robotics” by the turn's model: told")).first.wait_for(
            timeout=30_000
        )
        page.get_by_text(re.compile("refused, budget_exhausted")).first.wait_for(timeout=30_000)
        lines = [
            t for t in page.locator("[data-testid='stMarkdownContainer']").all_inner_texts() if "GraphResolve" in t
        ]
        assert any("Orbital Motion" in t for t in lines), lines
        assert page.locator("[data-testid='stException']").count() == 0
        shot(page, "runs-agent-reads-live")
        worker.join(30)


# --- runs at a glance (#39.5): a bar a turn, a click opens it, live; the Overview's past moment (#39.8) ----------

BARS = "[data-testid='stVegaLiteChart'] g.turns_marks path"


def bars(page) -> list[str]:
    """The timeline's bars as drawn (SVG), each by its description (its turn's title among it)."""
    page.locator(BARS).first.wait_for(timeout=30_000)
    return page.locator(BARS).evaluate_all("ps => ps.map(p => p.getAttribute('aria-label') || '')")


def shown_turns(db: str) -> list[str]:
    svc = MemoryService(make_engine(db))
    try:
        return [t["id"] for r in svc.timeline("acme")["runs"] for t in r["turns"]]
    finally:
        svc.engine.dispose()


#: Where the open turn's label is, in pixels below the app's header (None while no turn is open).
OPEN_TURN_TOP = """(turn) => { const s = [...document.querySelectorAll("[data-testid='stExpander'] details[open] summary p")]
  .find(e => e.textContent.includes('(' + turn + ')'));
  return s ? s.getBoundingClientRect().top - document.querySelector("[data-testid='stHeader']").getBoundingClientRect().bottom : null; }"""


def opened_in_view(page, turn: str) -> None:
    """#39.5, found by a trial: a click on a bar opened its turn 1,835 px below the window, out of sight.
    The opened turn's label is in the window, below the app's header and a line's room above the bottom, 10 s on."""
    within = (
        f"(t) => {{ const top = ({OPEN_TURN_TOP})(t); return top !== null && top >= 0 && top < innerHeight - 60; }}"
    )
    try:
        page.wait_for_function(within, arg=turn, timeout=10_000)
    except PlaywrightTimeout:
        pass
    painted(page)
    top, height = page.evaluate(OPEN_TURN_TOP, turn), page.evaluate("() => innerHeight")
    assert top is not None and 0 <= top < height - 60, (turn, top, height)


def test_runs_and_the_overview_draw_a_bar_a_turn_and_a_click_opens_it(page, demo_app):
    turns = shown_turns(demo_app.db)
    for where in ("runs", ""):
        goto(page, where)
        drawn = bars(page)
        assert len(drawn) == len(turns), (where, len(drawn), len(turns))
        assert all(any(f"({t})" in d for d in drawn) for t in turns), drawn
    bar = page.locator(f"{BARS}[aria-label*='(cw-1)']").first  # on the Overview: opens Runs on it
    bar.click()
    page.wait_for_function("() => location.pathname.endsWith('/runs')", timeout=30_000)
    settle(page)
    assert "turn=cw-1" in page.evaluate(HERE), page.evaluate(HERE)
    opened = page.locator("[data-testid='stExpander'] details[open] summary")
    opened.first.wait_for(timeout=30_000)
    assert any("(cw-1)" in t and "linked" in t for t in opened.all_inner_texts()), opened.all_inner_texts()
    opened_in_view(page, "cw-1")
    page.locator("[data-testid='stMain']").evaluate("m => m.scrollTo(0, 0)")  # back up to the timeline
    page.locator(f"{BARS}[aria-label*='(ms-1)']").first.click()  # on Runs: that run chosen, that turn open
    page.wait_for_function("() => location.search.includes('turn=ms-1')", timeout=30_000)
    settle(page)
    assert "run=run-market-sizing" in page.evaluate(HERE)
    assert any("(ms-1)" in t for t in opened.all_inner_texts()), opened.all_inner_texts()
    opened_in_view(page, "ms-1")
    shot(page, "runs-clicked-turn-in-view")
    assert page.locator("[data-testid='stException']").count() == 0


def test_a_timeline_of_few_runs_draws_bars_tall_enough_to_see(page, demo_app):
    """#39.5, found by a trial: with one or two runs the chart's legends took its whole height (its height held
    them, fitted), and every bar was drawn 0 px tall; the rows' height is now the rows' alone (fit-x)."""
    for where in ("runs?org=globex&as=ines", "?org=globex&as=ines", "runs"):
        goto(page, where)
        bars(page)
        heights = page.locator(BARS).evaluate_all("ps => ps.map(p => p.getBoundingClientRect().height)")
        assert heights and min(heights) >= 10, (where, heights)


def test_a_new_turn_appears_on_the_timeline_as_the_agent_opens_it(page, demo_app):
    goto(page, "runs")
    before = len(bars(page))
    svc = MemoryService(make_engine(demo_app.db))
    try:
        svc.start_run("run-live", org="acme", person="lee", workflow="company_profile")
        svc.open_turn("turn-live", run="run-live", request={"text": "Who makes our grippers?", "claims": []})
    finally:
        svc.engine.dispose()
    page.wait_for_function(f"() => document.querySelectorAll({BARS!r}).length === {before + 1}", timeout=30_000)
    assert any("Who makes our grippers? (turn-live)" in d and "open" in d for d in bars(page))
    settle(page)
    chart = page.locator("[data-testid='stVegaLiteChart']").first
    chart.scroll_into_view_if_needed()
    painted(page)
    chart.screenshot(path=str(ARTIFACTS / "runs-timeline.png"))  # docs/img/runs-timeline.png, the README's
    shot(page, "runs-timeline-page")


def test_a_past_moment_on_the_overview_is_said_changed_by_a_change_not_by_a_heartbeat(page, demo_app):
    """#39.8: an MCP server's heartbeat (every 5 s) moves memory's version and is no moment: a past moment
    opened on the Overview said "Memory has changed since this moment was drawn" within seconds."""
    goto(page, "?at=5")
    changed = page.get_by_text("Memory has changed since this moment was drawn")
    svc = MemoryService(make_engine(demo_app.db))
    try:
        svc.agent_server_started("srv-beat", host="elsewhere", pid=1, transport="http", now=0.0)
        svc.agent_server_alive("srv-beat", now=5.0)
        with pytest.raises(PlaywrightTimeout):  # not said for four of the live looks (pages/_ui.LIVE_EVERY)
            changed.first.wait_for(timeout=2_000)
        svc.set_settings("acme", by="dana", settings={"LearnFromUsers": False})  # a moment
        changed.first.wait_for(timeout=30_000)
    finally:
        svc.engine.dispose()


#: In the tables shown: each line broken inside a word (a letter or digit on both sides of the break, in a token
#: that is no address or key: one without "/", ":" or "."), as the text around it with `|` at the break, and each
#: table wider than its frame (it would scroll sideways). An address may break where it fits no line.
BROKEN_WORDS = """() => {
  const word = /[\\p{L}\\p{N}]/u, address = /[\\/:.]/, inside = [], sideways = [];
  const tables = [...document.querySelectorAll('[data-testid="stTable"]')].filter(t => t.offsetParent);
  for (const t of tables) {
    if ([t, ...t.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1)) sideways.push(t.innerText.slice(0, 40));
    for (const cell of t.querySelectorAll('th, td')) {
      const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      let before = null, node;
      while ((node = walk.nextNode())) {
        for (let i = 0; i < node.data.length; i++) {
          const r = document.createRange();
          r.setStart(node, i);
          r.setEnd(node, i + 1);
          const box = r.getClientRects()[0];
          if (!box) continue;
          const token = node.data.slice(0, i).split(/\\s/).pop() + node.data.slice(i).split(/\\s/)[0];
          if (before && box.top > before.top + 2 && word.test(before.ch) && word.test(node.data[i]) && !address.test(token))
            inside.push(node.data.slice(Math.max(0, i - 12), i) + '|' + node.data.slice(i, i + 8));
          before = {top: box.top, ch: node.data[i]};
        }
      }
    }
  }
  return {tables: tables.length, inside, sideways};
}"""


def test_a_turn_s_records_wrap_at_spaces_not_inside_words(page, demo_app):
    """#39.5, found by a trial: the records table broke words ("Recor d", "docu ment": 45 breaks inside words at
    1024 px, 9 at 1400, on 06e9715): its cells could break anywhere (CSS `overflow-wrap: anywhere`), so the browser
    narrowed short columns below their words. Headers and a row's key keep their words whole, and the records
    table is four columns (origin, reliability and nested work beside the source), so its words fit whole, and
    no table is wider than its frame, at 1024 and 1400 px."""
    for width in (1024, 1400):
        page.set_viewport_size({"width": width, "height": 1000})
        goto(page, "runs?run=run-company-profile&turn=cp-1")  # 15 records: web addresses, documents, tools, a person
        records = page.locator("[data-testid='stTable']:visible").filter(has_text="Excerpt").first
        records.wait_for(timeout=30_000)
        measured = page.evaluate(BROKEN_WORDS)
        records.scroll_into_view_if_needed()
        painted(page)
        records.screenshot(path=str(ARTIFACTS / f"runs-records-{width}.png"))
        assert measured["tables"] >= 1 and measured["inside"] == [] and measured["sideways"] == [], (width, measured)


# --- runs at a glance, read at a glance (#39, a trial's findings on 72b85e3 at 1400 x 1000) ---------------------

TIMELINE = "[data-testid='stVegaLiteChart']:has(g.turns_marks)"

#: The timeline as drawn: each legend entry's symbol (width, height) by its label, a record's tick, the rows'
#: labels (font size in px, the lightness of their fill, 0 black to 1 white) and the words under the rows.
DRAWN = """(chart) => {
  const size = e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; };
  const legend = Object.fromEntries([...chart.querySelectorAll('g.role-legend-symbol path')]
    .map(p => [p.parentElement.parentElement.textContent.trim(), size(p)]));
  const light = e => { const [r, g, b] = getComputedStyle(e).fill.match(/[\\d.]+/g).map(Number); return (r + g + b) / 765; };
  const labels = [...chart.querySelectorAll('g.role-axis-label text')]
    .map(t => [t.textContent, parseFloat(getComputedStyle(t).fontSize), light(t)]);
  const said = [...chart.querySelectorAll('g.said_marks text')].map(t => t.textContent).filter(Boolean);
  return {legend, tick: size(chart.querySelector('g.record_marks path')), labels, said};
}"""

#: While a bar is pointed at: the other bars each hidden at its centre by something not of the chart (a tooltip's
#: box), their opacity, and the bars outlined.
POINTED = """(chart) => {
  const bars = [...chart.querySelectorAll('g.turns_marks path')];
  const hidden = bars.filter(p => { const r = p.getBoundingClientRect();
    const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return !chart.contains(at); });
  return {hidden: hidden.map(p => p.getAttribute('aria-label')),
          faded: bars.filter(p => Number(getComputedStyle(p).opacity) < 1).length,
          outlined: bars.filter(p => p.getAttribute('stroke')).map(p => p.getAttribute('aria-label'))};
}"""


def test_the_timeline_reads_at_a_glance_and_pointing_at_a_bar_hides_none_of_the_others(page, demo_app):
    """#39, found by a trial: the legend drew "record" as a triangle (records are upright ticks); the runs' names
    were small and grey; pointing at a bar opened a tooltip's box over the bars beside it, which showed through it
    near white (pointing at the newest turn hid 4 of 19). Now the legend's record is an upright tick as drawn, the
    names 12 px or more in the page's dark text, and the bar pointed at is outlined and said under the rows."""
    goto(page, "runs")
    chart = page.locator(TIMELINE).first
    bars(page)
    drawn = chart.evaluate(DRAWN)
    (w, h), (tick_w, tick_h) = drawn["legend"]["record"], drawn["tick"]
    assert h >= 3 * w and tick_h >= 3 * tick_w, drawn["legend"]  # upright, as the ticks in the bars are
    assert drawn["legend"]["read"][0] > 3 * w  # a read's mark is not a tick
    assert len(drawn["labels"]) >= 10, drawn["labels"]  # a row a run, each named
    assert all(px >= 12 and light < 0.35 for _, px, light in drawn["labels"]), drawn["labels"]
    assert drawn["said"] == []  # nothing pointed at yet
    newest = page.locator(BARS).first  # the top right bar: a tooltip's box fell left, over the turns before it
    box = newest.bounding_box()
    page.mouse.move(box["x"] + 3, box["y"] + box["height"] / 2)
    page.wait_for_function(  # said under the rows, or (as before #39) a tooltip's box opened
        "(c) => [...document.querySelectorAll(c + ' g.said_marks text')].some(t => t.textContent)"
        " || !!document.querySelector('#vg-tooltip-element.visible')",
        arg=TIMELINE,
    )
    pointed = chart.evaluate(POINTED)
    assert pointed["hidden"] == [] and pointed["faded"] == 0, pointed
    assert pointed["outlined"] == [newest.get_attribute("aria-label")]
    [said] = chart.evaluate(DRAWN)["said"]
    assert said == newest.get_attribute("aria-label") and re.search(r"\) · \w+ · \d+ records?, \d+ reads?$", said)
    chart.screenshot(path=str(ARTIFACTS / "runs-timeline-pointed.png"))


def test_the_overview_shows_its_runs_first_under_a_heading(page):
    """#39, found by a trial: the Overview drew its timeline with no heading 1,400 px down the page, under the
    time control, the map, Settings and People: a product team opening it did not see its runs. It is the first
    thing under the title now, in the top half of a 1400 x 1000 window, under "Runs at a glance"."""
    goto(page, "")
    chart = page.locator(TIMELINE).first
    chart.locator("g.turns_marks path").first.wait_for(timeout=30_000)
    top = chart.evaluate("c => c.getBoundingClientRect().top")
    heading = page.locator("h3", has_text="Runs at a glance").first
    assert heading.evaluate("h => h.getBoundingClientRect().bottom") <= top < 500, top
    first = page.locator("[data-testid='stMain'] h3").first.inner_text()
    assert first.startswith("Runs at a glance"), first  # before Memory through time
    shot(page, "overview-runs-first")


def test_each_cause_on_a_weight_through_time_is_marked_apart_from_the_line(page, demo_app):
    """#39, found by a trial: on Fact weights a disputed step's marker was a light blue triangle on the blue line,
    nearly invisible. Each cause has a colour of its own, none the line's, and the legend shows each as marked."""
    svc = MemoryService(make_engine(demo_app.db))
    try:
        fact = next(r["id"] for r in svc.facts_table("acme", graphs=("world",)) if r["status"] == "disputed")
    finally:
        svc.engine.dispose()
    goto(page, f"fact-weights?graph=world&fact={fact}")
    chart = page.locator("[data-testid='stVegaLiteChart']:has(g.mark-line)").first
    chart.locator("g.mark-symbol.role-mark path").first.wait_for(timeout=30_000)
    drawn = chart.evaluate("""(c) => ({
      line: c.querySelector('g.mark-line path').getAttribute('stroke'),
      marks: [...c.querySelectorAll('g.mark-symbol.role-mark path')].map(p => p.getAttribute('fill')),
      legend: [...c.querySelectorAll('g.role-legend-symbol path')].map(p => p.getAttribute('fill')),
    })""")
    assert len(drawn["marks"]) >= 2 and len(set(drawn["marks"])) >= 2, drawn  # taught, then disputed: two causes
    assert drawn["line"] not in drawn["marks"] + drawn["legend"], drawn
    assert set(drawn["marks"]) <= set(drawn["legend"]) and len(set(drawn["legend"])) == len(drawn["legend"]), drawn
    chart.scroll_into_view_if_needed()
    painted(page)
    chart.screenshot(path=str(ARTIFACTS / "weights-through-time-causes.png"))
