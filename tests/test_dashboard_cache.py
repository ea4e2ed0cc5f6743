"""Pages keep what they read under the memory's version (issue #16): a rerun that changed nothing reads
nothing again, and any change to memory, made behind the page by another connection or another
process, is shown at the next rerun. On a real SQLite file, as `make run` keeps memory."""

from __future__ import annotations

import functools
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memory_core import MemoryService, load, make_engine, replay

ROOT = Path(__file__).resolve().parent.parent
READS = ("organizations", "people", "members", "runs", "run_ids", "focus", "facts_table", "run_detail")
NEW = {"graph": "world", "subject": {"name": "Zephyr Cache Co", "kind": "organization"}, "relation": "based_in"}


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cache") / "demo.db"
    engine = make_engine(f"sqlite:///{path}")
    replay(load(str(ROOT / "sample_data" / "demo.json")), MemoryService(engine))
    engine.dispose()
    return path


@pytest.fixture
def reads(monkeypatch) -> Counter:
    """How often each read use case runs, whoever calls it."""
    calls: Counter = Counter()
    for name in READS:
        original = getattr(MemoryService, name)

        @functools.wraps(original)  # pages keep a read under its qualified name: the counter keeps it
        def counting(self, *args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(MemoryService, name, counting)
    return calls


@pytest.fixture
def app(demo_file, tmp_path, monkeypatch):
    db = tmp_path / "memory.db"
    db.write_bytes(demo_file.read_bytes())
    url = f"sqlite:///{db}"
    monkeypatch.setenv("MEMORY_DATABASE_URL", url)
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path / "notebooks"))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    behind = MemoryService(make_engine(url))  # another engine: another connection, as another process would be
    yield at, behind
    behind.engine.dispose()


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def teach(svc: MemoryService, run: str, place: str) -> None:
    """A turn of `run` that teaches one new World fact (R1)."""
    svc.start_run(run, org="acme", person="dana")
    svc.open_turn(f"{run}-t", run=run, request={"text": "Where is Zephyr?", "claims": []})
    claim = {**NEW, "object": {"name": place, "kind": "place"}}
    svc.record(f"{run}-t", record={"origin": "web", "source": "https://z.example/", "claims": [claim]})
    svc.end_turn(f"{run}-t", status="completed")


def test_a_rerun_that_changed_nothing_reads_nothing_again(app, reads):
    at, _ = app
    for name in ("graphs", "fact_weights", "runs", "overview", "settings", "memory_reads", "erasure"):
        ok(at.switch_page(f"pages/{name}_page.py").run())
        reads.clear()
        ok(at.run())
        assert sum(reads.values()) == 0, (name, dict(reads))


def test_a_turn_taught_behind_the_page_is_drawn_and_listed_at_the_next_rerun(app, reads):
    at, behind = app
    ok(at.switch_page("pages/graphs_page.py").run())
    at.session_state["g_focus"] = "Zephyr Cache Co"  # drawn around it (#39), once it is there
    ok(at.run())
    assert not any("Zephyr Cache Co" in option for option in at.selectbox(key="g_open_fact").options)
    teach(behind, "r-cache", "Atlantis")
    reads.clear()
    ok(at.run())
    assert reads["focus"] == 1  # read again: memory changed
    assert any("Zephyr Cache Co" in option for option in at.selectbox(key="g_open_fact").options)
    assert "Flow" in at.radio(key="g_which").options  # the new run's Flow graph is offered
    reads.clear()
    ok(at.run())
    assert reads["focus"] == 0  # and kept again
    ok(at.switch_page("pages/fact_weights_page.py").run())
    assert "Zephyr Cache Co" in set(at.dataframe[0].value["Subject"])


def test_a_deletion_behind_the_page_is_shown_at_the_next_rerun(app):
    at, behind = app
    teach(behind, "r-doomed", "Lemuria")
    ok(at.switch_page("pages/runs_page.py").run())
    assert "r-doomed" in at.selectbox(key="runs_run").options
    behind.delete_run("r-doomed", by="dana")
    ok(at.run())
    assert "r-doomed" not in at.selectbox(key="runs_run").options
    ok(at.switch_page("pages/erasure_page.py").run())
    assert "r-doomed" not in at.selectbox(key="e_run").options


def test_a_change_by_another_process_is_shown_at_the_next_rerun(app):
    at, _ = app
    ok(at.switch_page("pages/settings_page.py").run())
    assert at.toggle(key="set-acme-NoMemoryShortcuts").value is False
    code = (
        "import os; from memory_core import MemoryService, make_engine; "
        "MemoryService(make_engine(os.environ['MEMORY_DATABASE_URL']))"
        ".set_settings('acme', by='dana', settings={'NoMemoryShortcuts': True})"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)
    ok(at.run())
    assert at.toggle(key="set-acme-NoMemoryShortcuts").value is True
    assert any("NoMemoryShortcuts" in m.value and "→" in m.value for m in at.markdown)  # the audit's new line


def test_a_change_made_on_the_page_is_shown_after_it(app):
    """The page's own change (an owner's Save) is a change like any other."""
    at, _ = app
    ok(at.switch_page("pages/settings_page.py").run())
    at.toggle(key="set-acme-LearnFromUsers").set_value(False).run()
    ok(at.button(key="save_settings").click().run())
    assert at.toggle(key="set-acme-LearnFromUsers").value is False
    ok(at.switch_page("pages/overview_page.py").run())
    table = next(t.value for t in at.table if "Setting" in t.value.columns)  # a table whose rules are links
    assert dict(zip(table["Setting"], table["Value"], strict=True))["LearnFromUsers"] == "off"


def test_a_click_on_a_live_page_holds_while_memory_moves_as_the_page_draws(app, monkeypatch):
    """An agent writes while a person clicks: here a real commit by another connection just before
    each of the page's first six looks at memory's version. The click still does what it says (a live
    page's watch compares versions on its own later runs, never in the page's run: rerunning the
    page from there dropped the press, one click in two under an agent's writes)."""
    at, behind = app
    ok(at.switch_page("pages/runs_page.py").run())
    version, moves = MemoryService.version, [True, False] * 3

    def moving(self: MemoryService) -> str | None:
        if moves and self.engine is not behind.engine:
            behind.set_settings("acme", by="dana", settings={"LearnFromUsers": moves.pop()})
        return version(self)

    monkeypatch.setattr(MemoryService, "version", moving)
    ok(at.button(key="runs_notebook").click().run())
    assert not moves  # memory moved six times during the click's run
    assert at.session_state["memory_source"] == "notebook" and at.title[0].value == "Notebook"
