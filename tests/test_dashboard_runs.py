"""Runs for agents (#38.8) under AppTest, on both backends: runs newest first and the selector on the
newest, filters by person and by client, each turn titled by its request, the latest turns (on Runs
and the Overview) linked to their turn, and a turn's link opening that run with that turn open."""

# ruff: noqa: F811  (the fixtures come from test_dashboard: each test names `app` as its argument)
from __future__ import annotations

import json

import pytest
from test_dashboard import _dispose_engines, app, demo_db, live, ok, page, plain, texts  # noqa: F401  (the fixtures)

ASKED = "Profile Nordic Servo AB, the Swedish maker of servo drives, and every supplier it names on its site"


def agent_run(svc, run: str = "run-agent", turn: str = "turn-agent", request: str = ASKED) -> None:
    """A run an agent started over MCP (its session's client named), with one open turn."""
    svc.agent_server_started("srv-runs", host="elsewhere", pid=1, transport="http", now=0.0)
    svc.agent_session_opened("ses-runs", server="srv-runs", client="my-agent 0.1", transport="http", now=0.0)
    svc.start_run(run, org="acme", person="lee", workflow="company_profile", session="ses-runs")
    svc.open_turn(turn, run=run, request={"text": request, "claims": []})


def runs_table(at):
    return next(d.value for d in at.dataframe if "Via" in d.value.columns)


def test_runs_newest_first_and_the_selector_on_the_newest(app):
    runs = live().runs("acme")
    at = page(app, "runs")
    assert list(runs_table(at)["Run"]) == [r["id"] for r in runs[::-1]]
    assert at.selectbox(key="runs_run").value == runs[-1]["id"]
    agent_run(live())
    at = page(page(at, "overview"), "runs")  # opened again (a choice made here holds while the page is open)
    assert runs_table(at)["Run"].iloc[0] == "run-agent" and at.selectbox(key="runs_run").value == "run-agent"
    assert runs_table(at)["Via"].iloc[0] == "MCP: my-agent 0.1"


def test_runs_filtered_by_person_and_by_client(app):
    agent_run(live())
    at = page(app, "runs")
    at.multiselect(key="runs_via").set_value(["MCP: my-agent 0.1"]).run()
    ok(at)
    assert list(runs_table(at)["Run"]) == ["run-agent"] and at.query_params["via"] == "MCP: my-agent 0.1"
    at.multiselect(key="runs_via").set_value([]).run()
    at.multiselect(key="runs_people").set_value(["sam"]).run()
    sams = [r["id"] for r in live().runs("acme")[::-1] if r["person"] == "sam"]
    assert sams and list(runs_table(at)["Run"]) == sams and at.selectbox(key="runs_run").value == sams[0]
    assert at.query_params["person"] == "sam"
    at.multiselect(key="runs_via").set_value(["MCP: my-agent 0.1"]).run()  # sam started no agent's run
    assert "No run matches these filters." in texts(at)
    at.query_params["run"] = sams[-1]  # a link to a run (a latest turn's) shows it, whatever the filters
    at.run()
    assert at.selectbox(key="runs_run").value == sams[-1] and len(runs_table(at)) == len(live().runs("acme"))


def test_each_turn_titled_by_its_request(app):
    agent_run(live())
    at = page(app, "runs")
    labels = [plain(e.label) for e in at.expander]
    shortened = ASKED[:59].rstrip() + "… (turn-agent)"
    assert any(label.startswith(shortened + " · open") for label in labels), labels
    run = live().runs("acme")[0]
    at.selectbox(key="runs_run").set_value(run["id"]).run()
    turns = live().run_detail("acme", run["id"])["turns"]
    labels = [plain(e.label) for e in at.expander]
    assert [label.split(" · ")[0] for label in labels] == [
        f"{short(t['records'][0]['excerpt'])} ({t['id']})" for t in turns
    ]


def short(request: str) -> str:
    """A request as a turn's title says it: its spaces folded, cut to 60 characters with an ellipsis."""
    text = " ".join(request.split())
    return text if len(text) <= 60 else text[:59].rstrip() + "…"


@pytest.mark.parametrize("name", ["runs", "overview"])
def test_latest_turns_link_to_their_turn(app, name):
    agent_run(live())
    said = plain(texts(page(app, name)))
    assert "**Latest turns**" in said
    assert "(turn-agent)](runs?run=run-agent&turn=turn-agent) in run-agent (via MCP: my-agent 0.1): open" in said


def test_a_turn_s_link_opens_its_run_with_that_turn_open(app):
    run = live().runs("acme")[0]
    turns = [t["id"] for t in run["turns"]]
    app.query_params.update(run=run["id"], turn=turns[-1])
    at = page(app, "runs")
    assert at.selectbox(key="runs_run").value == run["id"]
    opened = [e for e in at.expander if e.proto.expanded]
    assert [plain(e.label).endswith(" · linked") for e in opened] == [True]
    assert f"({turns[-1]})" in plain(opened[0].label)
    app.query_params.update(run=run["id"], turn="no-such-turn")
    at = page(app, "runs")
    assert "names nothing here" in texts(at) and not [e for e in at.expander if e.proto.expanded]


def timeline_bars(at, key: str) -> list[dict]:
    """The bars of the timeline under `key`, as the chart's spec holds them (one a turn)."""
    chart = next(e for e in at.get("vega_lite_chart") if key in e.proto.id)
    layer = next(lay for lay in json.loads(chart.proto.spec)["layer"] if lay["name"] == "turns")
    return layer["data"]["values"]


@pytest.mark.parametrize(("name", "key"), [("runs", "runs_timeline"), ("overview", "ov_timeline")])
def test_runs_and_the_overview_draw_a_bar_a_turn_live(app, name, key):
    """#39.5: a bar a turn of the runs shown, coloured by status, each titled by its request; a new turn is
    drawn when the page runs again (as the live fragment makes it do when memory's version moved)."""
    at = page(app, name)
    shown = live().timeline("acme")
    turns = [(r["id"], t["id"], t["status"]) for r in shown["runs"] for t in r["turns"]]
    assert sorted((b["run"], b["turn"], b["status"]) for b in timeline_bars(at, key)) == sorted(turns)
    agent_run(live())
    at.run()
    ok(at)
    bars = {b["turn"]: b for b in timeline_bars(at, key)}
    assert len(bars) == len(turns) + 1 and bars["turn-agent"]["status"] == "open"
    assert bars["turn-agent"]["title"] == short(ASKED) + " (turn-agent)"
    assert "Click a bar to open its turn" in texts(at)
