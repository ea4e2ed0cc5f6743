"""The recall trace (issue #38, point 7): every read of a turn is kept with it. `state --db` shows the
reads as the replay that made them answered them, `export` writes them as `read` events where they
happened, so its replay gives the same state, `probes_used` included; the past shows the reads made
up to a moment (R32); a read goes with its run and account (R29, R30) and its bytes are scrubbed
(R31). On the backend under test, through the command line's own `main` and the SDK's client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backend import SERVER, fresh_service, fresh_url
from helpers import HQ, HQ_REF, scenario, web
from sqlalchemy import select
from sqlmodel import SQLModel
from test_dashboard import app, demo_db, live, page, texts  # noqa: F401 (fixtures)
from test_mcp import Agent, served, session

from memory_core import MemoryService, make_engine, parse, replay
from memory_core.__main__ import main

SECRET = "Zanzibar Quillfeather"  # what a read asked for, and nothing else holds
CHECKER = {"origin": "document", "source": "doc:x", "claims": []}
EVENTS = [
    {"do": "start_run", "run": "r1", "org": "acme", "person": "dana", "workflow": "research"},
    {"do": "open_turn", "run": "r1", "turn": "t1", "request": "Where is Globex?"},
    {"do": "step", "turn": "t1", "step": "lookup", "record": web("https://a.example/", HQ, excerpt="HQ said")},
    {"do": "end_turn", "turn": "t1", "status": "completed"},
    {"do": "open_turn", "run": "r1", "turn": "t2", "request": "And now?"},
    {"do": "read", "turn": "t2", "call": "GraphResolve", "args": {"name": "globex"}},
    {"do": "record", "turn": "t2", **web("https://b.example/", excerpt="b")},
    {"do": "read", "turn": "t2", "step": "draft", "call": "GraphResolve", "args": {"name": SECRET}},
    {"do": "call", "turn": "t2", "work": "agent:checker"},
    {"do": "read", "turn": "t2", "within": "agent:checker", "call": "GraphResolve", "args": {"name": "x"}},
    {"do": "record", "turn": "t2", "within": "agent:checker", **CHECKER},
    {"do": "return", "turn": "t2", "work": "agent:checker", "status": "completed"},
    {"do": "read", "turn": "t2", "step": "plan", "call": "GraphSource", "args": {"fact": HQ_REF}},
    {"do": "read", "turn": "t2", "call": "GraphExpand", "args": {"entity": {"name": SECRET, "kind": "place"}}},
    {"do": "end_turn", "turn": "t2", "status": "completed"},
    {"do": "read", "turn": "t2", "call": "GraphResolve", "args": {"name": "globex"}},
    {"do": "start_run", "run": "r2", "org": "acme", "person": "lee", "workflow": "free"},
    {"do": "open_turn", "run": "r2", "turn": "t3", "request": "Lee asks"},
    {"do": "read", "turn": "t3", "call": "GraphResolve", "args": {"name": SECRET}},
]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def state_of(capsys, url: str, *more: str) -> dict:
    code, out, err = cli(capsys, "state", "--db", url, *more)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def story(capsys, tmp_path):
    """The story replayed into a database: its URL, and the state the replay printed."""
    url = fresh_url("memory_reads") if SERVER else f"sqlite:///{tmp_path / 'story.db'}"
    path = tmp_path / "story.json"
    path.write_text(json.dumps(scenario(EVENTS)), encoding="utf-8")
    code, out, err = cli(capsys, "replay", str(path), "--db", url, "--json")
    assert code == 0, err
    return url, json.loads(out)


def test_state_db_shows_each_read_as_the_replay_answered_it(capsys, story):
    url, replayed = story
    state = state_of(capsys, url)
    assert state["reads"] == replayed["reads"] and state["refused"] == replayed["refused"]
    outcomes = [(r["event"], r["outcome"]) for r in state["reads"]]
    assert outcomes == [
        (5, "ok"),
        (7, "not_offered"),
        (9, "not_offered"),
        (12, "ok"),
        (13, "budget_exhausted"),
        (15, "turn_not_open"),
        (18, "ok"),
    ]
    assert state["reads"][0]["result"][0]["name"] == "Globex"
    assert state["reads"][3]["result"][0]["excerpt"] == "HQ said"  # read again through its record (R24)
    assert state["runs"]["r1"]["turns"]["t2"]["probes_used"] == 2


def test_an_export_replays_to_the_same_state_reads_and_probes_used_included(capsys, tmp_path, story):
    url, _ = story
    state = state_of(capsys, url)
    code, out, err = cli(capsys, "export", "--db", url)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert [i for i, e in enumerate(doc["events"]) if e["do"] == "read"] == [r["event"] for r in state["reads"]]
    path = tmp_path / "export.json"
    path.write_text(out, encoding="utf-8")
    code, out, err = cli(capsys, "replay", str(path), "--json")
    assert code == 0 and json.loads(out) == state


def test_r32_a_past_moment_shows_the_reads_made_up_to_it(capsys, story):
    url, replayed = story
    code, out, _ = cli(capsys, "history", "--db", url, "--json")
    ended = [m["n"] for m in json.loads(out) if m["what"] == "turn_ended" and m["turn"] == "t2"][0]
    assert state_of(capsys, url, "--at", str(ended - 1))["reads"] == []  # right after t2 opened
    at_end = state_of(capsys, url, "--at", str(ended))  # t2's reads came before its end; event 15 after
    assert at_end["reads"] == replayed["reads"][:5] and [r["event"] for r in at_end["refused"]] == [7, 9, 13]
    assert state_of(capsys, url, "--at", str(ended + 1))["reads"] == replayed["reads"][:6]


def test_r29_r30_reads_go_with_their_run_and_account(capsys, story):
    url, _ = story
    svc = MemoryService.at(url, existing=True)
    try:
        svc.delete_run("r1", by="dana")
        assert [r["turn"] for r in state_of(capsys, url)["reads"]] == ["t3"]
        svc.delete_account("lee")
        state = state_of(capsys, url)
        assert state["reads"] == [] and state["refused"] == []
        with svc.engine.connect() as conn:
            dump = "".join(str(row) for t in SQLModel.metadata.sorted_tables for row in conn.execute(select(t)))
        assert SECRET not in dump
    finally:
        svc.close()


def _db_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


@pytest.mark.skipif(bool(SERVER), reason="the SQLite file's bytes")
def test_r31_a_reads_arguments_are_gone_from_the_file_after_erasure_and_db_scrub(capsys, tmp_path):
    db = tmp_path / "memory.db"
    svc = MemoryService(make_engine(f"sqlite:///{db}"))
    engine, _ = replay(parse(json.dumps(scenario(EVENTS))), svc)
    svc.engine.dispose()
    assert SECRET.encode() in _db_bytes(db)  # control: the reads' arguments are in the file
    engine.apply(100, {"do": "delete_run", "run": "r1", "by": "dana"})
    engine.apply(101, {"do": "delete_account", "person": "lee"})
    svc.close()
    code, _, err = cli(capsys, "db", "scrub", "--db", f"sqlite:///{db}")
    assert code == 0, err
    assert SECRET.encode() not in _db_bytes(db)


def test_mcp_reads_are_kept_with_their_turn():
    svc = fresh_service()
    replay(parse(json.dumps(scenario(EVENTS[:4]))), svc)

    async def script(a: Agent) -> str:
        _, turn = await a.turn()
        await a.ok("GraphResolve", {"turn": turn, "name": "globex"})
        await a.ok("GraphExpand", {"turn": turn, "entity": {"name": "Globex", "kind": "organization"}})
        await a.refused("GraphSource", {"turn": turn, "fact": HQ_REF}, "budget_exhausted", "R21")
        return turn

    turn = session(served(svc), script)
    reads = [r for r in svc.read_trace()["reads"] if r["turn"] == turn]
    assert [(r["call"], r["outcome"]) for r in reads] == [
        ("GraphResolve", "ok"),
        ("GraphExpand", "ok"),
        ("GraphSource", "budget_exhausted"),
    ]
    assert reads[0]["args"]["name"] == "globex" and reads[0]["result"][0]["name"] == "Globex"
    assert reads[1]["result"][0]["weight"] > 0.5 and reads[2]["result"] is None


def test_runs_page_shows_what_each_turn_read_and_was_told(app):  # noqa: F811 (the fixture)
    svc = live()
    found = [
        (r["id"], t["id"])
        for r in svc.runs("acme")
        for t in svc.run_detail("acme", r["id"])["turns"]
        if any(k["outcome"] == "ok" and k["result"] for k in svc.turn_reads(t["id"]))
    ]
    assert found, "the demo's acme runs read something"
    app.query_params["run"] = found[0][0]
    said = texts(page(app, "runs"))
    assert "What it read and was told" in said and "being read never supports a fact" in said
    assert "fact-weights?q=" in said  # names link to their weights


def test_fact_weights_says_which_turns_read_a_fact_and_that_reading_never_supports_it(story, app):  # noqa: F811
    url, _ = story
    svc = MemoryService.at(url, existing=True)
    try:
        hq = next(f for f in svc.graph("world", "acme", ids=True)["facts"] if f["relation"] == "headquartered_in")
        assert svc.fact_readers("acme", hq["id"]) == [
            {"run": "r1", "turn": "t2", "call": "GraphSource", "weight": None}
        ]
        assert svc.fact_readers("globex", hq["id"]) == []
    finally:
        svc.close()
    demo = live()
    fact = next(f["id"] for f in demo.graph("world", "acme", ids=True)["facts"] if demo.fact_readers("acme", f["id"]))
    app.query_params["fact"] = str(fact)
    said = texts(page(app, "fact-weights"))
    assert "Read by" in said and "runs?run=" in said and "Being read never supports a fact" in said


def test_r32_the_overview_at_a_moment_counts_the_reads_made_up_to_it(capsys, story):
    url, _ = story
    code, out, _ = cli(capsys, "history", "--db", url, "--json")
    ended = [m["n"] for m in json.loads(out) if m["what"] == "turn_ended" and m["turn"] == "t2"][0]
    svc = MemoryService.at(url, existing=True)
    try:
        count, latest = svc.reads_then("acme", ended)
        assert count == 5 and [r["outcome"] for r in latest][0] == "budget_exhausted"  # newest first
        assert svc.reads_then("acme", ended - 1)[0] == 0 and svc.reads_then("acme", ended + 1)[0] == 6
        assert svc.reads_then("acme", svc.clock())[0] == 7  # now: every read so far
    finally:
        svc.close()


def test_r17_an_ephemeral_runs_reads_go_when_it_ends():
    svc = fresh_service()
    events = [
        {"do": "start_run", "run": "e1", "org": "acme", "person": "dana", "workflow": "free", "ephemeral": True},
        {"do": "open_turn", "run": "e1", "turn": "et", "request": "Quick look"},
        {"do": "read", "turn": "et", "call": "GraphResolve", "args": {"name": SECRET}},
    ]
    engine, _ = replay(parse(json.dumps(scenario(events, settings={"AllowEphemeralRuns": True}))), svc)
    assert [r["turn"] for r in svc.read_trace()["reads"]] == ["et"]
    engine.apply(3, {"do": "end_run", "run": "e1"})
    assert svc.read_trace()["reads"] == [] and svc.turn_reads("et") == []


def test_the_runs_page_says_what_an_exact_miss_was_told_near_and_a_words_read():
    """A new author's trial (#38): an exact GraphResolve that found nothing was told `near` names, and the
    trace must say so (not "told nothing"); a words read says it matched by words."""
    from memory_core.views.reads_trace import trace_lines

    def read(args: dict, result: list, near: list | None) -> dict:
        said = {"call": "GraphResolve", "args": args, "outcome": "ok", "message": None, "result": result}
        return said | {"near": near, "within": None, "step": None}

    hit = {"name": "Acme Robotics", "kind": "organization", "graph": "world"}
    lines = trace_lines(
        [read({"name": "Acme"}, [], [hit]), read({"name": "acme rob", "match": "words"}, [hit | {"aliases": []}], None)]
        + [read({"name": "Nobody"}, [], None)],
        str,
        lambda name: f"[{name}]",
    )
    assert lines[0] == (
        "GraphResolve “Acme” by the turn's model: told nothing by that name; near: [Acme Robotics] (organization, world)"
    )
    assert lines[1].startswith("GraphResolve “acme rob” by words by the turn's model: told [Acme Robotics]")
    assert lines[2].endswith("told nothing")
