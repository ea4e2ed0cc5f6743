"""B8's interaction rows (issues #25, #39): what a person waits for in Chromium, from the click to the page settled,
beside Streamlit's own floor (a one-line page) in the same browser and run; run by `bench/run.py --only b8clicks`,
and #39's (a focus from a shared link, a click that opens neighbours, a shared link beside live tabs) by `--only
b8focus`.

"Settled": after the click the server's messages came (the rerun's elements, its "script finished"), then none for
QUIET s and the app says it is not running (`data-test-script-state`), so a rerun the click asks for is waited for
too (a fast rerun's "running" never reaches the DOM). The time is from the click to the last message."""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent

QUIET = 0.25  # s the app stands still to be settled: more than a script's end to the rerun it asks (a few ms)
REPEAT = 5  # measures of each interaction (the row: their median)
SHARED = "a shared link opened in a fresh browser context"  # measured against the one-line page's cold open
TABS = 5  # live tabs open on the Overview beside the shared link (pages/_live.py)
SHARED_BESIDE = f"a shared link opened in a fresh browser context, {TABS} live tabs open beside it"

FLOOR_APP = """import streamlit as st

st.session_state["n"] = st.session_state.get("n", 0)
if st.button("again"):
    st.session_state["n"] += 1
st.write(f"one line, run {st.session_state['n']}")
"""

#: Per page, when each message from the app's server arrived (perf_counter): a run sends its elements
#: and ends with a "script finished" message, so the last of a burst is when the page was complete.
_FRAMES: dict[int, list[float]] = {}


def watched(page: Any) -> Any:
    """`page`, with the arrival of every server message recorded (before it opens the app)."""
    frames = _FRAMES.setdefault(id(page), [])
    page.on("websocket", lambda ws: ws.on("framereceived", lambda _payload: frames.append(time.perf_counter())))
    return page


IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def _still_for(page: Any, seconds: float, since: float) -> float | None:
    """The last message after `since` once `seconds` passed without one and the app is not running; else None."""
    frames = [f for f in _FRAMES[id(page)] if f > since]
    last = frames[-1] if frames else None
    if time.perf_counter() - (last or since) < seconds or not page.locator(IDLE).count():
        return None
    return last


def _idle(page: Any) -> None:
    page.wait_for_selector(IDLE, timeout=120_000)


def clicked_to_settled(page: Any, click: Callable[[], None]) -> float:
    """Seconds from `click()` to the page settled after the rerun it caused (the module's doc), clicked once the app
    stood still for QUIET s (sooner can land on a button being redrawn, or in a rerun the page asked for)."""
    _idle(page)
    deadline = time.perf_counter() + 120
    while _still_for(page, QUIET, 0.0) is None:
        if time.perf_counter() > deadline:
            raise TimeoutError("the page did not stand still within 120 s, before the click")
        page.wait_for_timeout(20)
    t0 = time.perf_counter()
    click()
    deadline = t0 + 120
    while True:
        page.wait_for_timeout(20)
        last = _still_for(page, QUIET, t0)
        if last is not None:
            return last - t0
        if time.perf_counter() > deadline:
            raise TimeoutError("the page did not settle within 120 s of the click")


#: In the page, on every animation frame: its title shows (an h1 holding `title`, any case, "" any; the sidebar names
#: every page before it shows), or `text` does, and with `idle` the app says its script is not running. Looked for
#: in the page as it draws: Playwright's own waits look at 0, 20, 70, 170 and 270 ms, then every 500 ms, so a page
#: settled at 1.30 s was read 1.77 s and the floor read 1.0 or 1.5 s as it fell (B8, measured against the page's
#: own clock).
SHOWN = """([title, text, idle]) => {
  if (idle && !document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")) { return false; }
  const seen = (el, words) => el.innerText.toLowerCase().includes(words.toLowerCase());
  if (text !== null) { return seen(document.body, text); }
  return [...document.querySelectorAll('h1')].some(h => h.getClientRects().length > 0 && seen(h, title));
}"""


def shown(page: Any, title: str, *, text: str | None = None, idle: bool = True) -> None:
    """Once the page's title reads `title` (or `text` shows) and, with `idle`, its script has run (`SHOWN`)."""
    page.wait_for_function(SHOWN, arg=[title, text or None, idle], polling="raf", timeout=120_000)


