"""End-to-end in a real Chromium (tests/chromium.py): a smoke per page, the links between pages,
the three user stories (the researcher's, the owner's, the notebook's), the live Runs page and the
Overview's time control. The drawing is tests/test_browser_graphs.py's; what AppTest already
covers (tests/test_dashboard.py) is not repeated here.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import httpx2
import pytest
from chromium import (
    PlaywrightTimeout,
    goto,
    marks,
    moment_shown,
    no_page_not_found,
    settle,
    shot,
)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from served import mcp_http

from memory_core import MemoryService, make_engine
from pages._links import OLD_ADDRESSES
from pages._links import PAGES as NAVIGATION

pytestmark = marks()
#: A smoke per page of app.py's: the address opened (a link's, with its parameters, where pages link
#: to it) and the start of the title it shows (/home opens the Overview, as links name it).
QUERIES = {"fact-weights": "?graph=flow", "runs": "?run=run-market-sizing", "rules": "?rule=R7"}
PAGES = {"home": ("home", "Acme Robotics")} | {
    p.address: (p.address + QUERIES.get(p.address, ""), p.title) for p in NAVIGATION[1:]
}


@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_opens_from_its_link_without_exception(page, name):
    path, title = PAGES[name]
    # A page opens at every address links name it by (pages/_links.OLD_ADDRESSES), with their choices.
    query = QUERIES.get(name, "")
    olds = [old + query for old, new in OLD_ADDRESSES.items() if new == ("_overview" if name == "home" else name)]
    for address in dict.fromkeys([*olds, path]):
        goto(page, address)
        assert set(parse_qsl(query[1:])) <= set(parse_qsl(urlsplit(page.url).query)), (address, page.url)
        no_page_not_found(page)
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("h1").first.inner_text().strip().startswith(title), address
        assert page.locator("[data-testid='stSidebar']").get_by_text("Memory in use").count() == 1
    # Our chrome: no Deploy button, no developer menu (.streamlit/config.toml toolbarMode).
    assert page.get_by_role("button", name="Deploy").count() == 0
    assert page.locator("[data-testid='stMainMenu']").count() == 0 or page.get_by_text("Clear cache").count() == 0
    shot(page, f"page-{name}")


def test_researcher_story_weight_to_evidence_to_run_and_rule(page):
    """A researcher opens Fact weights (World first), reads the arithmetic and each support's
    excerpt, follows a rule number to its rule, and a record to its run on the Runs page."""
    goto(page, "fact-weights")
    page.get_by_text("The arithmetic").first.wait_for(timeout=30_000)
    assert page.get_by_role("radio", name=re.compile("World")).is_checked()
    text = page.locator("p").filter(has_text="The arithmetic").first.inner_text()
    assert re.search(r"L = .* = [−-]?[0-9.]+; w = .* = [01]\.[0-9]{3}; status: (active|disputed|retracted)", text), text
    shot(page, "story-researcher-weights", page.locator("p").filter(has_text="The arithmetic").first)
    # A rule number is a link to its rule, its title on hover.
    link = page.locator("a[href*='rules?rule=R26']").first
    assert link.get_attribute("title", timeout=10_000).startswith("R26: ")
    page.goto(f"{page.base}/{link.get_attribute('href').lstrip('/')}")
    settle(page)
    page.get_by_text("The rule you followed a link to").first.wait_for(timeout=30_000)
    shot(page, "story-researcher-rule")
    # A record, as the evidence table links it, opens on the Runs page, first in its turn.
    goto(page, "runs?run=run-supplier-contracts&record=" + "sc-1%231")
    no_page_not_found(page)
    page.get_by_text("(linked) is first").first.wait_for(timeout=30_000)
    page.get_by_text("teaches nothing").first.wait_for(timeout=30_000)
    shot(page, "story-researcher-runs")


def test_owner_story_what_if_then_apply(page):
    """An owner replays the organization's history with shortcuts off, sees steps that a shortcut
    skipped run instead, applies the settings, and reads the change in the audit log."""
    goto(page, "settings")
    page.get_by_text("What the runs would do").first.wait_for(timeout=60_000)
    page.get_by_text("Nothing differs yet").first.wait_for(timeout=30_000)
    switches = page.get_by_role("switch", name=re.compile("LearnFromUsers"))
    assert switches.count() == 2
    page.locator("label").filter(has_text=re.compile("^LearnFromUsers$")).last.click()
    settle(page)
    page.get_by_text(re.compile("Claims kept out by R8c")).first.wait_for(timeout=60_000)
    shot(page, "story-owner-what-if", page.get_by_text("What the runs would do").first)
    page.get_by_role("button", name=re.compile("Apply these settings")).click()
    settle(page)
    page.get_by_role("button", name="Apply", exact=True).click()  # asked first (#25)
    settle(page)
    page.get_by_text(re.compile(r"^Applied: LearnFromUsers off")).first.wait_for(timeout=60_000)
    page.get_by_text(re.compile(r"LearnFromUsers on → off")).first.wait_for(timeout=60_000)
    shot(page, "story-owner-applied", page.get_by_text("Audit").first)


def test_notebook_follows_the_demo_story_and_a_reload_keeps_it(page):
    """Issue #16: the 214-cell demo opens from a link, each "Run next" shows the cell just run, marked,
    in view at the top of the cells; a reload of the address reopens the notebook where it was."""
    goto(page, "notebook?sample=demo.json")
    run_next = page.get_by_role("button", name="Run next")
    run_next.wait_for(timeout=60_000)
    assert page.locator("[data-testid='stExpander']").count() < 60  # a window of cells, not 214 of them
    for n in range(3):
        run_next.click()
        settle(page)
        page.locator(".st-key-nb-just-run code", has_text=f"[{n}]").first.wait_for(timeout=60_000)
    just = page.locator(".st-key-nb-just-run")
    assert just.count() == 1 and just.get_by_text("Just run").is_visible()
    box = just.bounding_box()
    assert box is not None and 0 <= box["y"] < 1000, box  # inside the viewport, with no scrolling
    assert "nb=" in page.url and page.locator("[data-testid='stException']").count() == 0
    shot(page, "notebook-story")
    page.reload()
    settle(page)
    page.locator(".st-key-nb-just-run code", has_text="[2]").first.wait_for(timeout=60_000)
    assert page.get_by_text("3 of 214 cells run").first.is_visible()
    shot(page, "notebook-story-reloaded")
    # #26, point 12: a second tab on the same notebook (its link) sees the first tab's run within a
    # second or two, with no click of its own, and is told
    other = page.context.new_page()  # opened last, so in front: a tab behind may be throttled
    try:
        other.goto(page.url)
        settle(other)
        other.get_by_text("3 of 214 cells run").first.wait_for(timeout=60_000)
        page.get_by_role("button", name="Run next").click()
        page.get_by_text("4 of 214 cells run").first.wait_for(timeout=60_000)
        other.get_by_text("4 of 214 cells run").first.wait_for(timeout=20_000)
        other.get_by_text("This notebook was changed in another tab or window").first.wait_for(timeout=20_000)
    finally:
        other.close()


def clipped(button) -> bool:
    """Whether a button's label is cut (an ellipsis, or text wider than the box showing it)."""
    return bool(
        button.evaluate(
            "e => [e, ...e.querySelectorAll('*')].some(n => n.scrollWidth > n.clientWidth + 1 && n.clientWidth > 0)"
        )
    )


