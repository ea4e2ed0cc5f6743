"""B8's interaction rows (issues #25, #39): what a person waits for in Chromium, from the click to the page settled,
beside Streamlit's own floor (a one-line page) in the same browser and run; run by `bench/run.py --only b8clicks`.

"Settled": after the click the server's messages came (the rerun's elements, its "script finished"), then none for
QUIET s and the app says it is not running (`data-test-script-state`), so a rerun the click asks for is waited for
too (a fast rerun's "running" never reaches the DOM). The time is from the click to the last message."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def heading(page: Any, text: str) -> Any:
    """The page's title (its first heading) reading `text` ("" any): the sidebar names every page before it shows."""
    return page.locator("h1").filter(has_text=text).first


def opened_to_settled(page: Any, url: str, title: str, *, text: str | None = None) -> float:
    """Seconds from navigating to `url` until its title reads `title` (or `text` shows) and the script has run."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    (page.get_by_text(text).first if text else heading(page, title)).wait_for(timeout=120_000)
    _idle(page)
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
    """Each interaction on the demo REPEAT times (Settings, a what-if, Apply, Run next, Undo, a rule, a shared link)."""
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
    out[SHARED], out[SHARED_BESIDE] = beside_live_tabs(new_page, address)
    return out


def beside_live_tabs(new_page: Callable[[], Any], address: str) -> tuple[list[float], list[float]]:
    """REPEAT times in turn: a shared link opened cold alone, then while TABS tabs stay open on the Overview."""
    alone, beside = [], []
    for _ in range(REPEAT):
        alone.append(_cold(new_page, f"{address}/fact-weights?graph=world", "Fact weights"))
        tabs = [new_page() for _ in range(TABS)]
        try:
            for tab in tabs:  # each opened and its charts drawn: beside tabs left open, not while they draw
                opened_to_settled(tab, address, "Acme Robotics")
                tab.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
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
    floors = floor(new_page, serve, stop, b.tmp, b.url())
    rerun, opened = statistics.median(floors["rerun"]), statistics.median(floors["opened"])
    for kind, values in floors.items():
        print(f"B8 {b.backend}: the floor ({kind}) " + ", ".join(f"{v:.2f}" for v in values), file=sys.stderr)
    for where, url, measure, above in (("the demo", demo, demo_rows, 1.0), ("the reads size", big, big_rows, 2.0)):
        server, address, _ = serve(ROOT / "app.py", url, b.tmp)
        page = new_page()
        try:
            measured = measure(page, address, new_page)
        finally:
            page.context.close()
            stop(server)
        for name, values in measured.items():
            value = statistics.median(values)
            base, gesture = (opened, "opening the link") if name.startswith(SHARED) else (rerun, "the click")
            print(f"B8 {b.backend}: {name} on {where}: " + ", ".join(f"{v:.2f}" for v in values), file=sys.stderr)
            said = f"{name} on {where}, in Chromium: s from {gesture} to the page settled (median of {len(values)})"
            b.record("B8", said, value, base, f"< {above:g} s above the floor", value - base < above, part="clicks")
