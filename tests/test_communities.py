"""A graph as its communities (issue #39, item 4): MemoryService.communities reads the entities' links counted, in one
transaction; views/communities.overview groups them by networkx's Louvain, seeded. On the demo and tiny graphs
written inline, on the backend under test."""

from __future__ import annotations

import typing
from itertools import combinations
from pathlib import Path

import pytest
from helpers import claim, run, start, taught_turn, web
from pydantic import TypeAdapter

from memory_core import MemoryService, load, replay
from memory_core.views import communities
from memory_core.views.communities import overview

DEMO = Path(__file__).resolve().parent.parent / "sample_data" / "demo.json"


def linked(*pairs: tuple[str, str], values: tuple[tuple[str, str], ...] = ()) -> list[dict[str, typing.Any]]:
    """Events teaching World facts between organizations, one a pair (and `values`: a literal value a subject)."""
    claims = [claim(a, "works_with", b, okind="organization") for a, b in pairs]
    claims += [
        {
            "graph": "world",
            "subject": {"name": a, "kind": "organization"},
            "relation": "revenue",
            "object": {"value": v},
        }
        for a, v in values
    ]
    return [start(), *taught_turn("t1", web("https://a.example/", *claims))]


def cliques(*groups: str) -> list[tuple[str, str]]:
    """Every pair within each group of one-letter-prefixed names ("A4": A1 to A4)."""
    return [p for g in groups for p in combinations([f"{g[0]}{i}" for i in range(1, int(g[1:]) + 1)], 2)]


def shape_of(name: str) -> typing.Any:
    return typing.get_type_hints(getattr(MemoryService, name).__wrapped__)["return"]


def test_two_cliques_and_a_bridge_are_two_communities(svc):
    run(linked(*cliques("A4", "B4"), ("A1", "B1"), values=(("A1", "EUR 5 million"),)), service=svc)
    links = svc.communities("world", "acme")
    TypeAdapter(shape_of("communities")).validate_python(links, strict=True)
    view = overview(links)
    assert [set(c.members) for c in view.communities] == [{"A1", "A2", "A3", "A4"}, {"B1", "B2", "B3", "B4"}]
    assert [(c.id, c.size, c.central) for c in view.communities] == [(0, 4, "A1"), (1, 4, "B1")]
    assert [c.label for c in view.communities] == ["A1, A2 +2", "B1, B2 +2"]  # the bridge's ends are most connected
    assert view.links == ((0, 1, 1),)
    assert (view.entities, view.facts) == (8, 13)  # the value is no entity, its fact no link


def test_literal_values_and_retracted_facts_link_nothing(svc):
    events = linked(("A1", "A2"), ("A2", "A3"), values=(("A4", "EUR 5 million"),))
    retracted = {k: v for k, v in claim("A2", "works_with", "A3", okind="organization").items() if k != "graph"}
    run([*events, {"do": "retract", "org": "acme", "by": "dana", "fact": retracted}], service=svc)
    links = svc.communities("world", "acme")
    ids = {e["name"]: e["id"] for e in links["entities"]}
    assert list(ids) == ["A1", "A2"]  # A3's one link is retracted (R28), A4 has a value only
    assert links["links"] == [(min(ids.values()), max(ids.values()), 1)]
    assert overview(svc.communities("world", "globex")) == communities.Overview((), (), 0, 0)


def test_a_fact_either_way_round_links_the_same_two(svc):
    run(linked(("A1", "A2"), ("A2", "A1"), ("A1", "A3")), service=svc)
    links = svc.communities("world", "acme")
    degree = {e["name"]: e["degree"] for e in links["entities"]}
    assert degree == {"A1": 3, "A2": 2, "A3": 1}
    assert sorted(n for _, _, n in links["links"]) == [1, 2]