def test_notebook_cell_buttons_stay_readable_at_1024_px(page):
    """#15, point 4: at 1024 px wide each cell's buttons keep their symbol on one line, unclipped."""
    page.set_viewport_size({"width": 1024, "height": 900})
    goto(page, "notebook?sample=completed_failed_cancelled.json")
    page.get_by_role("button", name="Run next").wait_for(timeout=60_000)
    buttons = page.locator(
        ".st-key-to-0 button:visible, .st-key-up-0 button:visible, .st-key-down-0 button:visible, "
        ".st-key-del-0 button:visible"
    )
    assert buttons.count() >= 4
    for i in range(buttons.count()):
        b = buttons.nth(i)
        box = b.bounding_box()
        assert box is not None and box["width"] >= 28 and box["height"] <= 60, box
        assert not clipped(b)
    for name in ("Run next", "Run all", "Reset", "Undo", "Download scenario", "Download state"):
        button = page.get_by_role("button", name=name).first
        box = button.bounding_box()
        assert box is not None and box["height"] <= 60 and not clipped(button), (name, box)  # whole, on one line
    shot(page, "notebook-1024")


def click_until_heard(page, button: str, then: str, tries: int = 3) -> None:
    """Click `button` until the button `then` replaces it (the click was heard): a click that lands
    while a rerun (the timer's, or a link's switch) replaces the button can be lost (issue #25)."""
    for _ in range(tries):
        page.get_by_role("button", name=button).click()
        try:
            page.get_by_role("button", name=then).wait_for(timeout=5_000)
            return
        except PlaywrightTimeout:
            continue


