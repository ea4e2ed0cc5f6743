"""An organization set up for agents without a replay (#38 point 1): `python -m memory_core setup FILE`
beside what memory holds, the `workflows` tool through the SDK's client over stdio and HTTP,
`unknown_workflow` naming the organization's workflows, and the Settings page showing them."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_servers import ROOT
from backend import SERVER, fresh_url
from helpers import BASE, memory_cli, run, start
from mcp import Client
from test_dashboard import tables
from test_mcp_transports import over_http, stdio

from memory_core import MemoryService, make_engine, parse, replay

Obj = dict[str, Any]
SAMPLE = ROOT / "sample_data" / "setup" / "northwind.json"

#: What `workflows` answers for the sample's organization: its one workflow as the file defines it.
NORTHWIND_WORKFLOWS = {
    "workflows": [
        {
            "id": "company_research",
            "budget": {"MemoryProbes": 10},
            "steps": [
                {"id": "plan", "kind": "model", "admits_calls": True, "answers": None},
                {
                    "id": "find_hq",
                    "kind": "tool",
                    "admits_calls": False,
                    "answers": {
                        "subject": {"name": "Globex", "kind": "organization", "aliases": []},
                        "relation": "headquartered_in",
                    },
                },
                {"id": "write_up", "kind": "model", "admits_calls": False, "answers": None},
            ],
        }
    ]
}


@pytest.fixture
def url(tmp_path: Path) -> str:
    """An empty memory's address: a SQLite file not made yet, or an emptied PostgreSQL database."""
    return fresh_url("memory_setup") if SERVER else f"sqlite:///{tmp_path / 'memory.db'}"


