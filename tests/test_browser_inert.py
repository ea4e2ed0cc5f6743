"""#26, point 3, in Chromium: every page of a memory whose texts are Markdown and HTML pointing at
another host, and the links that name such text, load nothing from that host and draw no link to
it. (test_inert.py holds every Markdown string of every page to the same in AppTest.)"""

from __future__ import annotations

import json
import urllib.parse

import pytest
from chromium import ARGS, CHROMIUM, IDLE, marks, painted
from helpers import PAGES
from payloads import EVIL, P, payload_scenario
from served import served

pytestmark = marks(postgres_pass=True)  # the PostgreSQL pass is the shorter
PATHS = ["", *list(PAGES)[1:]]  # the Overview at `/`
LINKED = [
    f"rules?rule={urllib.parse.quote(P)}",
    "?at=4&from=2",
    "graphs?at=4&from=2",
    f"runs?run={urllib.parse.quote('r2' + P)}",
    "fact-weights?graph=user",
]


def elsewhere(url: str) -> bool:
    return urllib.parse.urlsplit(url).hostname == EVIL


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inert-browser")
    scenario = tmp / "payload.json"
    scenario.write_text(json.dumps(payload_scenario()))
    with served(tmp, scenario) as (url, _):
        yield url


@pytest.fixture(scope="module")
def visited(app_url):
    """Each page and link opened in one browser: the requests to other hosts and the links drawn to them."""
    from playwright.sync_api import sync_playwright

    asked: list[tuple[str, str]] = []
    now = [""]
    linked: dict[str, list[str]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.on("request", lambda r: asked.append((now[0], r.url)) if elsewhere(r.url) else None)
        # Nothing leaves the machine: ARGS send every other host to a proxy that is not there.
        pg = context.new_page()
        for path in PATHS + LINKED:
            now[0] = path
            pg.goto(f"{app_url}/{path}")
            pg.locator("[data-testid='stSidebar']").get_by_text("Memory in use").wait_for(timeout=60_000)
            pg.wait_for_selector(IDLE, timeout=60_000)
            painted(pg)
            hrefs = pg.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
            frames = [f for f in pg.frames if f != pg.main_frame]
            for f in frames:
                hrefs += f.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
            linked[path] = [h for h in hrefs if elsewhere(h)]
        browser.close()
    return asked, linked


def test_no_page_loads_anything_from_another_host(visited):
    asked, _ = visited
    assert asked == [], sorted({(p, u[:60]) for p, u in asked})


@pytest.mark.parametrize("path", PATHS + LINKED)
def test_no_page_draws_a_link_to_another_host(visited, path):
    _, linked = visited
    assert linked[path] == []