def opened_to_settled(page: Any, url: str, title: str, *, text: str | None = None) -> float:
    """Seconds from navigating to `url` until its title reads `title` (or `text` shows) and the script has run."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    shown(page, title, text=text)
    return time.perf_counter() - t0


def key(page: Any, name: str, role: str = "button") -> Any:
    """The widget Streamlit drew for `key=name` (its container carries the class st-key-NAME)."""
    return page.locator(f".st-key-{name} {role}").first


def sidebar(page: Any, title: str) -> Callable[[], None]:
    return lambda: page.locator("[data-testid='stSidebarNav'] a", has_text=title).first.click()


def floor(
    new_page: Callable[[], Any], serve: Callable[..., Any], stop: Callable[[Any], None], tmp: Path, url: str
) -> dict[str, list[float]]:
    """Streamlit's floors in this browser, on a one-line page: a click's rerun, and a cold open in a fresh context."""
    script = tmp / "floor_app.py"
    script.write_text(FLOOR_APP)
    server, address, _ = serve(script, url, tmp)
    try:
        page = watched(new_page())
        page.goto(address, wait_until="commit")
        page.get_by_text("one line").first.wait_for(timeout=120_000)
        again = page.get_by_role("button", name="again")
        rerun = [clicked_to_settled(page, lambda: again.click()) for _ in range(REPEAT)]
        page.context.close()
        return {"rerun": rerun, "opened": shared_links(new_page, address, "", text="one line")}
    finally:
        stop(server)


def shared_links(new_page: Callable[[], Any], url: str, title: str, *, text: str | None = None) -> list[float]:
    """REPEAT times: `url` opened cold until its title reads `title` (or `text` shows) and its script has run."""
    return [_cold(new_page, url, title, text=text) for _ in range(REPEAT)]


def _cold(new_page: Callable[[], Any], url: str, title: str, *, text: str | None = None) -> float:
    """`url` opened in a fresh browser context (no cache, a new session), closed after: no page left keeps cores busy."""
    page = new_page()
    try:
        return opened_to_settled(page, url, title, text=text)
    finally:
        page.context.close()


def from_the_overview(page: Any, address: str, text: str, click: Callable[[], None]) -> list[float]:
    """REPEAT times: the Overview opened (it shows `text`), then `click()` measured to the page settled."""
    values = []
    for _ in range(REPEAT):
        opened_to_settled(page, address, text)  # the Overview, then the click
        values.append(clicked_to_settled(page, click))
    return values


def rule_links(page: Any, address: str, text: str) -> list[float]:
    """A click on the first rule link of the Overview (it opens the Rules page in the same tab)."""
    return from_the_overview(page, address, text, lambda: page.locator("a[href*='rules?rule=']").first.click())


def demo_rows(page: Any, address: str, new_page: Callable[[], Any]) -> dict[str, list[float]]:
    """Each interaction on the demo REPEAT times (Settings, a what-if, Apply, Run next, Undo, a rule link)."""
    out: dict[str, list[float]] = {}
    opened_to_settled(watched(page), address, "Acme Robotics")
    out["Settings opened from the sidebar"] = from_the_overview(
        page, address, "Acme Robotics", sidebar(page, "Settings")
    )
    flip = key(page, "wi-live-acme-NoMemoryShortcuts", "label")
    out["a what-if flip on the live organization"] = [clicked_to_settled(page, flip.click) for _ in range(REPEAT)]
    applies = []
    for _ in range(REPEAT):
        if not page.locator(".st-key-wi_apply button").count():  # a what-if unlike the settings now
            clicked_to_settled(page, flip.click)
        clicked_to_settled(page, lambda: key(page, "wi_apply").click())  # its question
        applies.append(clicked_to_settled(page, lambda: key(page, "wi_apply_yes").click()))
    out["Apply a what-if (after its question)"] = applies
    page.goto(f"{address}/notebook", wait_until="commit")
    key(page, "load_sample").wait_for(timeout=120_000)  # the sample chosen first: the demo
    clicked_to_settled(page, lambda: key(page, "load_sample").click())
    out["Run next in the notebook"] = [clicked_to_settled(page, key(page, "run_next").click) for _ in range(REPEAT)]
    undos = []
    delete = "[class*='st-key-del-']:not([class*='st-key-del-yes-']):not([class*='st-key-del-no-']) button"
    for _ in range(REPEAT):  # an edit to undo: a cell in view deleted
        clicked_to_settled(page, lambda: page.locator(delete).first.click())
        clicked_to_settled(page, lambda: page.locator("[class*='st-key-del-yes-'] button").first.click())
        undos.append(clicked_to_settled(page, lambda: key(page, "undo").click()))
    out["Undo in the notebook"] = undos
    out["a rule link clicked on the Overview"] = rule_links(page, address, "Acme Robotics")
    return out


#: In a tab: once its page thread has had nothing to do for about 0.3 s (six idle periods of 45 ms or more in a row),
#: or after 20 s (a page that animates has no long idle period).
#: A page's script ends before Streamlit has loaded the code of its charts and tables and drawn them: the Overview
#: goes on for about a second after (measured: five tabs kept Chromium's page threads busy 1.3 s in all), and two
#: animation frames after its script ended, a shared link opened beside five tabs was timed while they drew.
STILL = """() => new Promise(done => { let calm = 0; const t0 = performance.now();
  (function look() { requestIdleCallback(d => { calm = d.timeRemaining() >= 45 ? calm + 1 : 0;
    calm >= 6 || performance.now() - t0 > 20000 ? done() : look(); }); })(); })"""


def beside_live_tabs(new_page: Callable[[], Any], address: str) -> tuple[list[float], list[float]]:
    """REPEAT times in turn: a shared link opened cold alone, then while TABS tabs stay open on the Overview."""
    alone, beside = [], []
    for _ in range(REPEAT):
        alone.append(_cold(new_page, f"{address}/fact-weights?graph=world", "Fact weights"))
        tabs = [new_page() for _ in range(TABS)]
        try:
            for tab in tabs:  # each opened and its charts drawn: beside tabs left open, not while they draw
                opened_to_settled(tab, address, "Acme Robotics")
            for tab in tabs:
                tab.evaluate(STILL)
            beside.append(_cold(new_page, f"{address}/fact-weights?graph=world", "Fact weights"))
        finally:
            for tab in tabs:
                tab.context.close()
    return alone, beside


def big_rows(page: Any, address: str, new_page: Callable[[], Any]) -> dict[str, list[float]]:
    """At the reads size (a generated memory): Settings opened from the sidebar, a rule link, a shared link."""
    opened_to_settled(watched(page), address, "")
    return {
        "Settings opened from the sidebar": from_the_overview(page, address, "", sidebar(page, "Settings")),
        "a rule link clicked on the Overview": rule_links(page, address, ""),
        SHARED: shared_links(new_page, f"{address}/fact-weights?graph=world", "Fact weights"),
    }


def record(
    b: Any, new_page: Callable[[], Any], serve: Callable[..., Any], stop: Callable[[Any], None], *, demo: str, big: str
) -> None:
    """B8's interaction rows (`part` "clicks"), each the median of REPEAT on a server of its own per memory, < 1 s above
    Streamlit's floor for the same gesture (`floor`) on the demo and < 2 s at the reads size."""
    rerun, opened = floors(b, new_page, serve, stop)
    for where, url, measure, above in (("the demo", demo, demo_rows, 1.0), ("the reads size", big, big_rows, 2.0)):
        server, address, _ = serve(ROOT / "app.py", url, b.tmp)
        page = new_page()
        try:
            measured = measure(page, address, new_page)
        finally:
            page.context.close()
            stop(server)
        for name, values in measured.items():
            _settled_row(b, name, where, values, opened if "shared link" in name else rerun, above, part="clicks")


