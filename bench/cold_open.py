"""What a cold open loads and waits for (B8, #39): the floor (a one-line page) and the dashboard's pages, each opened
in a fresh browser context, as the bench serves them; per open, the seconds to settled (as B8 measures it), the
page's own marks (its first h1, each script state), the drawing drawn (Graphs), and for the last open the requests
(JS and CSS chunks, fonts) with when they started and ended on the page's clock and their sizes.

    PYTHONPATH=. .venv/bin/python bench/cold_open.py "fact-weights?graph=world" "graphs?graph=world&focus=Acme%20Robotics"

MEMORY_DATABASE_URL (if set) is served, else the demo loaded into a fresh SQLite file. `--repeat N` (3); `--trace`: the
page thread's tasks of the last open (Chromium's trace), each said by its heaviest parts, among the server's messages
and the marks; `--profile`: the JavaScript's self time per script in the last open (V8's sampling profiler), from the
script's start to its end and over the whole open. What it found for #39 is in docs/benchmarks.md (B8)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import interactions as I
from bench import run as R

ROOT = Path(__file__).resolve().parent.parent
#: Marks on the page's own clock: the first h1, each script state the app says (data-test-script-state).
MARKS = """(() => { let seen = null, h1 = false;
  new MutationObserver(() => {
    const app = document.querySelector("[data-testid='stApp']");
    const state = app && app.getAttribute('data-test-script-state');
    if (state && state !== seen) { seen = state; performance.mark('state:' + state); }
    if (!h1 && document.querySelector('h1')) { h1 = true; performance.mark('h1'); }
  }).observe(document, {subtree: true, childList: true, attributes: true});
})();"""
RESOURCES = """() => performance.getEntriesByType('resource').map(e => [e.name, e.startTime, e.responseEnd,
  e.encodedBodySize, e.decodedBodySize, e.initiatorType])"""


def short(url: str) -> str:
    name = url.split("?")[0].rsplit("/", 1)[-1] or url
    return name if len(name) < 48 else name[:45] + "..."


def trace_costs(path: Path) -> tuple[dict[str, float], dict[str, float]]:
    """From a Chromium trace: ms of main-thread compile+evaluate per script URL, and ms per top-level event kind."""
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    per_url: dict[str, float] = defaultdict(float)
    kinds: dict[str, float] = defaultdict(float)
    for e in events:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        name, dur = e["name"], e["dur"] / 1000
        data = (e.get("args") or {}).get("data") or {}
        if name in ("EvaluateScript", "v8.compile", "v8.compileModule", "v8.evaluateModule", "v8.produceModuleCache"):
            url = data.get("url") or (e.get("args") or {}).get("fileName") or ""
            if name in ("EvaluateScript", "v8.evaluateModule", "v8.compileModule", "v8.compile"):
                per_url[short(url)] += dur if name != "v8.compile" else 0.0  # v8.compile nests in EvaluateScript
        if name in ("RunTask",):
            kinds["RunTask (all main-thread tasks)"] += dur
        if name in (
            "FunctionCall",
            "EvaluateScript",
            "v8.compileModule",
            "v8.evaluateModule",
            "Layout",
            "UpdateLayoutTree",
            "Paint",
            "ParseHTML",
            "ParseAuthorStyleSheet",
            "MajorGC",
            "MinorGC",
            "V8.GC_MARK_COMPACTOR",
            "ScheduleStyleRecalculation",
            "PrePaint",
            "Layerize",
        ):
            kinds[name] += dur
    return dict(per_url), dict(kinds)


def timeline(path: Path, least: float = 4.0) -> None:
    """The renderer's main-thread tasks of at least `least` ms after the navigation, each said by its heaviest parts;
    the server's messages (WebSocketReceive) and the page's marks among them."""
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    navs = [
        e
        for e in events
        if e["name"] == "navigationStart"
        and e["args"]["data"].get("isOutermostMainFrame")
        and e["args"]["data"].get("documentLoaderURL", "").startswith("http")
    ]
    nav = navs[-1]
    pid, tid, t0 = nav["pid"], nav["tid"], nav["ts"]
    main = sorted(
        (e for e in events if e.get("pid") == pid and e.get("tid") == tid and e["ts"] >= t0), key=lambda e: e["ts"]
    )
    tasks = [e for e in main if e["name"] == "RunTask" and e.get("ph") == "X"]
    rows = []
    for task in tasks:
        dur = task.get("dur", 0) / 1000
        if dur < least:
            continue
        end = task["ts"] + task["dur"]
        parts: dict[str, float] = defaultdict(float)
        for e in main:
            if e["ts"] < task["ts"] or e["ts"] > end or e.get("ph") != "X" or e is task:
                continue
            data = (e.get("args") or {}).get("data") or {}
            n = e["name"]
            if n == "FunctionCall":
                parts[f"call {short(data.get('url', ''))}:{data.get('functionName', '')}"] += e["dur"] / 1000
            elif n in ("v8.evaluateModule", "EvaluateScript"):
                parts[f"eval {short(data.get('url', '')) if data.get('url') else ''}"] += e["dur"] / 1000
            elif n in ("v8.compileModule", "v8.compile"):
                parts[f"compile {short(data.get('url', ''))}"] += e["dur"] / 1000
            elif n in (
                "Layout",
                "UpdateLayoutTree",
                "Paint",
                "ParseHTML",
                "MajorGC",
                "MinorGC",
                "HandlePostMessage",
                "TimerFire",
                "FireAnimationFrame",
                "EventDispatch",
                "ParseAuthorStyleSheet",
            ):
                parts[n] += e["dur"] / 1000
        top = sorted(parts.items(), key=lambda kv: -kv[1])[:3]
        rows.append(
            (
                task["ts"],
                f"  {(task['ts'] - t0) / 1e6:6.3f}s task {dur:6.1f} ms: " + "; ".join(f"{k} {v:.0f}" for k, v in top),
            )
        )
    ws = [e for e in main if e["name"] == "WebSocketReceive"]
    if ws:
        rows.append((ws[0]["ts"], f"  {(ws[0]['ts'] - t0) / 1e6:6.3f}s first server message"))
        rows.append((ws[-1]["ts"], f"  {(ws[-1]['ts'] - t0) / 1e6:6.3f}s last server message ({len(ws)})"))
    for e in events:
        if e.get("cat") == "blink.user_timing" and e["name"] in ("h1",) or e["name"].startswith("state:"):
            if e.get("pid") == pid and e["ts"] >= t0:
                rows.append((e["ts"], f"  {(e['ts'] - t0) / 1e6:6.3f}s MARK {e['name']}"))
    busy = sum(t.get("dur", 0) for t in tasks) / 1000
    print(f"    main thread busy {busy:.0f} ms in tasks after the navigation; tasks of {least:g} ms or more:")
    for _, line in sorted(rows):
        print(line)


def profiled(profile: dict[str, Any], start: float, end: float) -> None:
    """Self time of the JS sampled from `start` to `end` (ms on the profile's clock, from its startTime), per script
    and per function (the heaviest), as a sampling profiler sees it."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    t = profile["startTime"]
    per_url: dict[str, float] = defaultdict(float)
    per_fn: dict[str, float] = defaultdict(float)
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        t += delta
        if not start <= (t - profile["startTime"]) / 1000 <= end:
            continue
        frame = nodes[sample]["callFrame"]
        url, fn = short(frame["url"]) if frame["url"] else "(native)", frame["functionName"] or "(anonymous)"
        per_url[url] += delta / 1000
        per_fn[f"{fn} {url}:{frame['lineNumber']}"] += delta / 1000
    total = sum(per_url.values())
    print(
        f"    sampled {total:.0f} ms; by script (self time): "
        + ", ".join(f"{u} {ms:.0f}" for u, ms in sorted(per_url.items(), key=lambda kv: -kv[1])[:18])
    )
    print(
        "    heaviest functions: "
        + "; ".join(f"{f} {ms:.0f}" for f, ms in sorted(per_fn.items(), key=lambda kv: -kv[1])[:15])
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--no-floor", action="store_true")
    ap.add_argument("--profile", action="store_true", help="a JS CPU profile of the last open of each")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp())
    url = os.environ.get("MEMORY_DATABASE_URL")
    if not url:
        url = f"sqlite:///{tmp}/demo.db"
        subprocess.run(
            [sys.executable, "-m", "memory_core", "load", str(ROOT / "sample_data/demo.json")],
            env={**os.environ, "MEMORY_DATABASE_URL": url},
            check=True,
            capture_output=True,
        )
    floor = tmp / "floor.py"
    floor.write_text(I.FLOOR_APP)
    targets = [] if a.no_floor else [(floor, "")]
    targets += [(ROOT / "app.py", p) for p in a.paths]
    summary: dict[str, list[float]] = {}
    with sync_playwright() as p:
        br = p.chromium.launch(executable_path=R.CHROMIUM, headless=True, args=R.CHROMIUM_ARGS)
        for script, path in targets:
            server, address, _ = R._serve(script, url, tmp)
            label = path or "FLOOR"
            try:
                if script != floor:  # as the bench does: the first page after start-up, then the page once
                    I._cold(lambda: br.new_context().new_page(), address, "")
                    I._cold(lambda: br.new_context().new_page(), f"{address}/{path}", "")
                for rep in range(a.repeat):
                    ctx = br.new_context(viewport={"width": 1400, "height": 1000})
                    page = I.watched(ctx.new_page())
                    page.add_init_script(MARKS)
                    frames: list[tuple[float, int]] = []
                    page.on(
                        "websocket",
                        lambda ws, frames=frames: ws.on(
                            "framereceived", lambda payload: frames.append((time.perf_counter(), len(payload)))
                        ),
                    )
                    tracing = a.trace and rep == a.repeat - 1
                    trace = tmp / f"trace-{rep}.json"
                    if tracing:
                        br.start_tracing(
                            page=page,
                            path=str(trace),
                            categories=[
                                "devtools.timeline",
                                "v8",
                                "disabled-by-default-devtools.timeline",
                                "blink.user_timing",
                            ],
                        )
                    cdp = None
                    if a.profile and rep == a.repeat - 1:
                        cdp = ctx.new_cdp_session(page)
                        cdp.send("Profiler.enable")
                        cdp.send("Profiler.setSamplingInterval", {"interval": 250})
                        cdp.send("Profiler.start")
                    t0 = time.perf_counter()
                    if script == floor:
                        took = I.opened_to_settled(page, f"{address}/{path}", "", text="one line")
                    else:
                        title = {"fact-weights": "Fact weights", "graphs": "Graphs"}.get(path.split("?")[0], "")
                        took = I.opened_to_settled(page, f"{address}/{path}", title)
                    drawn = None
                    if path.startswith("graphs"):
                        page.frame_locator("iframe").first.locator("body").evaluate(R.DRAWN)
                        drawn = time.perf_counter() - t0
                    if tracing:
                        br.stop_tracing()
                    profile = cdp.send("Profiler.stop")["profile"] if cdp else None
                    marks = page.evaluate("() => performance.getEntriesByType('mark').map(m => [m.name, m.startTime])")
                    res = page.evaluate(RESOURCES)
                    frame_res = []
                    for fr in page.frames[1:]:
                        try:
                            frame_res += fr.evaluate(RESOURCES)
                        except Exception:
                            pass
                    summary.setdefault(label, []).append(took)
                    kb = sum(r[3] for r in res) // 1024
                    print(
                        f"{label}: settled {took:.2f}s"
                        + (f", drawn {drawn:.2f}s" if drawn else "")
                        + f"; {len(res)} resources, {kb} kB encoded; ws frames {len(frames)}"
                        + (f" first {frames[0][0] - t0:.2f}s last {frames[-1][0] - t0:.2f}s" if frames else ""),
                        flush=True,
                    )
                    print("    marks: " + ", ".join(f"{n} {t / 1000:.2f}" for n, t in marks))
                    if profile:
                        ran = next((t for n, t in marks if n == "state:running"), 0.0)
                        done = [t for n, t in marks if n == "state:notRunning"]
                        # the profile started before the navigation, and stopped at `now` on the page's clock
                        offset = (profile["endTime"] - profile["startTime"]) / 1000 - page.evaluate("performance.now()")
                        print(
                            f"    profile from the script's start ({ran / 1000:.2f}s) to its end ({done[-1] / 1000:.2f}s):"
                        )
                        profiled(profile, ran + offset, done[-1] + offset)
                        print("    profile, the whole open:")
                        profiled(profile, 0, 1e9)
                    if rep == a.repeat - 1:
                        for name, start, end, enc, _dec, kind in sorted(res, key=lambda r: r[2]):
                            if kind in ("script", "link", "css", "iframe", "other", "fetch") or ".js" in name:
                                print(
                                    f"    {start / 1000:5.2f}-{end / 1000:5.2f}s {enc // 1024:5d} kB  {kind:7s} {short(name)}"
                                )
                        for name, start, end, enc, _dec, _kind in frame_res:
                            print(
                                f"    (frame) {start / 1000:5.2f}-{end / 1000:5.2f}s {enc // 1024:5d} kB  {short(name)}"
                            )
                        if tracing:
                            timeline(trace)
                            per_url, kinds = trace_costs(trace)
                            print(
                                "    main thread, ms: "
                                + ", ".join(f"{k} {v:.0f}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))
                            )
                            for u, ms in sorted(per_url.items(), key=lambda kv: -kv[1])[:25]:
                                print(f"      {ms:6.1f} ms  {u}")
                    ctx.close()
            finally:
                R._stop(server)
        br.close()
    for label, vals in summary.items():
        print(f"SUMMARY {label}: median {statistics.median(vals):.2f} of " + ", ".join(f"{v:.2f}" for v in vals))


if __name__ == "__main__":
    main()
