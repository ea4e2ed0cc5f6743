"""What the Chromium tests share: the browser, the demo served by `streamlit run`, a page whose every
request is checked, and waits on conditions (the app's script ended, the browser painted, the
drawing stands still), never fixed sleeps.

AppTest runs no JavaScript; these tests see the drawn graph and real clicks. With CI=true a
missing browser fails; elsewhere the tests skip and say why. No request may leave 127.0.0.1.
The fixtures (tests/conftest.py registers them) are module-scoped: each module that uses them
serves its own app and starts its own browser, so modules can run on different pytest-xdist workers.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

import pytest
from served import served

from memory_core import MemoryService, make_engine

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # without Playwright every test here is skipped
    PlaywrightTimeout = TimeoutError  # type: ignore[misc,assignment]

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # Nothing leaves the machine: a request to any host but 127.0.0.1 goes to a proxy that is not there
    # (loopback's port 9) and fails. The tests record such requests as the page makes them (`page`);
    # they are not intercepted one by one, since Playwright's routing turns the browser's cache off
    # (each page load then fetched Streamlit's scripts again: a third of these tests' CPU).
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=127.0.0.1",
]


def _browser_missing() -> str | None:
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    if not os.path.exists(CHROMIUM):
        return f"no Chromium at {CHROMIUM} (make test installs Debian's chromium when it can)"
    return None


missing = _browser_missing()


def marks(*, postgres_pass: bool = False) -> list[pytest.MarkDecorator]:
    """A browser test module's marks. With CI=true a missing browser fails the module. The browser
    runs the app on a SQLite file whichever backend the suite is on: once is enough (backend_free),
    in the SQLite pass, or in the PostgreSQL pass where `postgres_pass` evens the two passes' times.
    A module's tests share one served app and one browser, on one pytest-xdist worker (`--dist
    loadfile`: a module's tests all go to one worker)."""
    if missing and os.environ.get("CI") == "true":
        raise RuntimeError(f"browser tests cannot run in CI: {missing}")
    return [
        pytest.mark.skipif(missing is not None, reason=missing or ""),
        pytest.mark.backend_free,
        *([pytest.mark.postgres_pass] if postgres_pass else []),
    ]


class App(NamedTuple):
    url: str
    db: str  # the database the served app uses, for a test that reads or changes it from outside


@pytest.fixture(scope="module")
def demo_app(tmp_path_factory) -> Iterator[App]:
    """`streamlit run app.py` on a free loopback port over a fresh database holding the demo."""
    tmp = tmp_path_factory.mktemp("browser")
    with served(tmp, ROOT / "sample_data" / "demo.json") as (url, env):
        yield App(url, env["MEMORY_DATABASE_URL"])


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def warm(shared_context, demo_app):
    """Open the default page once: Streamlit shows a spurious "Page not found" dialog on the very
    first request to another page after start-up (streamlit/streamlit#9992, upstream)."""
    pg = shared_context.new_page()
    pg.goto(demo_app.url)
    settle(pg)
    pg.close()
    return demo_app.url


def local(url: str) -> bool:
    return url.startswith(("data:", "blob:", "about:")) or urlsplit(url).hostname == "127.0.0.1"


@pytest.fixture(scope="module")
def shared_context(browser):
    """One browser context for a module's pages: its HTTP and code caches hold Streamlit's scripts
    from the first page on (a context of its own per test fetched and compiled them each time). Each
    page is a session of its own all the same: Streamlit keeps a session per connection, not per cookie."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield ctx
    ctx.close()


@pytest.fixture
def page(shared_context, warm):
    """A page whose every request is checked: any host but 127.0.0.1 fails the test (and the request
    fails: ARGS). The pages a test opened are closed after it, and the context's cookies cleared."""
    ctx = shared_context
    outside: list[str] = []
    ctx.on("request", (watch := lambda r: None if local(r.url) else outside.append(r.url)))
    pg = ctx.new_page()
    pg.base = warm  # type: ignore[attr-defined]
    yield pg
    for opened in ctx.pages:
        opened.close()
    ctx.remove_listener("request", watch)
    ctx.clear_cookies()
    assert outside == [], f"requests left 127.0.0.1: {outside}"


RUNNING = "[data-testid='stApp'][data-test-script-state='running']"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def painted(pg) -> None:
    """Until the browser painted twice: what the page just received is on the screen."""
    pg.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")


def settle(pg) -> None:
    """Until the app's script ran to its end and the browser painted what it sent. A click reaches
    the server a moment later, so the app may still say notRunning right after it: wait (briefly)
    for the run to begin, then for it to end. Conditions only, no fixed sleep."""
    try:
        pg.wait_for_selector(RUNNING, timeout=300)
    except PlaywrightTimeout:
        pass  # it ran and ended before we looked, or nothing reran
    pg.wait_for_selector(IDLE, timeout=60_000)
    painted(pg)


def shot(pg, name: str, at=None) -> None:
    """A screenshot under artifacts/screenshots; `at` (a locator) is scrolled into view first."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    if at is not None:
        at.scroll_into_view_if_needed()
        painted(pg)
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def goto(pg, path: str) -> None:
    """Open `path` of the app and wait until its script drew the title and the sidebar and ended."""
    pg.goto(f"{pg.base}/{path}")
    pg.locator("h1").first.wait_for(timeout=30_000)
    pg.locator("[data-testid='stSidebar']").get_by_text("Memory in use").wait_for(timeout=30_000)
    settle(pg)


def no_page_not_found(pg) -> None:
    assert pg.get_by_text("Page not found").count() == 0


def in_view(pg, heading: str) -> None:
    """Until the heading that starts with `heading` is on the screen (its top within the window)."""
    pg.wait_for_function(
        """(t) => { const h = [...document.querySelectorAll('h1, h2, h3')].find(e => e.textContent.trim().startsWith(t));
             if (!h) return false; const r = h.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight - 100; }""",
        arg=heading,
        timeout=30_000,
    )


def frames(pg, n: int) -> None:
    """Until the browser drew `n` more frames (an interval measured in the page's own frames)."""
    pg.evaluate(
        "(n) => new Promise(r => { const step = k => k ? requestAnimationFrame(() => step(k - 1)) : r(true); step(n); })",
        n,
    )


def drawn(pg) -> None:
    """Until the drawing's layout stands: vis-network's positions the same over two frames."""
    pg.frame_locator("iframe").first.locator("canvas").first.wait_for(timeout=30_000)
    still(pg.frame_locator("iframe").first.locator("body"))


def still(body) -> None:
    """Until the positions of the drawing in `body` are the same over two frames."""
    for _ in range(300):
        same = body.evaluate(
            """() => new Promise(r => { const a = JSON.stringify(network.getPositions());
                 requestAnimationFrame(() => requestAnimationFrame(() => r(JSON.stringify(network.getPositions()) === a))); })"""
        )
        if same:
            return
    raise AssertionError("the drawing kept moving")


def tooltip(pg) -> str:
    """The text of vis-network's tooltip once it shows (its delay is vis-network's), or ''."""
    body = pg.frame_locator("iframe").first.locator("body")
    shown = "() => { const t = document.querySelector('div.vis-tooltip'); return t && t.style.visibility === 'visible' ? t.innerText : ''; }"
    try:
        pg.frame_locator("iframe").first.locator("div.vis-tooltip").first.wait_for(state="visible", timeout=1_500)
    except PlaywrightTimeout:
        return ""
    return str(body.evaluate(shown))


def no_tooltip(pg) -> None:
    """The pointer moved away: until no tooltip shows over the drawing."""
    pg.mouse.move(0, 0)
    tip = pg.frame_locator("iframe").first.locator("div.vis-tooltip")
    if tip.count():
        tip.first.wait_for(state="hidden", timeout=5_000)


def drawn_nodes(pg) -> int:
    frame = pg.frame_locator("iframe").first
    frame.locator("canvas").first.wait_for(timeout=30_000)
    return int(frame.locator("body").evaluate("() => network.body.data.nodes.length"))


def said_nodes(pg) -> int:
    text = pg.get_by_text(re.compile(r"Opened with \d+ entities")).first.inner_text()
    return int(re.search(r"Opened with (\d+) entities", text).group(1))  # type: ignore[union-attr]


def drawn_edges(pg) -> list[dict]:
    """The edges of the Graphs page's drawing, as vis-network holds them."""
    frame = pg.frame_locator("iframe").first
    frame.locator("canvas").first.wait_for(timeout=30_000)
    return frame.locator("body").evaluate(
        "() => network.body.data.edges.get().map(e => ({title: e.title, color: e.color, dashes: e.dashes}))"
    )


#: The drawing's measures (issue #25), read from vis-network's own geometry: dots overlapping (centres
#: closer than the sum of their radii), names whose drawn boxes overlap, the spread (95th percentile of the
#: distance to the centre over the median), the smallest name and relation font at the fit, in pixels.
GEOMETRY = """() => { const pos = network.getPositions(), s = network.getScale(), ids = Object.keys(pos), N = network.body.nodes;
  let overlaps = 0, names = 0;
  for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < ids.length; j++) {
    const a = pos[ids[i]], b = pos[ids[j]];
    if (Math.hypot(a.x - b.x, a.y - b.y) < N[ids[i]].options.size + N[ids[j]].options.size) overlaps++; }
  const cx = ids.reduce((t, k) => t + pos[k].x, 0) / ids.length, cy = ids.reduce((t, k) => t + pos[k].y, 0) / ids.length;
  const d = ids.map(k => Math.hypot(pos[k].x - cx, pos[k].y - cy)).sort((a, b) => a - b);
  const q = f => d[Math.min(d.length - 1, Math.floor(f * (d.length - 1)))];
  const named = ids.filter(k => (N[k].options.label || "").trim()), boxes = named.map(k => N[k].labelModule.size);
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.left < b.left + b.width && b.left < a.left + a.width && a.top < b.top + b.height && b.top < a.top + a.height) names++; }
  const edges = Object.values(network.body.edges).filter(e => e.options.label);
  return {nodes: ids.length, named: named.length, overlaps, names, spread: q(0.95) / q(0.5),
          font: Math.min(...named.map(k => N[k].options.font.size * s)),
          edge_font: Math.min(100, ...edges.map(e => e.options.font.size * s))}; }"""


# --- history (issue #17, R32): the time control, a diff of two moments, a weight through time -------


class Moments:
    """The moments these tests visit, read from the memory the server holds (never numbers written
    down from the demo): a turn's end, the map's count of facts then, the corrections' span, and each
    moment's place in the list the Overview's time control steps through (acme's moments and those of
    no organization)."""

    def __init__(self, url: str) -> None:
        svc = MemoryService(make_engine(url))
        self.end = {t: svc.resolve_moment(t) for t in ("cp-1", "cw-1", "cw-2", "lr-1")}
        self.facts = {n: svc.map_at("acme", n)["facts"] for n in self.end.values()}  # the map's count then (R18)
        corrections = [m["n"] for m in svc.moments(org="acme") if m["what"] in ("dispute", "retract")]
        self.corrections = (min(corrections) - 1, max(corrections) + 1)  # from before the first to after the last
        listed = svc.moment_numbers(org="acme")
        self.listed = listed if listed[:1] == [0] else [0, *listed]  # the list starts at 0, before anything
        svc.engine.dispose()

    def place(self, n: int) -> int:
        """Where moment `n` stands in the time control's list ("5 of 69 moments listed")."""
        return self.listed.index(n) + 1

    def after(self, n: int) -> int:
        """The next moment listed after `n`."""
        return self.listed[self.listed.index(n) + 1]


@pytest.fixture(scope="module")
def moments(demo_app) -> Moments:
    return Moments(demo_app.db)


def moment_shown(pg) -> int:
    """The place in the list of the moment the Overview's time control shows, as its caption says it
    ("4 · … · 5 of 69 moments listed")."""
    text = pg.get_by_text(re.compile(r"\d+ of \d+ moments listed")).first.inner_text()
    return int(re.search(r"(\d+) of \d+ moments listed", text).group(1))  # type: ignore[union-attr]