def setup_file(tmp_path: Path, doc: Obj, name: str = "org.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def with_base(url: str) -> MemoryService:
    """The memory at `url` holding the tests' usual organizations (acme, globex) and a run."""
    svc = MemoryService(make_engine(url))
    replay(parse(json.dumps({**BASE, "events": [start()]})), svc)
    return svc


def sample() -> Obj:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def moments(svc: MemoryService) -> list[str]:
    return [m["what"] for m in svc.moments()]


def file_bytes(url: str) -> str | None:
    """The SQLite file's digest (None on PostgreSQL), to see that a refused setup wrote nothing."""
    if not url.startswith("sqlite:///"):
        return None
    return hashlib.sha256(Path(url.removeprefix("sqlite:///")).read_bytes()).hexdigest()


# --- setup FILE ------------------------------------------------------------------------------------


def test_setup_on_an_empty_memory_adds_the_file_in_one_moment(url):
    ran = memory_cli("setup", str(SAMPLE), "--db", url)
    assert ran.returncode == 0, ran.stderr
    assert "added organizations northwind; people ada, ben; workflows company_research" in ran.stdout
    svc = MemoryService.at(url, existing=True)
    state = svc.export_state()
    assert set(state["organizations"]) == {"northwind"} and set(state["people"]) == {"ada", "ben"}
    assert state["organizations"]["northwind"]["settings"]["AllowEphemeralRuns"] is True
    assert moments(svc) == ["setup"]  # R32: one moment, labelled setup
    doc, _ = svc.export_scenario(where="test")
    assert doc["workflows"] == [{**sample()["workflows"][0], "steps": doc["workflows"][0]["steps"]}]
    assert [s["id"] for s in doc["workflows"][0]["steps"]] == ["plan", "find_hq", "write_up"]
    svc.close()


def test_setup_beside_another_organization_leaves_it_as_it_was(url):
    svc = with_base(url)
    before, taken = svc.export_state(), moments(svc)
    ran = memory_cli("setup", str(SAMPLE), "--db", url)
    assert ran.returncode == 0, ran.stderr
    after = svc.export_state()
    assert set(after["organizations"]) == {"acme", "globex", "northwind"}
    assert {k: after["organizations"][k] for k in ("acme", "globex")} == before["organizations"]
    assert after["runs"] == before["runs"]
    assert moments(svc) == [*taken, "setup"]
    assert [m["what"] for m in svc.moments(org="acme")] == taken  # a moment of Northwind's history alone
    assert svc.moments(org="northwind")[-1]["what"] == "setup"
    assert [w["id"] for w in svc.workflows("northwind")] == ["company_research"]
    assert [w["id"] for w in svc.workflows("acme")] == ["free", "research"]


def test_identical_entries_are_left_as_they_are_without_a_moment(url, tmp_path):
    svc = with_base(url)
    assert memory_cli("setup", str(SAMPLE), "--db", url).returncode == 0
    state, taken = svc.export_state(), moments(svc)
    again = memory_cli("setup", str(SAMPLE), "--db", url)
    assert again.returncode == 0, again.stderr
    assert "nothing added" in again.stdout
    assert svc.export_state() == state and moments(svc) == taken
    # acme as the memory holds it, and a new member of it: only the member is added.
    doc = {**copy.deepcopy(BASE), "events": []}
    doc["people"].append({"id": "kim", "name": "Kim", "memberships": {"acme": "member"}})
    ran = memory_cli("setup", setup_file(tmp_path, doc), "--db", url)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().endswith("added people kim")
    assert {m["id"]: m["role"] for m in svc.members("acme")}["kim"] == "member"
    assert moments(svc) == [*taken, "setup"]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d["organizations"][0].update(name="Acme Corp"), "organization 'acme' already exists"),
        (lambda d: d["organizations"][0].update(settings={"LearnFromUsers": False}), "differs in settings"),
        (lambda d: d["people"][1]["memberships"].pop("globex"), "person 'lee' already exists"),
        (lambda d: d["workflows"][0].update(budget={"MemoryProbes": 3}), "differs in MemoryProbes"),
        (lambda d: d["workflows"][1]["steps"].append({"id": "x", "kind": "tool"}), "workflow 'free' already"),
    ],
)
def test_a_conflicting_entry_is_refused_and_nothing_is_added(url, tmp_path, change, named):
    svc = with_base(url)
    state, taken = svc.export_state(), moments(svc)
    svc.engine.dispose()
    bytes_before = file_bytes(url)
    doc = {**copy.deepcopy(BASE), "events": []}
    change(doc)
    doc["organizations"].append({"id": "initech", "name": "Initech", "owner": "ivy"})
    doc["people"].append({"id": "ivy", "name": "Ivy", "memberships": {"initech": "owner"}})
    path = setup_file(tmp_path, doc)
    written = Path(path).read_bytes()
    ran = memory_cli("setup", path, "--db", url)
    assert ran.returncode == 2 and named in ran.stderr and "nothing was added" in ran.stderr, ran.stderr
    assert file_bytes(url) == bytes_before  # the database file is as it was
    assert Path(path).read_bytes() == written
    svc = MemoryService.at(url, existing=True)
    assert svc.export_state() == state and moments(svc) == taken
    assert "initech" not in {o["id"] for o in svc.organizations()} and "ivy" not in {p["id"] for p in svc.people()}
    svc.close()


def test_a_file_with_events_is_refused_before_any_database_is_touched(url, tmp_path):
    doc = {**copy.deepcopy(BASE), "events": [start()]}
    ran = memory_cli("setup", setup_file(tmp_path, doc), "--db", url)
    assert ran.returncode == 2
    assert "events: setup adds organizations, people and workflows only" in ran.stderr
    assert "this file has events (1): replay or load it" in ran.stderr and "nothing was added" in ran.stderr
    if not SERVER:
        assert not (tmp_path / "memory.db").exists()
    else:
        assert MemoryService.at(url, existing=True).organizations() == []


def test_a_file_that_is_not_of_the_format_names_its_place(url, tmp_path):
    doc = {**sample(), "workflows": [{"id": "w", "org": "nowhere", "steps": []}]}
    ran = memory_cli("setup", setup_file(tmp_path, doc), "--db", url)
    assert ran.returncode == 2 and "workflows[0].org: no organization has the id 'nowhere'" in ran.stderr


# --- unknown_workflow names the organization's workflows -----------------------------------------


def test_unknown_workflow_names_the_organizations_workflows_in_a_replay():
    state = run([{**start(), "workflow": "nope"}, {**start("r2", person="omar", org="globex"), "workflow": "nope"}])
    messages = [r["message"] for r in state["refused"]]
    assert messages == [
        "organization 'acme' has no workflow 'nope'; its workflows: 'free', 'research'",
        "organization 'globex' has no workflow 'nope'; its workflows: none",
    ]


