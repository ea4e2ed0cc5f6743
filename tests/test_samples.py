"""The shipped samples: every file replays and tells the story its description tells.

One test per story file, named after the rules it shows; each replays the file and checks
the facts a reader is told to watch for. Refusals are compared exactly: a sample's refusals
are all deliberate, and any other one would mean the story broke.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from backend import fresh_service

from memory_core import MemoryService, load, make_engine, replay

SAMPLES = Path(__file__).parent.parent / "sample_data"
ALL_SAMPLES = sorted(SAMPLES.glob("*.json"))
STORIES = {
    "completed_failed_cancelled.json",
    "replacement_withdraws.json",
    "nested_work_learned_once.json",
    "independent_sources.json",
    "ephemeral_runs.json",
    "learn_from_users.json",
    "search_surface.json",
    "disputes_and_retraction.json",
    "reads_budget_and_shortcuts.json",
    "erasure.json",
}
WORLD_KINDS = {"person", "place", "organization", "event", "idea"}
NOTHING_TAUGHT = {"world": 0, "user": 0, "flow": 0}

Obj = dict[str, Any]


def replay_sample(name: str, svc: MemoryService | None = None) -> Obj:
    """Replay a sample file on a fresh memory (in-memory SQLite unless given) and return the state."""
    engine, _ = replay(load(str(SAMPLES / name)), svc or fresh_service())
    return engine.state()


def fact(facts: list[Obj], subject: str, relation: str, obj: str | None = None) -> Obj | None:
    """The fact with this subject name and relation (and object name or value, if given), or None."""
    for f in facts:
        if f["subject"]["name"] == subject and f["relation"] == relation:
            if obj is None or obj in (f["object"].get("name"), f["object"].get("value")):
                return f
    return None


def refusals(state: Obj) -> list[tuple[int, str, str]]:
    return [(r["event"], r["do"], r["reason"]) for r in state["refused"]]


def w3(fact_or_read: Obj | None) -> float:
    assert fact_or_read is not None
    return round(fact_or_read["weight"], 3)


def names(entities: list[Obj]) -> set[str]:
    return {e["name"] for e in entities}


# --- every file ----------------------------------------------------------------------------


def test_sample_data_holds_the_stories_and_the_demo():
    assert {p.name for p in ALL_SAMPLES} == STORIES | {"demo.json"}


@pytest.mark.parametrize("path", ALL_SAMPLES, ids=lambda p: p.name)
def test_sample_has_title_and_description(path: Path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc.get("title", "").strip()
    assert doc.get("description", "").strip()
    if path.name != "demo.json":
        assert re.search(r"\bR\d+", doc["description"]), "a story's description cites the rules it shows"


# --- the stories ---------------------------------------------------------------------------


def test_r1_r2_completed_failed_cancelled():
    state = replay_sample("completed_failed_cancelled.json")
    world = state["organizations"]["harbor"]["world"]
    turns = state["runs"]["r1"]["turns"]

    # R1: t1 teaches its three facts once, when it completes.
    assert turns["t1"]["status"] == "completed"
    assert turns["t1"]["taught"] == {"world": 4, "user": 0, "flow": 4}
    assert len(world["facts"]) == 3
    supplies = fact(world["facts"], "PalletCo", "supplies", "Harbor Logistics")
    assert supplies is not None and supplies["sources"] == 2 and w3(supplies) == 0.931
    assert w3(fact(world["facts"], "PalletCo", "headquartered_in", "Rotterdam")) == 0.9
    assert w3(fact(world["facts"], "PalletCo", "supplies_since", "2019")) == 0.6

    # R2: the failed t2 and the cancelled t3 teach nothing, to any graph.
    assert turns["t2"]["status"] == "failed" and turns["t2"]["taught"] == NOTHING_TAUGHT
    assert turns["t3"]["status"] == "cancelled" and turns["t3"]["taught"] == NOTHING_TAUGHT
    assert names(world["entities"]) == {"Harbor Logistics", "PalletCo", "Rotterdam"}
    assert fact(world["facts"], "PalletCo", "exhibits_at") is None
    assert fact(world["facts"], "Ingrid Vos", "managing_director_of") is None
    flow = state["runs"]["r1"]["flow"]["facts"]
    assert len(flow) == 3 and fact(flow, "Ingrid Vos", "managing_director_of") is None

    # R18: each map is the world graph as the turn opened.
    assert turns["t1"]["map"] == {"kinds": {}, "facts": 0}
    for t in ("t2", "t3", "t4"):
        assert turns[t]["map"] == {"kinds": {"organization": 2, "place": 1}, "facts": 3}

    # The one refusal is deliberate: completing t1 twice (R1).
    assert refusals(state) == [(11, "end_turn", "turn_not_open")]

    # t4's GraphExpand serves only t1's facts.
    (read,) = state["reads"]
    assert (read["turn"], read["call"], read["outcome"]) == ("t4", "GraphExpand", "ok")
    assert sorted(f["relation"] for f in read["result"]) == ["headquartered_in", "supplies", "supplies_since"]


def test_r3_replacement_withdraws():
    state = replay_sample("replacement_withdraws.json")
    world = state["organizations"]["fjord"]["world"]
    turns = state["runs"]["r1"]["turns"]

    # t2 is replaced and shows all-zero taught counts.
    assert turns["t2"]["status"] == "replaced" and turns["t2"]["taught"] == NOTHING_TAUGHT

    # R3: Bergen keeps only t1's support, back to 0.600.
    hq = fact(world["facts"], "Fjord Outfitters", "headquartered_in", "Bergen")
    assert hq is not None and w3(hq) == 0.6 and hq["sources"] == 1
    assert [s["turn"] for s in hq["supports"]] == ["t1"]

    # Facts only t2 supported are gone with the Stavanger entity; t3's stores stand alone.
    assert fact(world["facts"], "Fjord Outfitters", "has_store_in", "Stavanger") is None
    assert "Stavanger" not in names(world["entities"])
    assert names(world["entities"]) == {"Bergen", "Fjord Outfitters", "Oslo", "Tromsø"}
    for store in ("Tromsø", "Oslo"):
        f = fact(world["facts"], "Fjord Outfitters", "has_store_in", store)
        assert f is not None and w3(f) == 0.75
        assert [s["turn"] for s in f["supports"]] == ["t3"]

    # ...in all three graphs: Astrid's preference and the run's flow fact are gone too.
    assert state["people"]["astrid"]["user"]["facts"] == []
    flow = state["runs"]["r1"]["flow"]["facts"]
    assert len(flow) == 3 and fact(flow, "Regional report", "covers") is None

    # R18: t3's map is taken after the withdrawal.
    assert turns["t3"]["map"] == {"kinds": {"organization": 1, "place": 1}, "facts": 1}
    assert turns["t3"]["taught"] == {"world": 2, "user": 0, "flow": 2}
    assert turns["t5"]["map"]["facts"] == 3

    # Deliberate refusal: t2 is already replaced (R3); t4 never opened.
    assert refusals(state) == [(12, "open_turn", "not_allowed")]
    assert "t4" not in turns

    (read,) = state["reads"]
    assert sorted(f["object"]["name"] for f in read["result"]) == ["Bergen", "Oslo", "Tromsø"]
    assert w3(fact(read["result"], "Fjord Outfitters", "headquartered_in")) == 0.6


def test_r4_r5_nested_work_learned_once():
    state = replay_sample("nested_work_learned_once.json")
    world = state["organizations"]["tern"]["world"]
    r1, r2 = state["runs"]["r1"], state["runs"]["r2"]

    # R5: the completed agent and called workflow are learned once, when t1 completes.
    assert r1["turns"]["t1"]["taught"] == {"world": 4, "user": 0, "flow": 4}
    assert {f["relation"] for f in world["facts"]} == {"company_number", "develops", "headquartered_in"}
    hq = fact(world["facts"], "Brightwater Energy", "headquartered_in", "Aberdeen")
    assert hq is not None and hq["sources"] == 2 and w3(hq) == 0.931

    # R5, R7: the failed debater and the cancelled second call contribute nothing, to any graph.
    for graph in (world["facts"], r1["flow"]["facts"]):
        assert len(graph) == 3
        assert fact(graph, "Brightwater Energy", "acquired_by") is None
        assert fact(graph, "Fiona Reid", "ceo_of") is None
    assert not {"Northsea Power", "Fiona Reid"} & names(world["entities"])

    # R6: Rosa's u1, opened while t1 was open, sees nothing; u2 sees the three facts.
    assert r2["turns"]["u1"]["map"] == {"kinds": {}, "facts": 0}
    assert r2["turns"]["u2"]["map"]["facts"] == 3

    # Deliberate refusals: a read from nested work (R4), ending t1 with the debater open (R5).
    assert refusals(state) == [(5, "read", "not_offered"), (16, "end_turn", "nested_open")]

    reads = {r["event"]: r for r in state["reads"]}
    assert reads[2]["outcome"] == "ok" and reads[2]["result"] == []
    assert reads[5]["outcome"] == "not_offered" and reads[5]["result"] is None
    assert reads[12]["turn"] == "u1" and reads[12]["result"] == []
    assert reads[23]["turn"] == "u2" and len(reads[23]["result"]) == 3


def test_r25_r26_independent_sources():
    state = replay_sample("independent_sources.json")
    world = state["organizations"]["meridian"]["world"]

    # R25: six supports, four sources (skyline-news x3 with and without www., dresden-economy,
    # SEMIWIRE with a port, the annual report).
    plant = fact(world["facts"], "Aurora Chips", "has_plant_in", "Dresden")
    assert plant is not None and plant["sources"] == 4 and len(plant["supports"]) == 6
    assert [s["key"] for s in plant["supports"]] == [
        "skyline-news.example",
        "skyline-news.example",
        "dresden-economy.example",
        "semiwire.example",
        "skyline-news.example",
        "doc:aurora-annual-report-2025",
    ]
    assert w3(plant) == 0.91  # R26: three web hosts and a document

    # The document repeated in a second record stays one source: document + tool.
    founded = fact(world["facts"], "Aurora Chips", "founded_in", "2011")
    assert founded is not None and founded["sources"] == 2 and len(founded["supports"]) == 3
    assert w3(founded) == 0.964

    # The reads log shows the weight as each turn saw it: 0.600, 0.692, 0.771.
    expands = [r for r in state["reads"] if r["call"] == "GraphExpand"]
    assert [r["turn"] for r in expands] == ["t2", "t3", "t4"]
    assert [(w3(r["result"][0]), r["result"][0]["sources"]) for r in expands] == [(0.6, 1), (0.692, 2), (0.771, 3)]

    # GraphSource (R23) lists each support with its key and excerpt.
    sources = [r for r in state["reads"] if r["call"] == "GraphSource"]
    assert [len(r["result"]) for r in sources] == [6, 3]
    assert [s["key"] for s in sources[1]["result"]] == [
        "doc:aurora-annual-report-2025",
        "tool:company-registry",
        "doc:aurora-annual-report-2025",
    ]
    assert all(s["excerpt"] for r in sources for s in r["result"])

    assert refusals(state) == []


def test_r11_r12_r16_r17_ephemeral_runs():
    state = replay_sample("ephemeral_runs.json")
    runs = state["runs"]
    world = state["organizations"]["wren"]["world"]

    # R11: asked for as ephemeral while not allowed: stored as permanent, and it teaches.
    assert runs["e1"]["requested_ephemeral"] is True and runs["e1"]["ephemeral"] is False
    assert runs["e1"]["turns"]["t1"]["taught"] == {"world": 1, "user": 1, "flow": 2}
    assert w3(fact(world["facts"], "EU Data Act", "applies_from", "2025-09-12")) == 0.75
    ben = state["people"]["ben"]["user"]["facts"]
    assert len(ben) == 1 and fact(ben, "Ben Novak", "prefers", "Plain-language summaries") is not None

    # R12, R17: e2 taught the world graph, then was erased; its supports point nowhere.
    assert "e2" not in runs
    for relation in ("located_in", "supervises"):
        f = fact(world["facts"], "Dutch Data Authority", relation)
        assert f is not None and w3(f) == 0.6
        assert [(s["run"], s["turn"], s["record"]) for s in f["supports"]] == [(None, None, None)]
    assert fact(ben, "Ben Novak", "prefers", "Citations with links") is None  # R9

    # R16: LearnFromEphemeralRuns turned off while t3 was open: R8a and R9 skip its claims.
    assert runs["e3"]["ephemeral"] is True
    t3 = runs["e3"]["turns"]["t3"]
    assert t3["skipped"] == [
        {"record": "t3#1", "claim": 0, "rule": "R8a"},
        {"record": "t3#1", "claim": 1, "rule": "R9"},
    ]
    assert t3["taught"] == {"world": 0, "user": 0, "flow": 2}  # R7: both still in the flow graph
    assert fact(ben, "Ben Novak", "follows_topic") is None

    # R12: the permanent run p4 still teaches the world graph.
    penalties = fact(world["facts"], "EU Data Act", "penalties_set_by", "EU member states")
    assert penalties is not None and [s["run"] for s in penalties["supports"]] == ["p4"]

    assert state["organizations"]["wren"]["settings"]["AllowEphemeralRuns"] is True
    assert state["organizations"]["wren"]["settings"]["LearnFromEphemeralRuns"] is False

    # Deliberate refusal: Ben is not the owner (R15).
    assert refusals(state) == [(4, "set_settings", "not_owner")]


def test_r8c_r13_learn_from_users():
    state = replay_sample("learn_from_users.json")
    world = state["organizations"]["northgate"]["world"]
    turns = state["runs"]["r1"]["turns"]

    # LearnFromUsers on: Tom's words (request and answer) are world facts, keyed by his id.
    leeds = fact(world["facts"], "Northgate Studio", "has_office_in", "Leeds")
    assert leeds is not None and w3(leeds) == 0.85 and [s["key"] for s in leeds["supports"]] == ["tom"]
    for relation in ("scheduled_on", "held_in"):
        assert w3(fact(world["facts"], "Atlas Housing kickoff", relation)) == 0.85

    # Off (R13): both person-origin world claims of t2 are skipped with R8c; the web one is learned.
    assert turns["t2"]["skipped"] == [
        {"record": "t2#0", "claim": 0, "rule": "R8c"},
        {"record": "t2#1", "claim": 0, "rule": "R8c"},
    ]
    assert turns["t2"]["taught"] == {"world": 1, "user": 1, "flow": 4}

    # Back on, t3 adds Tom as a source: web + person, 0.895; Ruth's skipped answer is no source.
    manchester = fact(world["facts"], "Northgate Studio", "has_office_in", "Manchester")
    assert manchester is not None and w3(manchester) == 0.895
    assert [(s["key"], s["turn"]) for s in manchester["supports"]] == [
        ("manchester-property.example", "t2"),
        ("tom", "t3"),
    ]

    # R9: LearnFromUsers does not gate the user graph.
    tom = state["people"]["tom"]["user"]["facts"]
    assert {f["object"]["name"] for f in tom} == {"Morning meetings", "Short agendas"}

    # R7: every claim lands in the flow graph, the skipped ones too.
    flow_manchester = fact(state["runs"]["r1"]["flow"]["facts"], "Northgate Studio", "has_office_in", "Manchester")
    assert flow_manchester is not None
    assert [s["key"] for s in flow_manchester["supports"]] == ["tom", "ruth", "manchester-property.example", "tom"]

    assert refusals(state) == []


def test_r8b_r8d_r9_search_surface():
    state = replay_sample("search_surface.json")
    runs = state["runs"]
    world = state["organizations"]["kestrel"]["world"]

    # R11: a Search run may be ephemeral with AllowEphemeralRuns off.
    assert runs["s1"]["surface"] == "search" and runs["s1"]["ephemeral"] is True
    assert state["organizations"]["kestrel"]["settings"]["AllowEphemeralRuns"] is False

    # Ephemeral Search: world claims skipped with R8b (before R8d, R10), user claims with R9.
    q1 = runs["s1"]["turns"]["q1"]
    assert q1["skipped"] == [
        {"record": "q1#0", "claim": 0, "rule": "R8b"},
        {"record": "q1#0", "claim": 1, "rule": "R9"},
        {"record": "q1#1", "claim": 0, "rule": "R8b"},
        {"record": "q1#1", "claim": 1, "rule": "R9"},
    ]
    assert q1["taught"] == {"world": 0, "user": 0, "flow": 4}
    assert fact(world["facts"], "Lisbon Congress Centre", "located_in") is None

    # Permanent Search: Kai's typed words are skipped (R8d, R9); the web evidence teaches.
    q2 = runs["s2"]["turns"]["q2"]
    assert q2["skipped"] == [
        {"record": "q2#0", "claim": 0, "rule": "R8d"},
        {"record": "q2#0", "claim": 1, "rule": "R9"},
    ]
    assert q2["taught"] == {"world": 1, "user": 1, "flow": 4}
    flies = fact(world["facts"], "Atlantica Air", "flies_to", "Oslo")
    assert flies is not None and w3(flies) == 0.6 and [s["run"] for s in flies["supports"]] == ["s2"]
    kai = state["people"]["kai"]["user"]["facts"]
    assert [(f["relation"], f["object"]["name"]) for f in kai] == [("planning_trip_to", "Oslo")]

    # The same words in a workflow run are learned: the hub fact's one support is w1's.
    hub = fact(world["facts"], "Atlantica Air", "has_hub_in", "Lisbon")
    assert hub is not None and w3(hub) == 0.85 and [s["run"] for s in hub["supports"]] == ["w1"]
    assert {f["relation"] for f in world["facts"]} == {"flies_to", "has_hub_in"}

    # R17: ending ephemeral Search run s3 erased it.
    assert "s3" not in runs

    assert refusals(state) == []


def test_r28_disputes_and_retraction():
    state = replay_sample("disputes_and_retraction.json")
    world = state["organizations"]["calder"]["world"]
    turns = state["runs"]["r2"]["turns"]

    # Retracted headquarters: new supports still attach (0.692) but it stays retracted.
    hq = fact(world["facts"], "Delta Freight", "headquartered_in", "Lyon")
    assert hq is not None and hq["status"] == "retracted" and w3(hq) == 0.692
    assert [s["run"] for s in hq["supports"]] == ["r1", "r2"]

    # Jon's dispute pushed 1998 below 0.5; the registry lifts it back: 0.877, active.
    founded = fact(world["facts"], "Delta Freight", "founded_in", "1998")
    assert founded is not None and founded["status"] == "active" and w3(founded) == 0.877
    assert [(d["by"], round(d["contribution"], 3)) for d in founded["disputes"]] == [("jon", 1.735)]

    # Ria's dispute only weakens the CEO fact: 0.900 to 0.614, still active.
    ceo = fact(world["facts"], "Claire Martin", "ceo_of", "Delta Freight")
    assert ceo is not None and ceo["status"] == "active" and w3(ceo) == 0.614
    assert [d["by"] for d in ceo["disputes"]] == ["ria"]

    # Disputed and retracted facts are in no map and no read (R18, R23).
    assert turns["t2"]["map"] == {"kinds": {"organization": 1, "person": 1}, "facts": 1}
    first, second = state["reads"]
    assert [(f["subject"]["name"], f["relation"]) for f in first["result"]] == [("Claire Martin", "ceo_of")]
    assert {f["relation"] for f in second["result"]} == {"ceo_of", "founded_in"}

    # Flow facts are not corrected: the shortlist fact stands untouched.
    shortlist = fact(state["runs"]["r1"]["flow"]["facts"], "Carrier shortlist", "includes")
    assert shortlist is not None and shortlist["status"] == "active" and shortlist["disputes"] == []

    # All refusals deliberate: Jon's second dispute, a member's retraction, a Flow dispute, an unknown fact.
    assert refusals(state) == [
        (9, "dispute", "not_allowed"),
        (11, "retract", "not_owner"),
        (13, "dispute", "not_allowed"),
        (14, "dispute", "unknown_fact"),
    ]


def test_r19_r21_r22_reads_budget_and_shortcuts():
    state = replay_sample("reads_budget_and_shortcuts.json")
    world = state["organizations"]["cobalt"]["world"]
    t1, t2 = state["runs"]["r1"]["turns"]["t1"], state["runs"]["r1"]["turns"]["t2"]

    # R21: three probes; the refused 'draft' read and the fourth read do not count.
    assert t1["probes_used"] == 3
    assert [(r["event"], r["outcome"]) for r in state["reads"]] == [
        (6, "ok"),
        (10, "not_offered"),
        (11, "ok"),
        (12, "ok"),
        (13, "budget_exhausted"),
        (18, "ok"),
        (19, "ok"),
    ]
    # R20, R23: Rival Forge's belief is invisible; R6: nothing of t1 is readable while it is open.
    for r in state["reads"][:5]:
        assert r["result"] in ([], None)
    assert fact(world["facts"], "Kestrel Metals", "headquartered_in", "Leeds") is None
    assert fact(state["organizations"]["rival"]["world"]["facts"], "Kestrel Metals", "headquartered_in", "Leeds")

    # R22: in t2 registry_lookup is skipped by a shortcut at 0.964; ceo_lookup (0.600) runs.
    skipped, ran = t2["steps"]
    assert skipped["step"] == "registry_lookup" and skipped["ran"] is False
    assert skipped["shortcut"]["fact"] == {
        "subject": {"name": "Kestrel Metals", "kind": "organization"},
        "relation": "headquartered_in",
        "object": {"name": "Sheffield", "kind": "place"},
        "graph": "world",
    }
    assert w3(skipped["shortcut"]) == 0.964
    assert ran == {"step": "ceo_lookup", "ran": True, "shortcut": None}
    assert t2["probes_used"] == 2  # the shortcut's look-up is not a probe

    # The skipped step took no record number: ceo_lookup's record is t2#1.
    led_by = fact(world["facts"], "Kestrel Metals", "led_by", "Owen Price")
    assert led_by is not None and w3(led_by) == 0.692
    assert [s["record"] for s in led_by["supports"]] == ["t1#3", "t2#1"]

    # R23: resolving ignores case and spacing, and finds the world and the flow entity.
    assert [x["graph"] for x in state["reads"][5]["result"]] == ["world", "flow"]

    # R14: with NoMemoryShortcuts on, the step runs in t3; the same registry adds no source.
    assert state["organizations"]["cobalt"]["settings"]["NoMemoryShortcuts"] is True
    assert state["runs"]["r2"]["turns"]["t3"]["steps"] == [{"step": "registry_lookup", "ran": True, "shortcut": None}]
    hq = fact(world["facts"], "Kestrel Metals", "headquartered_in", "Sheffield")
    assert hq is not None and w3(hq) == 0.964 and hq["sources"] == 2 and len(hq["supports"]) == 3

    # Deliberate refusals: the 'draft' step admits no calls (R19), the fourth read (R21).
    assert refusals(state) == [(10, "read", "not_offered"), (13, "read", "budget_exhausted")]


def _db_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def test_r29_r30_r31_erasure(tmp_path: Path):
    db = tmp_path / "memory.db"  # a file, so that R31 can be checked in its bytes
    svc = MemoryService(make_engine(f"sqlite:///{db}"))
    state = replay_sample("erasure.json", svc)
    svc.engine.dispose()
    world = state["organizations"]["juniper"]["world"]

    # R29: both runs deleted; the Valencia supports stay with null pointers and 0.692.
    hq = fact(world["facts"], "Molinos del Sol", "headquartered_in", "Valencia")
    assert hq is not None and w3(hq) == 0.692 and hq["sources"] == 2
    assert [(s["run"], s["turn"], s["record"]) for s in hq["supports"]] == [(None, None, None)] * 2

    # GraphSource in t3, after r1 was deleted: r1's support has no pointer and no excerpt.
    (read,) = state["reads"]
    erased, kept = read["result"]
    assert (erased["run"], erased["record"], erased["excerpt"]) == (None, None, None)
    assert kept["run"] == "r2" and kept["excerpt"]

    # R30: Luis's account and user graph are gone; r3 stays with its person erased.
    assert set(state["people"]) == {"hana", "zoe"}
    assert set(state["runs"]) == {"r3"} and state["runs"]["r3"]["person"] is None
    t4 = state["runs"]["r3"]["turns"]["t4"]
    assert t4["skipped"] == [{"record": "t4#0", "claim": 0, "rule": "R30"}]  # R10
    assert w3(fact(world["facts"], "Molinos del Sol", "certified_for")) == 0.75

    # Deliberate refusals: Zoe deleting Luis's run, a turn in r3, deleting the owner's account.
    assert refusals(state) == [
        (8, "delete_run", "not_allowed"),
        (18, "open_turn", "unknown_person"),
        (19, "delete_account", "not_allowed"),
    ]

    # R31: the erased text is nowhere in the database files.
    data = _db_bytes(db)
    assert b"certified under the EU organic regulation" in data  # control: r3's evidence stays
    for text in (
        "Find organic flour mills near Valencia",  # r1's request
        "Molinos del Sol mills organic flour",  # r1's record
        "Spanish-language sources",  # Luis's user graph and r1's flow graph
        "Molinos del Sol (Valencia), organic flours since 1987",  # r2's record
        "Where does the Valencia fact come from?",  # r2's request in t3
    ):
        assert text.encode() not in data, text


# --- the demo ------------------------------------------------------------------------------


def test_demo_thresholds():
    doc = json.loads((SAMPLES / "demo.json").read_text(encoding="utf-8"))
    state = replay_sample("demo.json")
    world = state["organizations"]["acme"]["world"]  # the main organization, Acme Robotics

    assert len(doc["people"]) >= 3
    assert sum(e["do"] == "start_run" for e in doc["events"]) >= 12
    assert len(world["entities"]) >= 60
    assert {e["kind"] for e in world["entities"]} == WORLD_KINDS
    assert len(world["facts"]) >= 150
    weights = [f["weight"] for f in world["facts"]]
    assert any(w <= 0.6 for w in weights) and any(w >= 0.95 for w in weights)
    assert sum(f["status"] == "disputed" for f in world["facts"]) >= 2
    assert state["refused"] == []
