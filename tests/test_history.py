"""History (R32 to R34): memory as it stood after any event, every later erasure applied (R33).

The oracle is the contract of `replay --at N` (formats.md, "Looking back"): the state after events
0 to N replayed alone, then every erasure a later event made applied to it, each turn's
`probes_used` null. It runs on the backend under test (SQLite here, PostgreSQL under
.ci/with-postgres)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from backend import SERVER, examples, fresh_service
from helpers import CEO, HQ, HQ_REF, LIKES, PREFERS, claim, end, memory_cli, open_turn, rec, scenario, start, web
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlmodel import SQLModel
from test_erasure import _all_text, _pg_dump_everything

from memory_core import MemoryService, parse, replay
from memory_core.errors import UnknownMoment
from memory_core.format.replay import EventEngine, apply
from memory_core.store.database import make_engine
from memory_core.views.history import diff, moment_label, weight_through_time

ROOT = Path(__file__).resolve().parent.parent
ERASING = ("delete_run", "delete_account", "end_run")


def _later_erasures(svc: MemoryService, doc: dict, n: int, refused: set[int]) -> None:
    """Every erasure an event after `n` made (not refused), applied to the memory as it stood
    after event `n` (R33): a run started later is absent anyway, and only an ephemeral run's end erases."""
    for i in range(n + 1, len(doc["events"])):
        e = doc["events"][i]
        if i in refused or e["do"] not in ERASING:
            continue
        runs = svc.export_state()["runs"]
        if e["do"] in ("delete_run", "end_run") and e["run"] not in runs:
            continue  # started later: absent from the prefix anyway
        if e["do"] == "end_run" and not runs[e["run"]]["ephemeral"]:
            continue  # only an ephemeral run's end erases
        apply(svc, e)


def _looked_back(svc: MemoryService, engine: EventEngine) -> dict:
    state = {**svc.export_state(), "reads": copy.deepcopy(engine.reads), "refused": copy.deepcopy(engine.refused)}
    for r in state["runs"].values():
        for t in r["turns"].values():
            t["probes_used"] = None
    return state


def oracle(doc: dict, n: int, refused: set[int]) -> dict:
    """Events 0..n alone, then every later erasure that was not refused, probes_used null (R33).

    The oracle replays on a private in-memory SQLite memory whatever the backend under test: a
    replay's state is the same on both (the samples' `replay --json` are byte-identical), and what
    is tested is the history of the memory under test (`full`), not the oracle's own backend."""
    prefix = copy.deepcopy(doc)
    prefix["events"] = doc["events"][: n + 1]
    svc = MemoryService(make_engine("sqlite://"))
    engine, _ = replay(parse(json.dumps(prefix)), svc)
    _later_erasures(svc, doc, n, refused)
    return _looked_back(svc, engine)


def oracles(doc: dict, refused: set[int]) -> list[dict]:
    """`oracle(doc, n, refused)` for every n, in one pass: the events applied one at a time to one
    private memory; after each, the later erasures applied in a sandbox (one transaction, rolled
    back) and the state read there. What a replay of events 0..n does is what its first n+1
    applications do (test_the_one_pass_oracle_is_the_prefix_replay holds the two together)."""
    scenario = parse(json.dumps(doc))
    svc = MemoryService(make_engine("sqlite://"))
    engine = EventEngine(svc)
    engine.setup(scenario)
    out = []
    for n, event in enumerate(scenario.events):
        engine.apply(n, event)
        with svc.sandbox() as box:
            _later_erasures(box, doc, n, refused)
            out.append(_looked_back(box, engine))
    return out


def full(doc: dict) -> tuple[MemoryService, object]:
    svc = fresh_service("memory_full")
    engine, _ = replay(parse(json.dumps(doc)), svc)
    return svc, engine


# --- random histories --------------------------------------------------------------------------
SOURCES = ["https://a.example/x", "https://b.example/y", "doc:1", "tool:t"]
CLAIMS = [HQ, CEO, LIKES, PREFERS, claim("Globex", "headquartered_in", "Shelbyville")]


def origin_of(src: str) -> str:
    return "web" if src.startswith("https") else "document" if src.startswith("doc") else "tool"


