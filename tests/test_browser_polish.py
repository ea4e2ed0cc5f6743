"""#25, section 2, in Chromium: what only a browser shows. At 1024 and at 1400 px no label is cut
(a button's, a switch's, a metric's, a chip's: nothing ends in an ellipsis), no table of text scrolls
sideways (its cells wrap), and the big grids show their key columns first; "Jump to" names the cell
now at its place after a delete; a rule link opens in the same tab, in the same session. Screenshots
of each view go to artifacts/screenshots/polish-*.png. Waits are on conditions, never fixed sleeps."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from chromium import ARGS, CHROMIUM, IDLE, marks, painted
from served import served

from memory_core import MemoryService, make_engine

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # without Playwright every test here is skipped
    PlaywrightTimeout = TimeoutError  # type: ignore[misc,assignment]

pytestmark = marks(postgres_pass=True)  # beside the PostgreSQL pass, to even the two
ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts" / "screenshots"
RUNNING = "[data-testid='stApp'][data-test-script-state='running']"
WIDTHS = (1024, 1400)

#: What is cut on the page: a text that ends in an ellipsis because its box is narrower than it
#: (a button's label, a switch's, a metric's, a chip's), a table of text wider than its frame (it
#: would scroll sideways), and each grid's first column headers (its key columns come first).
MEASURE = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const cut = [];
  for (const el of main.querySelectorAll('*')) {
    if (getComputedStyle(el).textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1 && el.innerText.trim()) {
      cut.push(el.innerText.trim().slice(0, 60));
    }
  }
  const sideways = [];
  for (const t of main.querySelectorAll('[data-testid="stTable"]')) {
    for (const el of [t, ...t.querySelectorAll('*')]) {
      if (el.scrollWidth > el.clientWidth + 1) { sideways.push(t.innerText.slice(0, 60)); break; }
    }
  }
  const grids = [...main.querySelectorAll('[data-testid="stDataFrame"]')].map(
    g => [...g.querySelectorAll('th[role="columnheader"]')].map(th => th.innerText.trim()));
  const tables = main.querySelectorAll('[data-testid="stTable"]').length;
  return {cut, sideways, grids, tables};
}"""


def settle(pg) -> None:
    """Until the app's script ran to its end and the browser painted what it sent."""
    try:
        pg.wait_for_selector(RUNNING, timeout=300)
    except PlaywrightTimeout:
        pass  # it ran and ended before we looked, or nothing reran
    pg.wait_for_selector(IDLE, timeout=60_000)
    # A component drawn for the first time loads its code first, a skeleton in its place meanwhile.
    pg.wait_for_function("() => !document.querySelector('[data-testid=stMain] [data-testid=stSkeleton]')")
    painted(pg)


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("polish-browser")
    with served(tmp, ROOT / "sample_data" / "demo.json") as (url, env):
        yield url, env["MEMORY_DATABASE_URL"]


@pytest.fixture(scope="module")
def tabs(app_url):
    """One browser context whose tabs the tests open: its caches hold Streamlit's scripts from the
    first tab on; each tab is a session of its own (Streamlit's sessions are per connection)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = b.new_context(viewport={"width": 1400, "height": 1000})
        warm = context.new_page()  # the first request after start-up may show "Page not found" (streamlit#9992)
        warm.goto(app_url[0])
        settle(warm)
        warm.close()
        yield context
        b.close()


@pytest.fixture(scope="module")
def demo(app_url) -> dict[str, str]:
    """What the views open, read from the served memory, not written down from the demo."""
    engine = make_engine(app_url[1])
    svc = MemoryService(engine)
    try:
        run = next(r for r in svc.runs("acme") if any(t["status"] in ("failed", "cancelled") for t in r["turns"]))
        turn = next(t for t in svc.run_detail("acme", run["id"])["turns"] if t["status"] in ("failed", "cancelled"))
        member = next(m["id"] for m in svc.members("acme") if m["role"] == "member")
        return {"run": quote(run["id"], safe=""), "record": quote(turn["records"][-1]["id"], safe=""), "member": member}
    finally:
        engine.dispose()


def opened(tabs, url: str, width: int, path: str, wait_for: str):
    """A fresh tab (a new session) at `width`, on `path`, once `wait_for` is drawn and the page settled."""
    pg = tabs.new_page()
    pg.set_viewport_size({"width": width, "height": 1000})
    pg.goto(f"{url}/{path}")
    pg.get_by_text(wait_for).first.wait_for(timeout=60_000)
    settle(pg)
    return pg


def shot(pg, name: str) -> Path:
    """The whole page: the app scrolls inside its main frame, so the window is made as tall as it first."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    tall = pg.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    pg.set_viewport_size({"width": pg.viewport_size["width"], "height": min(max(tall, 800), 6000)})
    settle(pg)
    path = ARTIFACTS / f"polish-{name}.png"
    pg.screenshot(path=str(path))
    return path


