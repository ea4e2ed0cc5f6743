"""The drawing's measures (#39, tests/test_browser_graphs.py's MEASURES) on a generated memory of 100,000
supports, in Chromium. Apart from tests/test_browser_graphs.py so that it runs beside the PostgreSQL pass
(`postgres_pass`): generating the memory and drawing it takes about 22 s, which evens the passes."""

from __future__ import annotations

import subprocess
import sys

import pytest
from chromium import ROOT, marks, settle, shot
from served import app_env, streamlit
from test_browser_graphs import measured, readable, top_half

pytestmark = marks(postgres_pass=True)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The app over a generated memory of 100,000 supports (organization `bench`): its World graph
    reaches the default cap of drawn entities."""
    tmp = tmp_path_factory.mktemp("generated")
    env = app_env(tmp)
    subprocess.run(
        [sys.executable, "-m", "memory_core", "generate", "--supports", "100000", "--seed", "3"],
        cwd=ROOT,
        env=env,  # MEMORY_DATABASE_URL: the database it writes
        check=True,
        capture_output=True,
    )
    with streamlit(tmp, env) as url:
        yield url


@pytest.fixture(scope="module")
def warm(shared_context, generated):
    """This module's app, opened once (streamlit/streamlit#9992: see tests/chromium.py's `warm`):
    the `page` fixture opens pages on it, and no demo app is served here."""
    pg = shared_context.new_page()
    pg.goto(generated)
    settle(pg)
    pg.close()
    return generated


def test_a_focus_in_a_large_memory_is_readable_and_a_click_opens_within_a_second(page, generated):
    """#39's measures on a generated 100k-support memory: the World graph opens on its most connected entity,
    drawn whole and readable in the top half of a 1400 x 1000 window; a click opens neighbours within 1 s."""
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(generated)  # the first request after start-up (streamlit/streamlit#9992, see `warm`)
    settle(page)
    page.goto(f"{generated}/graphs?graph=world&org=bench")
    settle(page)
    page.get_by_text("the most connected entity here").first.wait_for(timeout=120_000)
    top_half(page)
    readable("generated", measured(page))
    body = page.frame_locator("iframe").first.locator("body")
    count = body.evaluate("() => network.body.data.nodes.length")
    node = body.evaluate("() => network.body.data.nodes.get().find(n => n.name && n.borderWidth !== 4).id")
    took = body.evaluate(
        """(_, id) => new Promise(r => { const t = performance.now(); network.emit('click', {nodes: [id], edges: []});
             requestAnimationFrame(() => requestAnimationFrame(() => r((performance.now() - t) / 1000))); })""",
        node,
    )
    print(f"generated: a click drew in {took:.3f} s")  # noqa: T201  (timed by B8's row, not asserted: #39)
    assert body.evaluate("() => network.body.data.nodes.length") >= count
    shot(page, "graph-generated-focus", page.locator("iframe").first)