def test_other_folds_the_smallest_communities_past_the_limit(svc):
    run(linked(*cliques("A4", "B3"), ("C1", "C2"), ("D1", "D2"), ("E1", "E2")), service=svc)
    whole = overview(svc.communities("world", "acme"))
    assert [c.size for c in whole.communities] == [4, 3, 2, 2, 2]
    assert [c.label for c in whole.communities][2:] == ["C1, C2", "D1, D2", "E1, E2"]  # same size: by label
    view = overview(svc.communities("world", "acme"), limit=3)
    assert [c.label for c in view.communities] == ["A1, A2 +2", "B1, B2, B3", "Other (3 communities)"]
    other = view.communities[-1]
    assert (other.id, other.size, set(other.members)) == (2, 6, {"C1", "C2", "D1", "D2", "E1", "E2"})
    assert other.central == other.members[0]
    assert (view.entities, view.facts, view.links) == (13, 12, ())


def test_past_the_core_each_entity_joins_the_community_it_has_most_facts_with(svc, monkeypatch):
    """Louvain groups the most connected entities with CORE links between them; the rest join by their links, chains
    included; a part no core entity reaches is grouped apart."""
    periphery = [("A1", "X1"), ("X1", "X2"), ("X2", "X3"), ("Y1", "A2"), ("Y1", "B2"), ("Y1", "B3")]
    run(linked(*cliques("A4", "B4"), ("A1", "B1"), *periphery, ("Z1", "Z2")), service=svc)
    monkeypatch.setattr(communities, "CORE", 13)  # the two cliques and their bridge; Y1 (3 facts) ranks ninth
    view = overview(svc.communities("world", "acme"))
    of = {m: c.id for c in view.communities for m in c.members}
    assert of["X3"] == of["X2"] == of["X1"] == of["A1"] != of["B1"]
    assert of["Y1"] == of["B1"]  # two facts with B's, one with A's
    assert of["Z1"] == of["Z2"] not in (of["A1"], of["B1"])
    assert [c.size for c in view.communities] == [7, 5, 2]


def test_the_demo_communities_are_stable_and_named_by_their_most_connected(svc):
    replay(load(str(DEMO)), svc)
    links = svc.communities("world", "acme")
    TypeAdapter(shape_of("communities")).validate_python(links, strict=True)
    view = overview(links)
    assert view == overview(svc.communities("world", "acme")) == overview(links)  # the seed: the same every time
    state = svc.graph("world", "acme")
    linking = [f for f in state["facts"] if "name" in f["object"] and f["status"] != "retracted"]
    values = {f["object"]["value"] for f in state["facts"] if "value" in f["object"]}
    assert view.facts == len(linking) == sum(n for _, _, n in links["links"])
    members = [m for c in view.communities for m in c.members]
    assert len(members) == len(set(members)) == view.entities == sum(c.size for c in view.communities)
    assert not values & set(members)  # amounts and dates are drawn beside their subject, never grouped
    assert [c.id for c in view.communities] == list(range(len(view.communities)))
    assert [c.size for c in view.communities] == sorted((c.size for c in view.communities), reverse=True)
    degree = {e["name"]: e["degree"] for e in links["entities"]}
    for c in view.communities:
        assert c.central == c.members[0] and c.label.startswith(", ".join(c.members[:2]))
        assert [degree[m] for m in c.members] == sorted((degree[m] for m in c.members), reverse=True)
    hub = max(degree, key=degree.__getitem__)
    assert hub == "Acme Robotics" and any(c.central == hub for c in view.communities)
    between = sum(n for _, _, n in view.links)
    assert 0 < between < view.facts and all(a < b for a, b, _ in view.links)
    assert 5 < len(view.communities) <= 40


@pytest.mark.parametrize("limit", [1, 4])
def test_the_demo_folded_keeps_every_entity_and_fact(svc, limit):
    replay(load(str(DEMO)), svc)
    links = svc.communities("world", "acme")
    whole, view = overview(links), overview(links, limit=limit)
    assert len(view.communities) == limit and view.communities[-1].label.startswith("Other (")
    assert view.communities[: limit - 1] == whole.communities[: limit - 1]
    assert sum(c.size for c in view.communities) == whole.entities == view.entities
    assert (view.links == ()) == (limit == 1)
