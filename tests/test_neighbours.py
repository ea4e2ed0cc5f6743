"""The store's read of a focus's neighbourhood for the Graphs page (memory_core/store/neighbours.py, #39):
found by name, by words or as the most connected entity, its facts as the drawing reads them; every backend."""

from __future__ import annotations

from pathlib import Path

from backend import fresh_service

from memory_core import load, replay
from memory_core.store import drawing as neighbours
from memory_core.views import viz

ROOT = Path(__file__).resolve().parent.parent


def drawn_facts(svc) -> list[dict]:
    """The demo's World facts as the drawing reads them: the state format's, supports and disputes counted."""
    shown = ("id", "subject", "relation", "object", "status", "weight", "sources")
    facts = svc.graph("world", "acme", ids=True)["facts"]
    return [{**{k: f[k] for k in shown}, "supports": len(f["supports"]), "disputes": len(f["disputes"])} for f in facts]


def test_the_store_reads_a_focus_by_name_by_words_or_the_most_connected():
    svc = fresh_service()
    replay(load(str(ROOT / "sample_data" / "demo.json")), svc)
    hub = svc.focus("world", "acme", None, depth=1)
    assert hub["focus"]["name"] == "Acme Robotics" and hub["focus"]["facts"] > 20 and hub["by"] == "most connected"
    named = svc.focus("world", "acme", "acme robotics", depth=1)
    assert named["focus"] == hub["focus"] and {f["id"] for f in named["facts"]} == {f["id"] for f in hub["facts"]}
    worded = svc.focus("world", "acme", "ROBOT", depth=1)
    assert worded["focus"]["name"] == "Acme Robotics" and (named["by"], worded["by"]) == ("name", "words")
    whole = {f["id"]: f for f in drawn_facts(svc)}
    assert all(whole[f["id"]] == f for f in hub["facts"])  # as the state format holds them, votes counted
    ring = {viz.node_id(e) for f in hub["facts"] for e in (f["subject"], f["object"]) if "kind" in e}
    assert len(ring) > 20 and hub["facts"] != [f for f in hub["facts"] if "Acme Robotics" in viz.fact_label(f)]
    assert svc.focus("world", "acme", "no such thing at all", depth=1) == hub  # the most connected instead
    assert svc.focus("user", "nobody", None, depth=1) == {"focus": None, "by": "most connected", "facts": []}
    run = svc.runs("acme")[0]["id"]
    assert svc.focus("flow", run, None, depth=1)["by"] == "run"  # a Flow graph opens on its run (#39)
    found = svc.find_entities({"world": "acme"}, "robo")
    assert found[0] == {
        "name": "Acme Robotics",
        "kind": "organization",
        "graph": "world",
        "facts": hub["focus"]["facts"],
    }


def test_a_focus_whose_rings_end_before_its_depth_reads_what_there_is():
    """Every entity of the demo at depth 3: where a ring has no one new the read stops (no empty IN list,
    which PostgreSQL refuses), and the focus's own facts are there, up to its PER heaviest a direction."""
    svc = fresh_service()
    replay(load(str(ROOT / "sample_data" / "demo.json")), svc)
    facts = drawn_facts(svc)
    names = sorted({e["name"] for f in facts for e in (f["subject"], f["object"]) if "kind" in e})
    for name in names:
        read = svc.focus("world", "acme", name, depth=3)
        own = [
            f
            for f in facts
            if f["status"] != "retracted" and name in (f["subject"].get("name"), f["object"].get("name"))
        ]
        assert read["focus"]["name"] == name and read["by"] == "name", name
        if len(own) <= neighbours.PER:
            assert {f["id"] for f in own} <= {f["id"] for f in read["facts"]}, name