action = st.one_of(
    st.tuples(
        st.just("turn"),
        st.sampled_from(["r1", "r2", "r3"]),
        st.lists(
            st.tuples(st.sampled_from(SOURCES), st.lists(st.integers(0, len(CLAIMS) - 1), min_size=1, max_size=2)),
            min_size=0,
            max_size=3,
        ),
        st.sampled_from(["completed", "completed", "failed", "open"]),
        st.booleans(),
    ),
    st.tuples(st.just("dispute"), st.sampled_from(["lee", "dana"])),
    st.tuples(st.just("retract")),
    st.tuples(st.just("settings"), st.sampled_from(["LearnFromUsers", "LearnFromEphemeralRuns"]), st.booleans()),
    st.tuples(st.just("delete_run"), st.sampled_from(["r1", "r2"])),
    st.tuples(st.just("delete_account")),
    st.tuples(st.just("end_run"), st.sampled_from(["r2", "r3"])),
    st.tuples(st.just("step"), st.sampled_from(["r1", "r2"])),
)


def build(actions: list) -> dict:
    """A scenario from random actions: runs r1 (Dana), r2 (Lee), r3 (Lee, ephemeral); turns that
    teach, fail, stay open or replace the run's last completed one; disputes, a retraction,
    settings, steps, and erasures (a run, Lee's account, an ephemeral run's end)."""
    events = [start("r1"), start("r2", person="lee"), start("r3", person="lee", ephemeral=True)]
    last_done: dict[str, str] = {}
    open_now: dict[str, str] = {}
    for i, a in enumerate(actions):
        kind = a[0]
        if kind == "turn":
            _, r, records, status, replace = a
            tid, extra = f"t{i}", {}
            if replace and r in last_done:
                extra["replaces"] = last_done.pop(r)
            events.append(open_turn(tid, r, **extra))
            for src, claims in records:
                record = {
                    "origin": origin_of(src),
                    "source": src,
                    "excerpt": f"seen at {src}",
                    "claims": [CLAIMS[c] for c in claims],
                }
                events.append(rec(tid, record))
            if status != "open":
                events.append(end(tid, status))
                if status == "completed":
                    last_done[r] = tid
            else:
                open_now[r] = tid
        elif kind == "dispute":
            events.append({"do": "dispute", "org": "acme", "by": a[1], "fact": HQ_REF})
        elif kind == "retract":
            events.append({"do": "retract", "org": "acme", "by": "dana", "fact": HQ_REF})
        elif kind == "settings":
            events.append({"do": "set_settings", "org": "acme", "by": "dana", "settings": {a[1]: a[2]}})
        elif kind == "delete_run":
            events.append({"do": "delete_run", "run": a[1], "by": "dana"})
        elif kind == "delete_account":
            events.append({"do": "delete_account", "person": "lee"})
        elif kind == "end_run":
            events.append({"do": "end_run", "run": a[1]})
        elif kind == "step" and a[1] in open_now:
            events.append({"do": "step", "turn": open_now[a[1]], "step": "find_hq"})
    return scenario(events, settings={"AllowEphemeralRuns": True})


@settings(max_examples=examples(25), deadline=None)
@given(st.lists(action, min_size=1, max_size=9))
def test_state_after_every_event_is_the_prefix_with_later_erasures(actions):
    doc = build(actions)
    _, engine = full(doc)
    refused = {r["event"] for r in engine.refused}
    for n, want in enumerate(oracles(doc, refused)):
        assert engine.state_at(n) == want, f"after events[{n}] ({doc['events'][n]['do']})"


def test_samples_look_back_exactly():
    """Every event of the samples that replace, dispute and erase."""
    for name in ("replacement_withdraws", "erasure", "disputes_and_retraction", "ephemeral_runs"):
        doc = json.loads((ROOT / "sample_data" / f"{name}.json").read_text())
        _, engine = full(doc)
        refused = {r["event"] for r in engine.refused}
        for n, want in enumerate(oracles(doc, refused)):
            assert engine.state_at(n) == want, (name, n)


@pytest.mark.backend_free  # both oracles replay on private in-memory SQLite memories
@pytest.mark.parametrize("name", ["erasure", "ephemeral_runs"])
def test_the_one_pass_oracle_is_the_prefix_replay(name):
    """The property test's one-pass oracle is the definition's: events 0..n replayed alone, then
    the later erasures (formats.md, "Looking back"), on every prefix of the samples that erase
    (a run, an account, an ephemeral run's end; R29 to R31, R33)."""
    doc = json.loads((ROOT / "sample_data" / f"{name}.json").read_text())
    engine, _ = replay(parse(json.dumps(doc)), MemoryService(make_engine("sqlite://")))
    refused = {r["event"] for r in engine.refused}
    assert oracles(doc, refused) == [oracle(doc, n, refused) for n in range(len(doc["events"]))]