VIEWS = {
    # name: (path, a text drawn last, whether its World grid leads with Weight and Status)
    "overview": ("", "Sample scenarios", True),
    # every status's chip
    "fact-weights": ("fact-weights?status=active,disputed,retracted", "Its weight through time", True),
    "runs": ("runs?run={run}&record={record}", "(linked) is first", False),
    "settings": ("settings", "What the runs would do", False),
    "graphs": ("graphs?status=active,disputed,retracted", "Find an entity", False),
    "notebook-empty": ("notebook", "Load a sample or upload", False),
    "notebook": ("notebook?sample=demo.json", "Jump to", False),
}


def narrow_then_wide(pg) -> Iterator[int]:
    """The page at each width of WIDTHS in turn, narrowest first, as a reader widens the window: one
    page opened, measured at every width (a page opened afresh per width cost the suite 30 s)."""
    for width in WIDTHS:
        if pg.viewport_size["width"] != width or pg.viewport_size["height"] != 1000:
            pg.set_viewport_size({"width": width, "height": 1000})
            settle(pg)
        yield width


@pytest.mark.parametrize("view", list(VIEWS))
def test_nothing_a_reader_needs_is_cut(tabs, app_url, demo, view):
    path, last, world = VIEWS[view]
    pg = opened(tabs, app_url[0], WIDTHS[0], path.format(**demo), last)
    try:
        for width in narrow_then_wide(pg):
            if (
                view == "graphs"
            ):  # the drawing and its bar (the statuses the link chose are in the Filters popover, #39)
                pg.frame_locator("iframe").first.locator("canvas").first.wait_for(timeout=30_000)
                pg.get_by_text("Communities", exact=True).first.wait_for(timeout=30_000)
            if world:  # the grid's headers are written once its canvas is drawn
                headers = pg.locator("[data-testid='stDataFrame'] th[role='columnheader']", has_text="Subject")
                headers.first.wait_for(state="attached", timeout=30_000)
            measured = pg.evaluate(MEASURE)
            shot(pg, f"{view}-{width}")
            assert measured["cut"] == [], (width, measured["cut"])
            assert measured["sideways"] == [], (width, measured["sideways"])
            if world:
                leading = [g[:2] for g in measured["grids"] if "Subject" in g]
                assert leading and all(g == ["Weight", "Status"] for g in leading), (width, measured["grids"])
            if view in ("fact-weights", "runs"):  # its causes, evidence and records wrap in tables
                assert measured["tables"] >= 2, width
    finally:
        pg.close()


def test_a_cell_comparison_wraps_its_statuses_and_why(tabs, app_url):
    pg = opened(tabs, app_url[0], WIDTHS[0], "notebook?sample=disputes_and_retraction.json", "Jump to")
    try:
        pg.get_by_role("button", name="Run all").click()
        settle(pg)
        pg.get_by_text(re.compile(r"^\d+ of \d+ cells run")).first.wait_for(timeout=60_000)
        pg.get_by_text("Compare two cells").first.click()
        pg.locator("[data-testid='stTable']").filter(has_text="Why").first.wait_for(timeout=60_000)
        settle(pg)
        for width in narrow_then_wide(pg):
            measured = pg.evaluate(MEASURE)
            table = pg.locator("[data-testid='stTable']").filter(has_text="Why").first
            table.scroll_into_view_if_needed()
            shot(pg, f"notebook-compare-{width}")
            assert measured["cut"] == [] and measured["sideways"] == [], (width, measured)
            headers = table.locator("th").all_inner_texts()
            assert {"Status A → B", "Why"} <= {h.strip() for h in headers}
    finally:
        pg.close()


def test_jump_to_names_the_cell_now_at_its_place_after_a_delete(tabs, app_url):
    """The box kept its old text when the cells changed under the same number (#25)."""
    pg = opened(tabs, app_url[0], 1400, "notebook?sample=completed_failed_cancelled.json", "Jump to")
    try:
        jump = pg.locator("[data-testid='stSelectbox']").filter(has_text="Jump to").locator("input")
        jump.click()
        pg.get_by_role("option", name=re.compile(r"^\[2\] ")).click()
        settle(pg)
        before = jump.input_value()
        assert before.startswith("[2] ")
        pg.locator(".st-key-del-2 button").first.click()
        settle(pg)
        pg.locator(".st-key-del-yes-2 button").first.click()
        settle(pg)
        pg.wait_for_function(
            "(old) => { const i = [...document.querySelectorAll('[data-testid=stSelectbox] input')]"
            ".find(x => x.getAttribute('aria-label') === 'Jump to'); return i && i.value !== old; }",
            arg=before,
            timeout=30_000,
        )
        after = jump.input_value()
        assert after.startswith("[2] ") and after != before
        head = pg.locator(".st-key-nb-cell-2").first.inner_text()
        assert after.split(" · ")[0].split("] ")[1] in head  # the kind the box names is the cell's at [2]
        shot(pg, "notebook-jump-after-delete")
    finally:
        pg.close()