# --- the workflows tool, over stdio and HTTP ------------------------------------------------------


async def _workflows_then_a_wrong_one(c: Client) -> tuple[Obj, Obj, Any]:
    listed = await c.list_tools()
    tool = next(t for t in listed.tools if t.name == "workflows")
    r = await c.call_tool("workflows", {})
    assert not r.is_error, r.content
    wrong = await c.call_tool("start_run", {"workflow": "nope"})
    assert wrong.is_error
    return r.structured_content or {}, wrong.structured_content or {}, tool


def _check(listed: Obj, wrong: Obj, tool: Any) -> None:
    assert listed == NORTHWIND_WORKFLOWS
    assert tool.annotations.read_only_hint is True and tool.input_schema.get("properties", {}) == {}
    assert wrong["reason"] == "unknown_workflow"
    assert wrong["message"] == "organization 'northwind' has no workflow 'nope'; its workflows: 'company_research'"


def test_workflows_over_stdio_for_the_tokens_organization_only(agent_db):
    url, svc = agent_db
    assert memory_cli("setup", str(SAMPLE), "--db", url).returncode == 0
    token = svc.issue_token("ben", org="northwind")

    async def main() -> tuple[Obj, Obj, Any]:
        async with Client(stdio(url, token)) as c:
            return await _workflows_then_a_wrong_one(c)

    _check(*anyio.run(main))
    assert svc.export_state()["runs"] == {}  # listing started nothing


def test_workflows_over_http(agent_db, agent_http):
    url, _ = agent_db
    base, svc, _ = agent_http
    assert memory_cli("setup", str(SAMPLE), "--db", url).returncode == 0
    token = svc.issue_token("ada", org="northwind")

    async def main() -> tuple[Obj, Obj, Any]:
        async with over_http(base, token) as c:
            return await _workflows_then_a_wrong_one(c)

    _check(*anyio.run(main))


# --- the Settings page shows the owner the workflows ---------------------------------------------


def test_settings_shows_the_owner_the_workflows_with_budget_steps_and_shortcut_answers(url, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    assert memory_cli("setup", str(SAMPLE), "--db", url).returncode == 0
    monkeypatch.setenv("MEMORY_DATABASE_URL", url)
    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path / "notebooks"))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/settings_page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.selectbox(key="org").value == "northwind" and at.sidebar.selectbox(key="person").value == "ada"
    shown = "\n".join(m.value for m in at.markdown)
    assert "**company\\_research**: at most 10 graph reads a turn" in shown and "3 steps" in shown
    (steps,) = tables(at, "Step", "Kind", "Shortcut answers (R22)")
    assert steps.to_dict("records") == [
        {"Step": "plan", "Kind": "model", "Admits calls (R19)": "yes", "Shortcut answers (R22)": "—"},
        {
            "Step": "find_hq",
            "Kind": "tool",
            "Admits calls (R19)": "no",
            "Shortcut answers (R22)": "Globex (organization) headquartered_in, at weight 0.9 or more",
        },
        {"Step": "write_up", "Kind": "model", "Admits calls (R19)": "no", "Shortcut answers (R22)": "—"},
    ]


def test_the_readmes_five_commands_name_the_sample_its_owner_and_its_workflow(url):
    """README's "From nothing" commands, run as written against a memory: setup, a token, the workflow."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("### From nothing", 1)[1].split("```", 2)[1]
    (path,) = re.findall(r"memory_core setup (\S+)", block)
    person, org = re.findall(r"token issue (\S+) --org (\S+)\)", block)[0]
    (workflow,) = re.findall(r"--workflow (\S+)", block)
    assert memory_cli("setup", str(ROOT / path), "--db", url).returncode == 0
    issued = memory_cli("token", "issue", person, "--org", org, "--db", url)
    assert issued.returncode == 0 and issued.stdout.startswith("mem_"), issued.stderr
    svc = MemoryService.at(url, existing=True)
    assert workflow in [w["id"] for w in svc.workflows(org)]
    svc.close()
