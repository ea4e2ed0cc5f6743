"""R20 (who sees what) and R23's evidence elsewhere: the pure rules alone, then the store's SQL
copies of them held against the rules on this backend (the suite runs on SQLite and PostgreSQL).

The rules live in memory_core/rules/visibility.py; the graph reads' SQL (store/probes.py: the
general path everywhere, PostgreSQL's one-statement read) writes R20 as a WHERE clause, and
GraphSource writes R23's withholding in its loop. The differential tests build a memory where
every graph holds the same names, then ask every open turn for every name and compare the answer
with what the rules say that turn may see, computed from the exported state alone.
"""

from __future__ import annotations

import json

import pytest
from helpers import end, entity, open_turn, rec, scenario, start

from memory_core import parse, replay
from memory_core.rules.visibility import evidence_elsewhere, owners, sees, visible

# --- the rules alone -------------------------------------------------------------------------------


def test_r20_a_turn_sees_its_organizations_world_its_persons_user_and_its_runs_flow():
    assert owners(run_id="r1", org_id="acme", person_id="dana") == {"world": "acme", "user": "dana", "flow": "r1"}
    assert visible(run_id="r1", org_id="acme", person_id="dana") == [
        ("world", "acme"),
        ("user", "dana"),
        ("flow", "r1"),
    ]
    for graph, owner in [("world", "globex"), ("user", "lee"), ("flow", "r2"), ("galaxy", "acme")]:
        assert not sees(graph, owner, run_id="r1", org_id="acme", person_id="dana")


def test_r20_a_run_whose_person_was_erased_sees_no_user_graph():
    assert visible(run_id="r1", org_id="acme", person_id=None) == [("world", "acme"), ("flow", "r1")]
    assert not sees("user", "dana", run_id="r1", org_id="acme", person_id=None)


@pytest.mark.parametrize(
    ("support_org", "reader_org", "withheld"),
    [("acme", "acme", False), ("globex", "acme", True), (None, "acme", False), ("globex", None, False)],
)
def test_r23_evidence_taught_in_another_organization_is_withheld(support_org, reader_org, withheld):
    assert evidence_elsewhere(support_org, reader_org=reader_org) is withheld


# --- the SQL copies, against the rules --------------------------------------------------------------

PEOPLE_RUNS = [("r1", "dana", "acme"), ("r2", "lee", "acme"), ("g1", "omar", "globex"), ("g2", "lee", "globex")]
#: Names each graph holds alone (a turn that saw a graph it must not would find one), and one all share.
NAMES = ["Globex"] + [
    f"{w} of {x}" for r, p, o in PEOPLE_RUNS for w, x in (("HQ", o), ("Seat", o), ("Taste", p), ("Lead", r))
]


def _taught_everywhere() -> list[dict]:
    """Each run teaches the same names into its World, its person's User and its own Flow graph,
    then opens a turn that reads (free: no cap, so every read is served)."""
    events: list[dict] = []
    for run_id, person, org in PEOPLE_RUNS:
        events.append(start(run_id, person=person, org=org, workflow="free" if org == "acme" else None))
        claims = [
            {
                "graph": "world",
                "subject": entity("Globex"),
                "relation": "headquartered_in",
                "object": {"name": f"HQ of {org}", "kind": "place", "aliases": [f"Seat of {org}"]},
            },
            {
                "graph": "user",
                "subject": entity("Tea", "preference"),
                "relation": "liked_by",
                "object": entity(f"Taste of {person}", "person"),
            },
            {
                "graph": "flow",
                "subject": entity(f"Lead of {run_id}"),
                "relation": "competes_with",
                "object": entity("Globex"),
            },
        ]
        record = {"origin": "web", "source": f"https://{run_id}.example/", "claims": claims}
        events += [open_turn(f"{run_id}t1", run_id=run_id), rec(f"{run_id}t1", record), end(f"{run_id}t1")]
        events.append(open_turn(f"{run_id}t2", run_id=run_id))
    return events


def _replayed(svc):
    """The memory of _taught_everywhere in `svc` (globex's runs on a workflow of its own, no cap)."""
    doc = scenario(_taught_everywhere())
    doc["workflows"].append({"id": "open", "org": "globex", "steps": []})
    for e in doc["events"]:
        if e.get("do") == "start_run" and e.get("org") == "globex":
            e["workflow"] = "open"
    engine, _ = replay(parse(json.dumps(doc)), svc)
    return engine