def test_the_newest_moment_is_the_present_but_for_probes():
    doc = build([("turn", "r1", [("doc:1", [0, 1])], "completed", False), ("dispute", "lee")])
    svc, engine = full(doc)
    now = svc.export_state()
    for r in now["runs"].values():
        for t in r["turns"].values():
            t["probes_used"] = None
    assert svc.state_at(svc.clock()) == now


# --- moments a person names ------------------------------------------------------------------------
def test_moments_are_labelled_and_named_by_number_turn_or_time():
    doc = scenario(
        [
            start("r1"),
            open_turn("t1"),
            rec("t1", web("https://a.example/1", HQ)),
            end("t1"),
            {"do": "set_settings", "org": "acme", "by": "dana", "settings": {"LearnFromUsers": False}},
            start("r2", person="lee"),
            {"do": "delete_run", "run": "r2", "by": "dana"},
        ]
    )
    svc, _ = full(doc)
    names = {p["id"]: p["name"] for p in svc.people()}
    labels = [moment_label(m, names) for m in svc.moments()]
    assert labels == [
        "memory set up (organizations, people, workflows)",
        "run r1 started by Dana",
        "t1 opened in r1",
        "t1 completed in r1",
        "Dana turned LearnFromUsers off",
        "a run (deleted since) started",  # R33: the pointer to a run deleted later is null
        "a run deleted by Dana",
    ]
    assert svc.resolve_moment("t1") == 4 and svc.resolve_moment("4") == 4
    at = svc.moments()[3]["at"]
    assert svc.resolve_moment(at) >= 4
    for bad in ("99", "-1", "t9", "yesterday", "1990-01-01T00:00:00Z"):
        with pytest.raises(UnknownMoment):
            svc.resolve_moment(bad)
    assert svc.state_at(4)["organizations"]["acme"]["settings"]["LearnFromUsers"] is True
    assert svc.state_at(5)["organizations"]["acme"]["settings"]["LearnFromUsers"] is False
    assert svc.map_at("acme", 3) == {"kinds": {}, "facts": 0}
    assert svc.map_at("acme", 4) == {"kinds": {"organization": 1, "place": 1}, "facts": 1}


def test_diff_names_added_withdrawn_and_moved_facts_with_their_causes():
    doc = scenario(
        [
            start("r1"),
            *[open_turn("t1"), rec("t1", web("https://a.example/1", HQ, CEO)), end("t1")],
            *[open_turn("t2"), rec("t2", web("https://b.example/1", HQ)), end("t2")],
            open_turn("t3", replaces="t2"),
            {"do": "dispute", "org": "acme", "by": "lee", "fact": HQ_REF},
        ]
    )
    svc, _ = full(doc)
    t1, t2 = svc.resolve_moment("t1"), svc.resolve_moment("t2")
    world = diff(*svc.facts_between(t1, t2))["World acme"]
    assert world["added"] == [] and world["gone"] == []
    (hq,) = world["changed"]
    assert hq["fact"] == "Globex —headquartered_in→ Springfield"
    assert hq["weight"][1] > hq["weight"][0] and hq["supports_added"] == ["web b.example (t2 in r1)"]
    back = diff(*svc.facts_between(t2, svc.clock()))["World acme"]["changed"]
    (hq,) = back
    assert hq["supports_withdrawn"] == ["web b.example (t2 in r1)"] and hq["disputes_added"] == 1
    assert hq["status"] == ["active", "disputed"]
    gone = diff(*svc.facts_between(0, t1))["World acme"]["added"]
    assert {f["fact"] for f in gone} == {"Globex —headquartered_in→ Springfield", "Globex —ceo→ Hank Scorpio"}
    assert diff(*svc.facts_between(t2, t2)) == {}


def test_a_weight_through_time_names_each_cause():
    doc = scenario(
        [
            start("r1"),
            *[open_turn("t1"), rec("t1", web("https://a.example/1", HQ)), end("t1")],
            *[open_turn("t2"), rec("t2", web("https://b.example/1", HQ)), end("t2")],
            open_turn("t3", replaces="t2"),
            {"do": "dispute", "org": "acme", "by": "lee", "fact": HQ_REF},
            {"do": "retract", "org": "acme", "by": "dana", "fact": HQ_REF},
            {"do": "delete_account", "person": "lee"},
        ]
    )
    svc, _ = full(doc)
    (fact,) = [f for f in svc.graph("world", "acme", ids=True)["facts"]]
    h = svc.fact_history(fact["id"])
    steps = weight_through_time(h)
    assert [s["cause"] for s in steps] == [
        "support from web a.example (t1 in r1)",
        "support from web b.example (t2 in r1)",
        "support from web b.example withdrawn when t3 replaced t2",
        "dispute by a deleted account (R28)",  # R33: the account went later
        "retracted by the owner (R28)",
    ]
    assert [round(s["weight"], 3) for s in steps] == [0.6, 0.692, 0.6, 0.209, 0.209]
    assert [s["status"] for s in steps][-2:] == ["disputed", "retracted"]
    assert steps[-1]["weight"] == fact["weight"]


