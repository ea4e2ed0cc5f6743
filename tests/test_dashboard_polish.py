"""#25, what was left of its section 2, and #26 point 5, under AppTest: every count says what it
counts, the what-if names the settings each side ran under and counts what an ephemeral run did,
the notebook's editing says it saved and links its records, rule numbers are linked or titled, and
the notebook says what it keeps and scrubs its results of what its own deletions erased. (What
only a browser shows, cut labels and columns, is tests/test_browser_polish.py.)"""

# ruff: noqa: F811  (the fixtures come from test_dashboard: each test names `app` as its argument)

from __future__ import annotations

import json
import re
from collections import Counter

from backend import NOTEBOOK_ONLY
from test_dashboard import (  # noqa: F401  (the fixtures: the app over a private copy of the demo)
    _dispose_engines,
    app,
    cells_of,
    demo_db,
    live,
    ok,
    open_sample,
    page,
    plain,
    read_back,
    tables,
    texts,
)

from memory_core.views import notebook as nbk
from memory_core.views.notebook_scrub import erased


def captions(at) -> list[str]:
    """The captions as a reader reads them: rules' links as their numbers, escapes undone."""
    return [str(read_back(c.value)) for c in at.caption]


# --- 2. every count says what it counts ---------------------------------------------------------


def test_overview_says_its_world_table_counts_every_status_beside_the_maps_active_facts(app):
    svc = live()
    facts = svc.facts_table("acme", graphs=("world",))
    n = Counter(f["status"] for f in facts)
    on_map = svc.org_map("acme")["facts"]
    assert on_map == n["active"] and len(facts) > on_map  # the two numbers the page shows differ
    at = page(app, "overview")
    said = next(c for c in captions(at) if "of every status" in c)
    assert said.startswith(f"{len(facts)} World facts, of every status: {n['active']} active")
    assert f"The map above counts only the {on_map} active facts (R18)" in said
    assert any(f"and {on_map} facts" in plain(i.value) for i in at.info)  # the map's own sentence, beside it


def test_what_if_counts_say_every_status_and_the_maps_active_ones(app):
    at = page(app, "settings")
    metric = next(m for m in at.metric if m.label.startswith("World facts, every status"))
    base, alt = (int(x.replace(",", "")) for x in metric.value.split(" → "))
    said = next(c for c in captions(at) if c.startswith("World facts now:"))
    assert re.search(r"what if: .*active", said) and "map's count (R18)" in said
    active = int(re.search(r"World facts now: (\d+) active", said).group(1))
    assert active <= base == alt
    memory = next(c for c in captions(at) if c.startswith("Memory holds"))
    assert f"rebuilds {active:,} active ones" in memory  # like for like: active beside active


# --- 3. the what-if on the notebook's scenario --------------------------------------------------


def test_what_if_on_a_scenario_names_its_settings_and_counts_an_ephemeral_runs_kept_out_claims(app):
    at = open_sample(app, "ephemeral_runs.json")
    page(at, "settings")
    at.radio(key="wi_source").set_value("notebook").run()
    ok(at)
    org = at.selectbox(key="wi_org").value
    # The switches start at the scenario's settings, and the page says so: no silent jump.
    start = next(str(read_back(m.value)) for m in at.markdown if "The switches start at" in plain(m.value))
    assert "the settings the scenario starts" in start
    [table] = tables(at, "Behaviour", "What if")
    assert "With the scenario's settings" in table.columns and "With the settings now" not in table.columns
    at.toggle(key=f"wi-notebook-{org}-LearnFromEphemeralRuns").set_value(False).run()
    ok(at)
    [table] = tables(at, "Behaviour", "What if")
    rows = {r["Behaviour"]: (int(r["With the scenario's settings"]), int(r["What if"])) for _, r in table.iterrows()}
    r8a = rows["Claims kept out by R8a"]
    assert r8a[1] > r8a[0]  # the ephemeral run's claims kept out of World now show (R8a), not only its facts
    assert rows["Runs asked to be ephemeral (R11)"][0] > 0
    metric = next(m for m in at.metric if m.label.startswith("World facts, every status"))
    before, after = (int(x) for x in metric.value.split(" → "))
    assert after < before
    # "only as written" said in words, and what each word means said under the table.
    [facts] = [d.value for d in at.dataframe if "Difference" in d.value.columns]
    assert set(facts["Difference"]) <= {"status", "weight", "only with the scenario's settings", "only in the what-if"}
    assert "only as written" not in set(facts["Difference"])
    assert any("only with the scenario's settings" in c and "when only the replay" in c for c in captions(at))


def test_what_if_says_when_no_run_asked_to_be_ephemeral(app):
    svc = live()
    assert not [r for r in svc.runs("acme") if r["requested_ephemeral"]]
    at = page(app, "settings")
    said = next(c for c in captions(at) if "asked to be ephemeral" in c)
    assert said.startswith("No run of Acme Robotics asked to be ephemeral")
    assert "rules?rule=R11" in texts(at) and "rules?rule=R12" in texts(at)


# --- 4. the notebook: saved, and its records linked ---------------------------------------------


