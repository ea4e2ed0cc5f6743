"""#26, points 10 and 11: a notebook's file on disk is read like a scenario file and trusted for
nothing but its cells: a malformed one is refused with a sentence, and its scratch memory is named
by the notebook's id, never by a path the file holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory_core.views import notebook as nbk

pytestmark = pytest.mark.backend_free  # scratch SQLite files of their own
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """A notebook of a sample, three cells run, kept on disk: its id and its file's path."""
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path / "notebooks"))
    nb = nbk.new(json.loads((ROOT / "sample_data" / "erasure.json").read_text()), "erasure.json")
    nb.run_to(2)
    nb.save()
    return nb.id, tmp_path / "notebooks" / f"{nb.id}.notebook.json"


def rewrite(path: Path, **fields) -> None:
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))


def test_a_kept_notebook_reopens_with_its_cells(kept):
    nb_id, _ = kept
    nb = nbk.reopen(nb_id)
    assert nb is not None and nb.cursor == 3 and len(nb.results) == 3
    assert nb.db.endswith(f"{nb_id}.{nb.gen}.db")


def test_a_file_nested_deep_is_refused_with_a_sentence(kept):
    nb_id, path = kept
    path.write_text('{"format": "memory-notebook/1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(nbk.NotebookDamaged, match="nested"):
        nbk.reopen(nb_id)


@pytest.mark.parametrize(
    ("field", "value"),
    [("cursor", "x"), ("cursor", 10**6), ("results", [1]), ("moments", {"-1": "a"}), ("gen", -1), ("last", "z")],
)
def test_a_field_of_the_wrong_kind_is_refused_naming_it(kept, field, value):
    nb_id, path = kept
    rewrite(path, **{field: value})
    with pytest.raises(nbk.NotebookDamaged, match=f"`{field}`"):
        nbk.reopen(nb_id)


def test_the_scratch_memory_is_never_a_path_the_file_names(kept, tmp_path):
    nb_id, path = kept
    victim = tmp_path / "victim.db"
    victim.write_bytes(b"precious")
    (tmp_path / "victim.db-sibling").write_bytes(b"precious too")
    rewrite(path, db=f"sqlite:///{victim}", cursor=3, moments={})  # moments lost: the cells run again
    nb = nbk.reopen(nb_id)
    assert nb is not None and str(tmp_path / "notebooks") in nb.db and "victim" not in nb.db
    nb.reset()  # dropping the old scratch memory drops only the notebook's own files
    assert victim.read_bytes() == b"precious" and (tmp_path / "victim.db-sibling").read_bytes() == b"precious too"


def test_a_file_kept_before_generations_reopens_and_runs_its_cells_again(kept):
    nb_id, path = kept
    data = json.loads(path.read_text())
    del data["gen"]
    data["db"] = "sqlite:///elsewhere.db"
    path.write_text(json.dumps(data))
    nb = nbk.reopen(nb_id)
    assert nb is not None and nb.cursor == 3 and str(nbk.notebook_dir()) in nb.db
    assert re.fullmatch(rf".*/{nb_id}\.[1-9]\d*\.db", nb.db)  # a generation of its own (a file there is not reused)


@pytest.mark.parametrize("page", ["pages/notebook_page.py", None])  # the Notebook, and the default page
def test_a_link_to_a_damaged_notebook_says_so_on_every_page(kept, tmp_path, monkeypatch, page):
    from streamlit.testing.v1 import AppTest

    from memory_core import MemoryService, make_engine, replay
    from memory_core.format.scenario import load

    nb_id, path = kept
    path.write_text('{"format": "memory-notebook/1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    replay(load(str(ROOT / "sample_data" / "erasure.json")), MemoryService(make_engine(url)))
    monkeypatch.setenv("MEMORY_DATABASE_URL", url)
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"nb": nb_id, "mem": "notebook"})
    (at.switch_page(page) if page else at).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("was not reopened" in w.value and "nested" in w.value for w in at.warning)


def test_two_tabs_resetting_one_notebook_never_take_or_delete_each_other_s_memory(kept):
    """#26, point 12: each copy of the notebook (a tab) resets to a generation of its own; the one a
    tab leaves stays until its next reset (another tab may still be running on it), older ones go."""
    nb_id, _ = kept
    a, b = nbk.reopen(nb_id), nbk.reopen(nb_id)
    assert a is not None and b is not None and a.gen == b.gen
    first = a.gen
    a.reset()
    b.reset()  # from the same generation, unaware of a's reset
    assert len({first, a.gen, b.gen}) == 3
    for nb in (a, b):  # both memories whole: set up, and each runs its cells on its own, alike
        nb.run_all()
    said = [[r["status"] for r in nb.results.values()] for nb in (a, b)]
    assert said[0] == said[1] and len(said[0]) == len(a.events()) and "error" not in said[0], said
    files = {p.name for p in nbk.notebook_dir().glob(f"{nb_id}.*.db")}
    assert {f"{nb_id}.{a.gen}.db", f"{nb_id}.{b.gen}.db", f"{nb_id}.{first}.db"} <= files
    a.reset()  # a's next reset: generations before the one it left go
    files = {p.name for p in nbk.notebook_dir().glob(f"{nb_id}.*.db")}
    assert f"{nb_id}.{first}.db" not in files and not list(nbk.notebook_dir().glob("*.claim"))