# --- erasure erases history (R33, R31) ------------------------------------------------------------
SECRET_PERSON = "zebulon-quartz"


def _history_of_an_erased_person() -> dict:
    """A person's run taught a World fact in their own words, was replaced (the support is kept in
    history as withdrawn), they disputed, changed nothing else, then their run and account went."""
    doc = scenario(
        [
            start("r1"),
            *[open_turn("t1"), rec("t1", web("https://a.example/1", HQ)), end("t1")],
            start("rz", person=SECRET_PERSON),
            open_turn("z1", "rz"),
            rec("z1", {"origin": "person", "excerpt": "Quartzite-Excerpt-77", "claims": [HQ]}),
            end("z1"),
            open_turn("z2", "rz", replaces="z1"),
            {"do": "dispute", "org": "acme", "by": SECRET_PERSON, "fact": HQ_REF},
            {"do": "delete_run", "run": "rz", "by": SECRET_PERSON},
            {"do": "delete_account", "person": SECRET_PERSON},
        ]
    )
    doc["people"].append({"id": SECRET_PERSON, "name": "Z", "memberships": {"acme": "member"}})
    return doc


def test_history_keeps_nothing_of_an_erased_account_or_run_in_any_table():
    """Every column of every table, history's included, read back on the backend under test."""
    svc = fresh_service()
    engine, _ = replay(parse(json.dumps(_history_of_an_erased_person())), svc)
    assert not engine.refused, engine.refused
    dump = _all_text(svc)
    assert SECRET_PERSON not in dump and "Quartzite-Excerpt-77" not in dump
    assert "Springfield" in dump and "supportgone" in {t.name for t in SQLModel.metadata.sorted_tables}


def test_history_keeps_nothing_of_an_erased_account_or_run_in_the_files(tmp_path):
    """R31 over history: the bytes of the database files (SQLite here; PostgreSQL below)."""
    db = tmp_path / "m.db"
    svc = MemoryService(make_engine(f"sqlite:///{db}"))
    engine, _ = replay(parse(json.dumps(_history_of_an_erased_person())), svc)
    assert not engine.refused, engine.refused
    svc.engine.dispose()
    data = b"".join(p.read_bytes() for p in tmp_path.glob("m.db*"))
    assert SECRET_PERSON.encode() not in data and b"Quartzite-Excerpt-77" not in data
    assert b"Springfield" in data  # control: the World fact is still there


@pytest.mark.skipif(not SERVER, reason="needs PostgreSQL")
@pytest.mark.alone  # the files of the server: no other test writes meanwhile (.ci/test-both)
def test_history_keeps_nothing_of_an_erased_account_or_run_in_postgresql_files():
    svc = fresh_service()
    engine, _ = replay(parse(json.dumps(_history_of_an_erased_person())), svc)
    assert not engine.refused, engine.refused
    assert svc.finish_erasure(timeout=300)["bytes_gone"] is True
    stats, files = _pg_dump_everything(svc)
    for secret in (SECRET_PERSON, "Quartzite-Excerpt-77"):
        assert secret not in stats and secret.encode() not in files


def test_cli_replay_at_and_its_errors(tmp_path):
    doc = build([("turn", "r1", [("doc:1", [0])], "completed", False), ("delete_run", "r1")])
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    out = memory_cli("replay", str(path), "--json", "--at", "5")
    assert out.returncode == 0, out.stderr
    _, engine = full(doc)
    assert json.loads(out.stdout) == oracle(doc, 5, {r["event"] for r in engine.refused})
    for bad in ("-1", str(len(doc["events"]))):
        res = memory_cli("replay", str(path), "--json", "--at", bad)
        assert res.returncode == 2 and "names no event" in res.stderr and not res.stdout


