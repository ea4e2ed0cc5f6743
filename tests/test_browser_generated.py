"""Issue #25's drawing measures on a generated memory of 100,000 supports, at the default cap, in
Chromium. Apart from tests/test_browser_graphs.py so that it runs beside the PostgreSQL pass
(`postgres_pass`): generating the memory and drawing it takes about 22 s, which evens the passes."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from chromium import GEOMETRY, ROOT, drawn, marks, settle, shot
from served import app_env, streamlit

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


def test_a_drawing_at_the_default_cap_is_readable(page, generated):
    """Issue #25's measures on a generated 100k-support memory at the default cap (400 entities, about
    4,000 facts): no dots or names overlapping, spread <= 2, the 60 heaviest named at >= 10 px."""
    page.goto(generated)  # the first request after start-up (streamlit/streamlit#9992, see `warm`)
    settle(page)
    page.goto(f"{generated}/graphs?graph=world&org=bench")
    settle(page)
    page.get_by_text(re.compile(r"Showing 400 entities")).first.wait_for(timeout=120_000)
    drawn(page)
    m = page.frame_locator("iframe").first.locator("body").evaluate(GEOMETRY)
    assert m["nodes"] == 400 and m["named"] == 60, m
    assert m["overlaps"] == 0 and m["names"] == 0 and m["spread"] <= 2.0 and m["font"] >= 10, m
    shot(page, "graph-generated-400", page.locator("iframe").first)