def test_overview_time_control_steps_plays_and_is_a_link(page, moments):
    goto(page, "")
    slider = page.get_by_role("slider").first
    slider.wait_for(timeout=30_000)
    last = moment_shown(page)
    assert "(now)" in slider.get_attribute("aria-valuetext") and "at=" not in page.url
    page.get_by_role("button", name="◀ Back").click()
    settle(page)
    page.wait_for_function("() => /[?&]at=\\d+/.test(location.href)", timeout=30_000)
    assert moment_shown(page) == last - 1
    cp1 = moments.end["cp-1"]
    goto(page, f"home?at={cp1}")  # /home opens the Overview with the link's choices
    page.get_by_text("cp-1 completed in run-company-profile").first.wait_for(timeout=30_000)
    assert moment_shown(page) == moments.place(cp1)
    page.get_by_text(f"{moments.facts[cp1]} facts").first.wait_for(timeout=30_000)  # the map as it stood then (R18)
    shot(page, "history-overview-moment")
    settle(page)
    click_until_heard(page, "▶ Play", "⏸ Pause")  # playing
    # The fragment's timer steps on by itself: two moments later with no click.
    two_on = moments.listed[moments.place(cp1) + 1]
    page.wait_for_function(
        f"() => Number((/[?&]at=(\\d+)/.exec(location.href) || [0, 0])[1]) >= {two_on}", timeout=30_000
    )
    click_until_heard(page, "⏸ Pause", "▶ Play")  # paused
    settle(page)
    stopped = moment_shown(page)
    at = re.search(r"[?&]at=(\d+)", page.url).group(1)  # type: ignore[union-attr]
    with pytest.raises(PlaywrightTimeout):  # paused: for as long as a step of play takes and more, nothing moves
        page.wait_for_function(f"() => !/[?&]at={at}\\b/.test(location.href)", timeout=2_500)
    assert moment_shown(page) == stopped and stopped >= moments.place(cp1) + 2
    assert page.locator("[data-testid='stException']").count() == 0
    shot(page, "history-overview-played")


def test_overview_compares_two_moments(page, moments):
    a, b = moments.end["cp-1"], moments.after(moments.end["lr-1"])
    goto(page, f"?at={b}&from={a}")
    said = page.get_by_text(re.compile(rf"From moment {a} .* to moment {b}")).first
    said.wait_for(timeout=30_000)
    assert re.search(r"\d+ added, \d+ gone, \d+ changed", said.inner_text())
    page.get_by_text(re.compile(r"The \d+ moments in between")).first.wait_for(timeout=30_000)
    page.locator("[data-testid='stDataFrame']").first.wait_for(timeout=30_000)  # the diff's tables drawn
    with_diff = page.locator("[data-testid='stDataFrame']").count()
    assert page.locator("[data-testid='stException']").count() == 0
    shot(page, "history-diff", page.get_by_text(re.compile(r"The \d+ moments in between")).first)
    first, last = moments.corrections  # five disputes and a retraction
    goto(page, f"?at={last}&from={first}")
    said = page.get_by_text(re.compile(rf"From moment {first} .* to moment {last}")).first
    said.wait_for(timeout=30_000)
    assert re.search(r"0 added, 0 gone, [1-9]\d* changed", said.inner_text())
    shot(page, "history-diff-corrections", page.get_by_text(re.compile(r"The \d+ moments in between")).first)
    goto(page, f"?at={b}")
    page.get_by_text(re.compile(rf"\b{moments.place(b)} of \d+ moments listed")).first.wait_for(timeout=30_000)
    assert page.get_by_text(re.compile(r"From moment")).count() == 0
    assert page.locator("[data-testid='stDataFrame']").count() < with_diff  # the diff's table was drawn