@NOTEBOOK_ONLY
def test_a_cell_edited_by_its_fields_or_as_json_says_it_was_saved(app):
    at = open_sample(app, "completed_failed_cancelled.json")
    i = next(k for k, e in enumerate(cells_of(at)) if e["do"] == "end_turn" and e["status"] == "completed")
    at.selectbox(key="nb_jump").set_value(i).run()
    at.selectbox(key=f"e{i}-status").set_value("failed").run()
    at.button(key=f"save-form-{i}").click().run()
    ok(at)
    assert cells_of(at)[i]["status"] == "failed"
    assert any(s.value.startswith(f"Cell [{i}] saved.") and "Undo" in s.value for s in at.success)
    # As JSON too; and the editor shows the cell as saved.
    event = {**cells_of(at)[i], "status": "cancelled"}
    at.text_area(key=f"edit-{i}").input(json.dumps(event)).run()
    at.button(key=f"save-{i}").click().run()
    ok(at)
    assert cells_of(at)[i]["status"] == "cancelled"
    assert any(s.value.startswith(f"Cell [{i}] saved.") for s in at.success)
    assert json.loads(at.text_area(key=f"edit-{i}").value)["status"] == "cancelled"


@NOTEBOOK_ONLY
def test_a_deleted_cells_editor_does_not_stay_on_the_cell_that_takes_its_place(app):
    at = open_sample(app, "completed_failed_cancelled.json")
    at.selectbox(key="nb_jump").set_value(2).run()
    assert json.loads(at.text_area(key="edit-2").value) == cells_of(at)[2]
    at.button(key="del-2").click().run()
    at.button(key="del-yes-2").click().run()
    ok(at)
    assert json.loads(at.text_area(key="edit-2").value) == cells_of(at)[2]  # the cell now at [2], not the deleted one
    names = at.selectbox(key="nb_jump")
    assert names.options[2].startswith(f"[2] {cells_of(at)[2]['do']}")


@NOTEBOOK_ONLY
def test_records_kept_as_evidence_link_to_runs_on_the_notebooks_memory(app):
    at = open_sample(app, "completed_failed_cancelled.json")
    at.button(key="run_all").click().run()
    nb = at.session_state["notebook"]
    failed = next(i for i, e in enumerate(cells_of(at)) if e["do"] == "end_turn" and e["status"] != "completed")
    at.selectbox(key="nb_jump").set_value(failed).run()
    said = next(m.value for m in at.markdown if m.value.startswith("Records kept as evidence"))
    links = re.findall(r"\]\((runs\?run=[^)]+)\)", said)
    assert links and all(f"&mem=notebook&nb={nb.id}" in link for link in links)
    run, record = re.search(r"run=([^&]+)&record=([^&]+)", links[0]).groups()
    at.query_params.update({"run": run, "record": record.replace("%23", "#")})
    page(at, "runs")
    assert any("(linked) is first" in plain(s.value) for s in at.success)


# --- 5. rule numbers in tables and labels: linked, or titled with the rule's own words -----------------


def test_rules_in_table_cells_are_links_and_in_grids_titled(app):
    at = page(app, "overview")
    [settings] = [t.value for t in at.table if any("Rule" in str(c) for c in t.value.columns)]
    assert all("](rules?rule=R" in r for r in settings[settings.columns[-1]])
    live().delete_account("lee")  # a run whose person is gone: "erased (R30)" in the runs' grid
    at = page(app, "overview")
    runs = next(d for d in at.dataframe if "Person" in d.value.columns)
    assert "erased (R30)" in set(runs.value["Person"])
    config = json.loads(runs.proto.columns)
    assert config["Person"]["help"].startswith("[R30](rules?rule=R30") and ": " in config["Person"]["help"]
    at = page(app, "fact-weights")
    threshold = next(n for n in at.number_input if n.key == "w_threshold")
    assert "rules?rule=R22" in threshold.label
    sources = next(m for m in at.metric if m.label == "Independent sources")
    assert "R25" in sources.help and "rules?rule=R25" in sources.help


# --- 6. what a notebook keeps, and the author's scrub -------------------------------------------


@NOTEBOOK_ONLY
def test_the_notebook_says_what_it_keeps_and_scrubs_what_its_deletions_erased(app):
    at = open_sample(app, "erasure.json")
    assert any("What this notebook keeps" in c for c in captions(at))
    assert not [b for b in at.button if b.key == "nb_scrub"]  # nothing erased yet: nothing to scrub
    at.button(key="run_all").click().run()
    ok(at)
    nb = at.session_state["notebook"]
    gone = erased(nb)
    path = nbk.notebook_dir() / f"{nb.id}.notebook.json"
    kept = json.loads(path.read_text())
    held = [t for t in gone.texts if t in json.dumps(kept["results"]) + json.dumps(kept["reads"])]
    assert held
    at.button(key="nb_scrub").click().run()
    ok(at)
    assert any(s.value.startswith("Scrubbed ") for s in at.success)
    after = json.loads(path.read_text())
    assert not [t for t in held if t in json.dumps(after["results"]) + json.dumps(after["reads"])]
    assert after["scenario"] == kept["scenario"] and after["cursor"] == kept["cursor"]
    assert not [b for b in at.button if b.key == "nb_scrub"]  # done: nothing left to scrub