def test_cli_state_diff_and_history(tmp_path):
    doc = build([("turn", "r1", [("doc:1", [0])], "completed", False), ("dispute", "lee")])
    path, db = tmp_path / "s.json", f"sqlite:///{tmp_path / 'm.db'}"
    path.write_text(json.dumps(doc))
    assert memory_cli("replay", str(path), "--db", db).returncode == 0
    then = json.loads(memory_cli("state", "--db", db, "--at", "t0").stdout)
    assert then["organizations"]["acme"]["world"]["facts"][0]["status"] == "active"
    res = memory_cli("state", "--db", db, "--at", "nonsense")
    assert res.returncode == 2 and "no moment 'nonsense'" in res.stderr
    d = json.loads(memory_cli("diff", "--db", db, "--from", "t0", "--to", "7", "--json").stdout)
    assert d["to"]["what"] == "Lee disputed Globex —headquartered_in→ Springfield (world)"  # the fact named (#38.11)
    assert d["graphs"]["World acme"]["changed"][0]["disputes_added"] == 1
    text = memory_cli("diff", "--db", db, "--from", "t0", "--to", "7").stdout
    assert "World acme: 0 added, 0 gone, 1 changed" in text and "\u2193" in text
    listing = memory_cli("history", "--db", db)
    assert listing.returncode == 0 and "t0 completed in r1" in listing.stdout


def test_a_database_from_before_history_starts_at_moment_0(tmp_path):
    """Migration 0008 on a memory made before history: its rows are moment 0 (aliases and the
    map's counters too), and its state at moment 0 is its present state."""
    from memory_core.store.database import upgrade

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url, create=False)
    upgrade(engine, "0007")
    with engine.begin() as conn:  # rows as the 0007 schema held them (written by hand: no old code here)
        conn.exec_driver_sql("INSERT INTO organization VALUES ('acme', 0, 'Acme', 0, 1, 1, 0)")
        conn.exec_driver_sql(
            "INSERT INTO entity VALUES (1, 'world', 'acme', 'organization', 'globex', 'Globex', '[\"Globex Corp\"]', 1)"
        )
        conn.exec_driver_sql(
            "INSERT INTO entity VALUES (2, 'world', 'acme', 'place', 'springfield', 'Springfield', '[]', 1)"
        )
        conn.exec_driver_sql("INSERT INTO alias VALUES (1, 'globex corp')")
        conn.exec_driver_sql(
            "INSERT INTO fact VALUES (1, 'world', 'acme', 1, 'headquartered_in', 2, NULL, 'e:2', 0, "
            "'active', 0.4054651081081644, 0.6, 1)"
        )
        conn.exec_driver_sql(
            "INSERT INTO support VALUES (1, 1, 'a.example', 'web', 0.4054651081081644, NULL, NULL, NULL, NULL)"
        )
        for kind, n in (("organization", 1), ("place", 1), ("", 1)):
            conn.exec_driver_sql(f"INSERT INTO mapcount VALUES ('acme', '{kind}', {n})")
    engine.dispose()
    svc = MemoryService(make_engine(url))  # upgrades to the newest
    assert svc.clock() == 0
    assert svc.state_at(0) == svc.export_state()
    assert svc.state_at(0)["organizations"]["acme"]["world"]["entities"][0]["aliases"] == ["Globex Corp"]
    assert svc.map_at("acme", 0) == {"kinds": {"organization": 1, "place": 1}, "facts": 1}


def test_no_table_and_no_line_of_history_names_an_erased_run_or_its_turns(capsys):
    """#26, points 4 and 6 (R29, R33): after a run is deleted, its id and its turns' ids (a replaced
    one included) are in no column of any table, `used ids` included (kept as keyed digests, which
    still refuse the ids again), and in no line of `history --json`."""
    run, first, second = "run-Obsidian-41", "turn-Obsidian-42", "turn-Obsidian-43"
    doc = scenario(
        [
            start(run),
            *[open_turn(first, run), rec(first, web("https://a.example/1", HQ)), end(first)],
            open_turn(second, run, replaces=first),
            end(second),
            {"do": "delete_run", "run": run, "by": "dana"},
            start(run),  # refused: the id was used (duplicate_id), though no table holds it
            start("r-other"),
            open_turn(first, "r-other"),  # refused too: a turn id is taken for good
        ]
    )
    svc = fresh_service()
    engine, _ = replay(parse(json.dumps(doc)), svc)
    assert [r["reason"] for r in engine.refused] == ["duplicate_id", "duplicate_id"]
    dump = _all_text(svc)
    assert "Obsidian" not in dump and "Springfield" in dump
    labels = [moment_label(m, {p["id"]: p["name"] for p in svc.people()}) for m in svc.moments()]
    assert "a run deleted by Dana" in labels and not any("Obsidian" in x for x in labels)
    assert "Obsidian" not in json.dumps(svc.moments())