def test_fact_weight_through_time_is_drawn(page):
    goto(page, "fact-weights?graph=world&q=on_time_rate")  # a fact a turn taught, then Dana disputed
    title = page.get_by_text("Its weight through time").first
    title.wait_for(timeout=30_000)
    chart = page.locator("[data-testid='stVegaLiteChart']").first  # above the distribution's charts
    chart.wait_for(timeout=30_000)
    chart.locator("canvas, svg").first.wait_for(timeout=30_000)
    box = chart.bounding_box()
    assert box is not None and box["height"] > 150 and box["width"] > 300, box
    assert page.get_by_text(re.compile("Each numbered step is a moment that changed this weight")).count() == 1
    words = chart.evaluate("e => [...e.querySelectorAll('svg text')].map(t => t.textContent)")
    assert "Moment (memory's clock)" in words and "Weight" in words, words
    steps = chart.evaluate("e => [...e.querySelectorAll('g.mark-text.role-mark text')].map(t => t.textContent)")
    assert steps == ["1", "2"], steps  # each step numbered: the turn that taught it, then Dana's dispute
    assert page.locator("[data-testid='stException']").count() == 0
    shot(page, "history-weight", title)


def test_runs_shows_an_agent_teaching_over_http_without_a_reload(page, demo_app):
    """Issue #23: the Runs page open, an agent teaching through the MCP server over HTTP in the
    background: its turn, records and what it taught appear without a reload (the page is live)."""
    url = demo_app.db
    svc = MemoryService(make_engine(url))
    token = svc.issue_token("lee", org="acme")
    seen: dict[str, Any] = {}
    recorded, shown, ended = threading.Event(), threading.Event(), threading.Event()

    async def agent(base: str) -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with Client(streamable_http_client(base, http_client=http)) as c:
            run = (await c.call_tool("start_run", {"workflow": "company_profile"})).structured_content or {}
            opened = await c.call_tool("open_turn", {"run": run["run"], "request": "Who supplies our servos?"})
            seen["turn"] = turn = (opened.structured_content or {})["turn"]
            args = {"turn": turn, "origin": "web", "source": "https://n.example/", "excerpt": "x", "claims": [NORDIC]}
            await c.call_tool("record", args)
            seen["recorded"] = time.monotonic()
            recorded.set()
            await anyio.to_thread.run_sync(lambda: shown.wait(60))
            await c.call_tool("end_turn", {"turn": turn, "status": "completed"})
            seen["ended"] = time.monotonic()
            ended.set()

    try:
        with mcp_http(url) as base:
            goto(page, "runs")
            worker = threading.Thread(
                target=lambda: anyio.run(agent, base), daemon=True
            )  # Playwright owns this thread's loop
            worker.start()
            assert recorded.wait(60)
            turn = seen["turn"]
            page.get_by_text(re.compile(f"{turn}.*open, 2 records")).wait_for(timeout=30_000)
            seen["shown"] = time.monotonic()
            shown.set()
            assert ended.wait(60)
            page.get_by_text(re.compile(f"{turn}.*completed.*taught 1 World support")).wait_for(timeout=30_000)
            print(
                f"an agent's record shown {seen['shown'] - seen['recorded']:.2f} s after it committed; "
                f"its teaching {time.monotonic() - seen['ended']:.2f} s after the turn ended"
            )
            worker.join(30)
            said = page.locator("[data-testid='stMarkdownContainer']").all_inner_texts()
            assert any("via MCP: mcp 0.1.0" in t and "Nordic Servo AB" in t for t in said)
            assert page.locator("[data-testid='stException']").count() == 0
            shot(page, "runs-live-agent")
    finally:
        svc.engine.dispose()


NORDIC = {
    "graph": "world",
    "subject": {"name": "Nordic Servo AB", "kind": "organization"},
    "relation": "supplies",
    "object": {"name": "Acme Robotics", "kind": "organization"},
}
