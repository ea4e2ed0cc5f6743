"""#26, point 3: text from memory or a link is text. A memory whose every name, id, request, claim
and excerpt carries Markdown and HTML that would load an image from another host or draw a link to
it; every page is opened on it, and every string Streamlit renders as Markdown (bodies, headings,
captions, labels, help, radio and slider options, alerts, expander and tab labels) must hold the
payload inert: no `](http…` link or image and no raw `<img` left. Plain-text places (select box
options, st.dataframe's grids, code and JSON) show text as it is and are not Markdown; st.table's
cells are Markdown, and held to the same."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from memory_core import MemoryService, make_engine, replay
from memory_core.format.scenario import parse

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import PAGES  # noqa: E402
from payloads import EVIL, P, payload_scenario  # noqa: E402

#: The app's own SQLite file.
pytestmark = pytest.mark.backend_free
ROOT = Path(__file__).resolve().parent.parent
#: Places Streamlit shows as plain text: a select box's options, tables, code, JSON, the page's own links.
PLAIN = re.compile(
    r"(^|\.)(selectbox|multiselect)\.(options|rawValues?|default|value)|text(input|area)\.(value|default)|arrowDataFrame|json\.body|\.id$|\.url$"
    r"|unknownelement\.srcdoc"  # the drawing's own HTML page in its frame: labels drawn on a canvas (test_viz)
    r"|unknownelement\.spec"  # the runs timeline's Vega-Lite data: drawn as text by Vega, tooltips HTML-escaped
)
#: A link or image to the other host, raw HTML, or what an autolink would find (`http://`, even backslashed).
LIVE = re.compile(r"(?<!\\)\]\((?:https?:)?//" + re.escape(EVIL) + r"|<img|https?\\?://" + re.escape(EVIL))


def strings(value, path=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v, path)
    elif isinstance(value, str):
        yield path, value


def leaks(at: AppTest) -> list[tuple[str, str]]:
    found = []
    for node in at._tree:
        proto = getattr(node, "proto", None)
        if proto is None or not hasattr(proto, "DESCRIPTOR"):
            continue
        kind = type(node).__name__.lower()
        if kind == "table":  # st.table renders each cell as Markdown (#25: cells that wrap, rules linked)
            df = node.value
            cells = [*map(str, df.columns), *(v for v in df.to_numpy().ravel() if isinstance(v, str))]
            found += [("table", text[:160]) for text in cells if LIVE.search(text)]
            continue
        for path, text in strings(MessageToDict(proto)):
            where = f"{kind}.{path}"
            if PLAIN.search(where) or kind in ("dataframe", "code", "json", "table"):
                continue
            if LIVE.search(text):
                found.append((where, text[:160]))
    return found


@pytest.fixture(scope="module")
def payload_db(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('inert') / 'memory.db'}"
    svc = MemoryService(make_engine(url))
    replay(parse_doc(payload_scenario()), svc)
    svc.engine.dispose()
    return url


def parse_doc(doc):
    import json

    return parse(json.dumps(doc))


@pytest.fixture
def app(payload_db, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_DATABASE_URL", payload_db)
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path / "notebooks"))
    monkeypatch.chdir(ROOT)
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()


def visit(at: AppTest, name: str, params: dict[str, str] | None = None) -> AppTest:
    at.query_params.update(params or {})
    at.switch_page(PAGES[name]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("name", PAGES)
def test_every_page_shows_memory_s_markdown_as_text(app, name):
    assert leaks(visit(app, name)) == []


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("rules", {"rule": P}),  # a link's text: /rules?rule=![i](http://…)[Sign in again](http://…)
        ("overview", {"at": "4", "from": "2"}),  # two moments compared
        ("graphs", {"at": "4", "from": "2"}),  # the diff's heading names the organization
        ("runs", {"run": f"r2{P}"}),
        ("fact-weights", {"graph": "user"}),
        ("reads", {"turn": f"t3{P}", "call": "GraphResolve", "name": P}),
    ],
)
def test_linked_views_show_memory_s_markdown_as_text(app, name, params):
    assert leaks(visit(app, name, params)) == []


def test_the_notebook_of_such_a_scenario_shows_it_as_text(app):
    from memory_core.views import notebook as nbk

    nb = nbk.new(payload_scenario(), "payload.json")
    nb.run_all()
    nb.save()
    at = visit(app, "notebook", {"nb": nb.id, "mem": "notebook"})
    assert at.session_state["notebook"].id == nb.id
    assert leaks(at) == []
    for other in ("overview", "runs", "graphs"):
        assert leaks(visit(at, other)) == [], other
