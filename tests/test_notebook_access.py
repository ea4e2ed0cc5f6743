"""#40, finding 5: a notebook is its author's, and erased text leaves notebooks too (R29-R31).

Signed in, a link to a notebook (`?mem=notebook&nb=ID`, or the Notebook's `?nb=ID`) opens it only for
the person who made it, and one made from an organization's run for that organization's owner too;
anyone else is refused in a sentence, and the page shows the database. A notebook made from a run
goes, every file of it, when the run or its person is erased (here, over MCP or on the command line:
the dashboard's next page run looks)."""

# ruff: noqa: F811  (the fixtures come from test_dashboard: each test names `app` as its argument)

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_dashboard import (  # noqa: F401  (the fixtures: the app over a private copy of the demo)
    _dispose_engines,
    app,
    demo_db,
    fresh_app,
    issue,
    live,
    ok,
    page,
    sign_in,
    texts,
)

from memory_core.views import notebook as nbk

ROOT = Path(__file__).resolve().parent.parent
REQUEST = "Which suppliers does Zebulon Quartzfield recommend?"
EXCERPT = "Quartzfield ledger: Acme Robotics buys its grippers from Hexaplume Works."
REFUSED = "The notebook this link names was not reopened: it is not yours"


def notebook_dir() -> Path:
    return Path(os.environ["MEMORY_NOTEBOOK_DIR"])


def a_run(run_id: str, person: str) -> None:
    """A run of Acme left open, whose request and excerpt name things nothing else in memory names."""
    svc = live()
    svc.start_run(run_id, org="acme", person=person)
    svc.open_turn(f"{run_id}-t1", run=run_id, request={"text": REQUEST, "claims": []})
    claim = {"graph": "world", "subject": {"name": "Hexaplume Works", "kind": "organization"}, "relation": "supplies"}
    claim |= {"object": {"name": "Acme Robotics", "kind": "organization"}}
    record = {"origin": "web", "source": "https://ledger.example/q", "excerpt": EXCERPT, "claims": [claim]}
    svc.record(f"{run_id}-t1", record=record)


def open_run(at, run_id: str):
    """The Runs page's "Open in the Notebook" on `run_id`, every cell run: the notebook."""
    at = page(at, "runs")
    if at.sidebar.radio:  # a notebook is open: back to the database
        at.sidebar.radio(key="memory_source").set_value("main").run()
    at.selectbox(key="runs_run").set_value(run_id).run()
    at.button(key="runs_notebook").click().run()
    at.button(key="run_all").click().run()
    ok(at)
    return at.session_state["notebook"]


def follow(at, nb_id: str, name: str = "settings", **params: str):
    """A signed-in session following a link to `nb_id` on page `name`."""
    for key, value in ({"mem": "notebook", "nb": nb_id} | params).items():
        at.query_params[key] = value
    return page(at, name)


def no_notebook(at) -> bool:
    return "notebook" not in at.session_state or at.session_state["notebook"] is None


@pytest.fixture
def signed_in(app, monkeypatch):
    monkeypatch.setenv("MEMORY_SIGN_IN", "1")
    return lambda person, org: sign_in(fresh_app(), issue(person, org))


@pytest.mark.parametrize(("person", "org"), [("ivan", "globex"), ("lee", "acme")])
def test_a_link_to_someone_else_s_notebook_is_refused_and_shows_the_database(signed_in, person, org):
    nb = open_run(signed_in("dana", "acme"), "run-supplier-scan")
    for name in ("settings", "runs"):
        at = follow(signed_in(person, org), nb.id, name)
        assert REFUSED in texts(at) and "that organization's owner" in texts(at)
        assert no_notebook(at)
        assert "mem" not in at.query_params and "nb" not in at.query_params
        assert "You act as the owner of Acme Robotics" not in texts(at)
    at = page(signed_in(person, org), "notebook")
    at.query_params["nb"] = nb.id
    at = page(at, "notebook")
    assert REFUSED in texts(at) and no_notebook(at)


def test_its_author_and_the_run_s_organization_s_owner_open_it(signed_in):
    """Dana made it from Acme's run; Lee made one from a sample, so only Lee opens that (not the owner)."""
    made = open_run(signed_in("dana", "acme"), "run-supplier-scan")
    at = follow(signed_in("dana", "acme"), made.id)
    assert at.session_state["memory_source"] == "notebook" and at.session_state["notebook"].id == made.id
    lee = page(signed_in("lee", "acme"), "overview")
    lee.button(key="open-learn_from_users").click().run()
    ok(lee)
    own = lee.session_state["notebook"]
    assert own.author == "lee" and own.made_from is None
    assert follow(signed_in("lee", "acme"), own.id).session_state["notebook"].id == own.id
    assert REFUSED in texts(follow(signed_in("dana", "acme"), own.id))


def files_holding(text: str) -> list[str]:
    """The notebooks' files (scenario, undo, scratch memory and its log) holding `text`'s bytes."""
    return sorted(p.name for p in notebook_dir().iterdir() if text.encode() in p.read_bytes())


@pytest.mark.parametrize("erased", ["run", "account"])
def test_a_notebook_made_from_a_run_goes_with_the_run_or_its_person(signed_in, erased):
    """R29-R31: the run erased behind the page (as over MCP), or its person's account; the next page
    run leaves no byte of its request or excerpt in the notebooks' files, and says the notebook went."""
    a_run("run-quartz", "priya")
    at = signed_in("dana", "acme")
    nb = open_run(at, "run-quartz")
    assert nb.made_from is not None and nb.made_from.person == "priya"
    assert files_holding(EXCERPT) and files_holding(REQUEST)
    if erased == "run":
        live().delete_run("run-quartz", by="dana")
    else:
        live().delete_account("priya")
    at = page(at, "overview")
    assert files_holding(EXCERPT) == [] and files_holding(REQUEST) == [] and files_holding("run-quartz") == []
    assert not list(notebook_dir().glob(f"{nb.id}.*"))
    assert no_notebook(at) and "the run it was made from was erased" in texts(at)


def test_a_notebook_of_another_database_s_run_or_of_a_sample_stays(signed_in, tmp_path):
    """Only runs this database's organizations held and lost: a sample's notebook has no run."""
    at = page(signed_in("dana", "acme"), "overview")
    at.button(key="open-learn_from_users").click().run()
    sample = at.session_state["notebook"]
    made = open_run(at, "run-supplier-scan")
    (notebook_dir() / "0123456789abcdef0123456789abcdef.run.json").write_text(
        json.dumps({"org": "elsewhere", "run": "gone", "person": None})
    )
    page(at, "overview")
    assert {p.name.split(".")[0] for p in notebook_dir().glob("*.notebook.json")} == {sample.id, made.id}
    assert (notebook_dir() / "0123456789abcdef0123456789abcdef.run.json").exists()


def test_a_notebook_kept_before_authors_reopens_without_one(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path))
    nb = nbk.new(json.loads((ROOT / "sample_data" / "erasure.json").read_text()), "erasure.json")
    nb.save()
    path = tmp_path / f"{nb.id}.notebook.json"
    old = {k: v for k, v in json.loads(path.read_text()).items() if k not in ("author", "made_from")}
    path.write_text(json.dumps(old))
    again = nbk.reopen(nb.id)
    assert again is not None and again.author is None and again.made_from is None