def floors(
    b: Any, new_page: Callable[[], Any], serve: Callable[..., Any], stop: Callable[[Any], None]
) -> tuple[float, float]:
    """Streamlit's floors in this run (`floor`), printed: the median click's rerun and the median cold open."""
    measured = floor(new_page, serve, stop, b.tmp, b.url())
    for kind, values in measured.items():
        print(f"B8 {b.backend}: the floor ({kind}) " + ", ".join(f"{v:.2f}" for v in values), file=sys.stderr)
    return statistics.median(measured["rerun"]), statistics.median(measured["opened"])


def _settled_row(b: Any, name: str, where: str, values: list[float], base: float, above: float, *, part: str) -> None:
    """A row of `name` on `where`: the median of `values` (to the page settled), < `above` s over the floor `base`
    (a cold open's for a shared link, else a click's)."""
    value, gesture = statistics.median(values), "opening the link" if "shared link" in name else "the click"
    print(f"B8 {b.backend}: {name} on {where}: " + ", ".join(f"{v:.2f}" for v in values), file=sys.stderr)
    said = f"{name} on {where}, in Chromium: s from {gesture} to the page settled (median of {len(values)})"
    b.record("B8", said, value, base, f"< {above:g} s above the floor", value - base < above, part=part)


# --- #39's rows: a focus opened from a shared link, a click on it that opens neighbours, a link beside live tabs ---