def test_a_rule_link_opens_in_the_same_tab_and_session(tabs, app_url, demo):
    pg = opened(tabs, app_url[0], 1400, f"fact-weights?as={demo['member']}", "The arithmetic")
    try:
        acting = pg.locator("[data-testid='stSidebar']").get_by_text("You act as").first.inner_text()
        link = pg.locator("a[href*='rules?rule=R26']").first
        assert link.get_attribute("title").startswith("R26: ")  # its title on hover
        link.click()
        pg.get_by_text("The rule you followed a link to").first.wait_for(timeout=60_000)
        settle(pg)
        assert len(pg.context.pages) == 1  # no new tab
        assert re.search(r"/rules\?(.*&)?rule=R26", pg.url), pg.url
        again = pg.locator("[data-testid='stSidebar']").get_by_text("You act as").first.inner_text()
        assert again == acting  # the same session: the person chosen is still the one acting
        top = pg.get_by_text("The rule you followed a link to").first.evaluate("e => e.getBoundingClientRect().top")
        assert 0 <= top < pg.viewport_size["height"]  # opened at its top, not where the last page was scrolled
        shot(pg, "rule-link-same-tab")
    finally:
        pg.close()


#: Each cell of a table's column headed `name`, as the browser holds it (its text) and as a reader
#: copies it (the cell selected whole: what the clipboard receives as plain text).
COLUMN_CELLS = """(name) => {
  const t = [...document.querySelectorAll('[data-testid="stTable"]')].find(
    t => [...t.querySelectorAll('th')].some(th => th.innerText.trim() === name));
  const at = [...t.querySelectorAll('thead th')].findIndex(th => th.innerText.trim() === name);
  return [...t.querySelectorAll('tbody tr')].map(tr => {
    const td = tr.querySelectorAll('td, th')[at];
    const range = document.createRange();
    range.selectNodeContents(td);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    return {text: td.textContent, copied: getSelection().toString()};
  });
}"""


def test_an_excerpt_copied_from_a_table_is_the_source_s_text(tabs, app_url):
    """#39: a table's long words wrapped by zero-width spaces put into its cells, so a quote copied from
    the evidence was not the source's text; the cells wrap by CSS now, at 1024 px too, and the CSV
    download says the same."""
    engine = make_engine(app_url[1])
    svc = MemoryService(engine)
    try:
        facts = svc.facts_table("acme", graphs=("world",))
        fact = next(r for r in facts if r["object"] == "Robots-as-a-Service pricing")
        excerpts = [s["excerpt"] for s in svc.fact_breakdown(int(fact["id"]), org="acme")["supports"]]
    finally:
        engine.dispose()
    assert any(len(w) > 16 for e in excerpts for w in e.split())  # "Robots-as-a-Service": a long word
    pg = opened(tabs, app_url[0], WIDTHS[0], f"fact-weights?graph=world&fact={fact['id']}", "The evidence")
    try:
        pg.locator("[data-testid='stTable']").filter(has_text="Excerpt").first.wait_for(timeout=60_000)
        cells = pg.evaluate(COLUMN_CELLS, "Excerpt")
        assert [c["text"] for c in cells] == excerpts
        assert [" ".join(c["copied"].split()) for c in cells] == excerpts  # the selection's line breaks aside
        assert pg.evaluate(MEASURE)["sideways"] == []  # still wrapped within the frame
        with pg.expect_download() as got:
            pg.get_by_role("button", name="This fact as CSV").click()
        rows = list(csv.DictReader(io.StringIO(Path(got.value.path()).read_text(encoding="utf-8-sig"))))
        assert [r["Excerpt"] for r in rows] == excerpts
        with pg.expect_download() as got:
            pg.get_by_role("button", name="This fact as JSON").click()
        supports = json.loads(Path(got.value.path()).read_text(encoding="utf-8"))["supports"]
        assert [s["excerpt"] for s in supports] == excerpts
    finally:
        pg.close()


def test_an_idle_live_page_hears_nothing_until_memory_moves(tabs, app_url):
    """#39, B8: a live page's fragment asked for memory's version every half second, from every tab, and
    each tick kept the server and the browser busy (five idle tabs took a sixth's shared link from 1.5 to
    2.0 s). One thread per memory asks now and reruns the tabs that drew another version: an idle tab
    hears nothing from the server, and a change it shows (here the settings) redraws it, the same page."""
    sockets: list = []
    pg = tabs.new_page()
    pg.on("websocket", lambda ws: sockets.append(ws))
    try:
        pg.goto(f"{app_url[0]}/fact-weights?graph=world")
        pg.get_by_text("The arithmetic").first.wait_for(timeout=60_000)
        settle(pg)
        stream = sockets[-1]
        with pytest.raises(PlaywrightTimeout):  # nothing heard for four of the old fragment's ticks
            stream.wait_for_event("framereceived", timeout=2_000)
        engine = make_engine(app_url[1])
        svc = MemoryService(engine)
        try:
            svc.set_settings("acme", by="dana", settings={"LearnFromUsers": False})  # a moment (a token: none shown)
            stream.wait_for_event("framereceived", timeout=30_000)  # redrawn after memory moved
            svc.set_settings("acme", by="dana", settings={"LearnFromUsers": True})  # as the other tests have it
        finally:
            engine.dispose()
        settle(pg)
        assert pg.locator("h1").first.inner_text().startswith("Fact weights")  # the same page, at its address
        assert "graph=world" in pg.url
    finally:
        pg.close()
