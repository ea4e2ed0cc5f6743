"""Runs for agents (#38.8) in Chromium: "Open in the Notebook" moves the address to the Notebook's
(it reopens that notebook), and a latest turn's link on the Overview opens Runs on its run with that
turn open. Screenshots: artifacts/screenshots/runs-agents-*.png."""

from __future__ import annotations

from chromium import goto, marks, settle, shot

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
    shot(page, "runs-agents-linked-turn")