FOCUSED = "the Graphs page focused on a name from a shared link (/graphs?graph=world&focus=<name>), drawn"
EXPANDED = "a click on a drawn entity that opens its neighbours"

#: In the drawing's frame: the focus centred (its first fit) and painted, two animation frames after.
CENTRED = """() => new Promise(done => {
  (function poll() { window.centred ? requestAnimationFrame(() => requestAnimationFrame(done)) : setTimeout(poll, 10); })();
})"""

#: Each node drawn: its place in the layout (vis-network's own units) and on the screen (px in the frame).
PLACES = """() => { const at = network.getPositions(), out = {};
  Object.keys(at).forEach(id => { out[id] = [at[id].x, at[id].y, network.canvasToDOM(at[id])]; });
  return {scale: network.getScale(), at: out}; }"""

#: In the drawing's frame, before a click: each node's place in the layout and on the screen, and from then on when
#: the pointer goes down (`bench.down`) and when vis-network has drawn more nodes and painted them, two animation
#: frames after (`bench.drawn`); a watch of an earlier click that opened nothing is dropped.
WATCHED = """() => {
  const n = network.body.data.nodes.length;
  if (window.bench) { network.off('afterDrawing', window.bench.more); }
  const bench = window.bench = {more: () => {
    if (network.body.data.nodes.length <= n || bench.drawn !== undefined) { return; }
    bench.drawn = null;
    requestAnimationFrame(() => requestAnimationFrame(() => { bench.drawn = performance.now(); }));
  }};
  network.on('afterDrawing', bench.more);
  document.addEventListener('pointerdown', () => { bench.down = performance.now(); }, {capture: true, once: true});
  return (PLACES)();
}""".replace("PLACES", PLACES)

#: Seconds from the pointer down to the new nodes painted, or null if none came within 3 s (nothing to open there).
OPENED = """() => new Promise(done => { const t0 = performance.now();
  (function poll() { const b = window.bench;
    if (b.drawn) { done((b.drawn - b.down) / 1000); } else if (performance.now() - t0 > 3000) { done(null); }
    else { setTimeout(poll, 10); } })();
})"""

#: Once the view has moved to show what a click opened (the drawing's `fitted`, false from the click to its animation's
#: end; none before a click).
FITTED = """() => new Promise(done => { (function poll() { window.fitted !== false ? done(true) : setTimeout(poll, 20); })(); })"""

#: The entities drawn but the focus, heaviest first, each with where its dot is in the window (`at`: the frame's place).
TARGETS = """(_, at) => { const r = document.getElementById('mynetwork').getBoundingClientRect();
  return network.body.data.nodes.get().filter(n => n.name && n.borderWidth !== 4).map(n => {
    const d = network.canvasToDOM(network.getPositions([n.id])[n.id]);
    return [n.id, at.x + r.left + d.x, at.y + r.top + d.y]; }); }"""