def _oracle(state: dict, run_id: str, person: str, org: str, name: str) -> set[tuple[str, str]]:
    """What R20 and R23 say a turn of this run finds for `name`: entities of active facts, named so,
    in the graphs the rule lets it see."""
    graphs = {("world", o): g["world"] for o, g in state["organizations"].items()}
    graphs |= {("user", p): g["user"] for p, g in state["people"].items()}
    graphs |= {("flow", r): g["flow"] for r, g in state["runs"].items()}
    found = set()
    for (graph, owner), g in graphs.items():
        if not sees(graph, owner, run_id=run_id, org_id=org, person_id=person):
            continue
        active = {e["name"] for f in g["facts"] if f["status"] == "active" for e in (f["subject"], f["object"])}
        for e in g["entities"]:
            if e["name"] in active and name.casefold() in {n.casefold() for n in [e["name"], *e["aliases"]]}:
                found.add((graph, e["name"]))
    return found


def test_r20_the_graph_reads_sql_finds_exactly_what_the_rule_lets_each_turn_see(svc):
    """GraphResolve through the facade (on PostgreSQL the one-statement read, elsewhere the general
    path) against the rule, for every open turn and every name: nothing more, nothing less."""
    engine = _replayed(svc)
    state = engine.state()
    for run_id, person, org in PEOPLE_RUNS:
        for name in NAMES:
            answer = svc.read(f"{run_id}t2", call="GraphResolve", args={"name": name}).result
            assert {(e["graph"], e["name"]) for e in answer} == _oracle(state, run_id, person, org, name), (
                run_id,
                name,
            )
            assert len(answer) == len({(e["graph"], e["name"]) for e in answer})  # one answer per graph


def test_r23_graph_source_withholds_evidence_taught_in_another_organization(svc):
    """Lee's User fact was taught in an acme run and a globex run: read from globex, the acme support
    keeps origin and contribution and loses key and pointer, as the rule says, and the reverse."""
    _replayed(svc)
    fact = {"subject": entity("Tea", "preference"), "relation": "liked_by", "object": entity("Taste of lee", "person")}
    for turn, reader_org in (("r2t2", "acme"), ("g2t2", "globex")):
        supports = svc.read(turn, call="GraphSource", args={"fact": fact, "graph": "user"}).result
        assert len(supports) == 2
        run_org = {"r2": "acme", "g2": "globex"}
        kept = [s for s in supports if s["run"] is not None]
        withheld = [s for s in supports if s["run"] is None]
        assert [evidence_elsewhere(run_org[s["run"]], reader_org=reader_org) for s in kept] == [False]
        assert len(withheld) == 1 and withheld[0]["key"] is None and withheld[0]["record"] is None
        assert withheld[0]["origin"] == "web" and withheld[0]["contribution"] > 0
        shown = {s["run"] for s in supports if s["run"] is not None}
        assert shown == ({"r2"} if reader_org == "acme" else {"g2"})


def test_r23_a_facts_history_read_from_an_organization_withholds_the_others_evidence_and_moments(svc):
    """fact_history takes the reader's organization and applies R23 itself, so no page does: a
    support taught in the other organization's run is `elsewhere`, and that organization's moments
    say only that a change happened there."""
    _replayed(svc)
    (row,) = [r for r in svc.facts_table("acme", person="lee", graphs=("user",)) if r["relation"] == "liked_by"]
    for reader, other in (("acme", "g2"), ("globex", "r2")):
        h = svc.fact_history(row["id"], org=reader)
        assert {s["run"]: s["elsewhere"] for s in h["supports"]} == {"r2": reader == "globex", "g2": reader == "acme"}
        theirs = [m for m in h["moments"].values() if m["org"] not in (reader, None)]
        assert theirs and all(
            m["what"].startswith("a change in another organization") and m["run"] is None for m in theirs
        )
        assert other not in json.dumps(theirs)
    everything = svc.fact_history(row["id"])
    assert not any(s["elsewhere"] for s in everything["supports"])


def test_facts_between_read_for_an_organization_holds_only_its_graphs(svc):
    """A diff read for an organization holds its World graph and its runs' Flow graphs, nothing of
    another organization's and no person's User graph (the page asks the read, never filters)."""
    _replayed(svc)
    everything = {(f["graph"], f["owner"]) for f in svc.facts_between(0, svc.clock())[1]}
    assert ("world", "globex") in everything and ("user", "lee") in everything
    for org, runs in (("acme", {"r1", "r2"}), ("globex", {"g1", "g2"})):
        before, after = svc.facts_between(0, svc.clock(), org=org)
        assert before == []
        assert {(f["graph"], f["owner"]) for f in after} == {("world", org)} | {("flow", r) for r in runs}