def focused(page: Any, url: str) -> tuple[float, float, float]:
    """Seconds from opening `url` (a Graphs focus) until its title shows, then its script has run, then the focus is
    drawn centred and painted in its frame (the row: the last; the others say where the time went)."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    shown(page, "Graphs", idle=False)
    titled = time.perf_counter() - t0
    shown(page, "Graphs")
    ran = time.perf_counter() - t0
    page.frame_locator("iframe").first.locator("body").evaluate(CENTRED)
    return titled, ran, time.perf_counter() - t0


def expanded(page: Any) -> tuple[float, float, float]:
    """A real click on the drawn entities in the window, heaviest first, until one opens neighbours: seconds from the
    pointer down to the new nodes painted (the page's own clock); the largest move of a node drawn before and still
    drawn, px at the click's scale (the layout kept, #39); and the largest on the screen once the view moved to show
    what opened."""
    iframe = page.locator("iframe").first
    iframe.scroll_into_view_if_needed()
    box, size = iframe.bounding_box(), page.viewport_size
    bottom, right = min(box["y"] + box["height"], size["height"]), min(box["x"] + box["width"], size["width"])
    body = page.frame_locator("iframe").first.locator("body")
    tried: set[Any] = set()
    while True:
        body.evaluate(FITTED)  # a click that opened nothing may still have moved the view (to a fact it drew)
        shown = [t for t in body.evaluate(TARGETS, box) if box["x"] < t[1] < right and box["y"] < t[2] < bottom]
        node, x, y = next((t for t in shown if t[0] not in tried), (None, 0.0, 0.0))
        if node is None:
            raise RuntimeError("no entity drawn in the window opened neighbours on a click")
        tried.add(node)
        before = body.evaluate(WATCHED)
        page.mouse.click(x, y)
        took = body.evaluate(OPENED)
        if took is not None:
            break
    body.evaluate(FITTED)
    after = body.evaluate(PLACES)["at"]  # the clicked entity's "+N more" box gives way to what it opened: not a move
    was = {k: p for k, p in before["at"].items() if k in after}
    moved = max(math.dist(p[:2], after[k][:2]) for k, p in was.items()) * before["scale"]
    shifted = max(math.dist((p[2]["x"], p[2]["y"]), (after[k][2]["x"], after[k][2]["y"])) for k, p in was.items())
    return took, moved, shifted


def focus_rows(
    b: Any,
    new_page: Callable[[], Any],
    serve: Callable[..., Any],
    stop: Callable[[Any], None],
    *,
    demo: str,
    big: str,
    names: list[str],
    facts: int,
) -> None:
    """#39's B8 rows (`part` "focus"), beside Streamlit's floors: at B2's size, a link focused on each of `names`
    opened cold (< 1 s above a cold open's floor) and on it a click that opens neighbours (< 1 s to the new nodes
    drawn, no node drawn moved 20 px); on the demo, a shared link alone and beside TABS live tabs, in turn."""
    rerun, opened = floors(b, new_page, serve, stop)
    links, parts, clicks, moves, shifts = [], [], [], [], []
    server, address, _ = serve(ROOT / "app.py", big, b.tmp)
    try:
        _cold(new_page, address, "")  # the first page after start-up (streamlit/streamlit#9992), then Graphs once:
        _cold(new_page, f"{address}/graphs", "Graphs")  # a link comes to a server that has drawn before
        for name in names:
            page = new_page()
            try:
                parts.append(focused(page, f"{address}/graphs?graph=world&focus={quote(name)}"))
                links.append(parts[-1][-1])
                took, moved, shifted = expanded(page)
            finally:
                page.context.close()
            clicks.append(took)
            moves.append(moved)
            shifts.append(shifted)
    finally:
        stop(server)
    server, address, _ = serve(ROOT / "app.py", demo, b.tmp)
    try:
        _cold(new_page, address, "Acme Robotics")
        alone, beside = beside_live_tabs(new_page, address)
    finally:
        stop(server)
    where = f"{facts:,} facts (B2's size)"
    print(
        f"B8 {b.backend}: focused on {', '.join(names)}; title shown, script run, drawing centred, s: "
        + "; ".join(", ".join(f"{v:.2f}" for v in p) for p in parts),
        file=sys.stderr,
    )
    _settled_row(b, FOCUSED, where, links, opened, 1.0, part="focus")
    print(
        f"B8 {b.backend}: {EXPANDED}: "
        + ", ".join(f"{v:.3f}" for v in clicks)
        + " s; drawn nodes moved "
        + ", ".join(f"{v:.1f}" for v in moves)
        + " px; on the screen, once the view moved to show them, "
        + ", ".join(f"{v:.0f}" for v in shifts)
        + " px",
        file=sys.stderr,
    )
    took, moved = statistics.median(clicks), max(moves)
    said = f"{EXPANDED} on {where}, in Chromium"
    b.record(
        "B8",
        f"{said}: s from the click to the new nodes drawn (median of {len(clicks)})",
        took,
        rerun,
        "< 1 s",
        took < 1,
        part="focus",
    )
    b.record(
        "B8",
        f"{said}: the largest move of a node already drawn, px (the largest of {len(moves)})",
        moved,
        None,
        "< 20 px",
        moved < 20,
        part="focus",
    )
    _settled_row(b, SHARED, "the demo", alone, opened, 1.0, part="focus")
    _settled_row(b, SHARED_BESIDE, "the demo", beside, opened, 1.0, part="focus")
