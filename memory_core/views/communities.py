"""A graph as its communities (#39): seeded Louvain groups named by their most connected entities, facts between."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import networkx as nx

from ..usecases import shapes as sh
from .text import plural
from .viz import Plan, line, node, wrapped

MEMBERS = 60  # the entities a community keeps by name, most connected first
#: Louvain groups the most connected entities with at most this many links between them; each other one joins the
#: community it has most facts with (at 112k facts, Louvain on all 50,000 links took 0.7 to 1.2 s of CPU).
CORE = 12_000
SEED = 1  # Louvain's: the same links always give the same communities
#: Twenty colours, none repeated below twenty communities (the kinds' seven did), light first: names read dark (#39).
PALETTE = "#aec7e8 #ffbb78 #98df8a #ff9896 #c5b0d5 #c49c94 #f7b6d2 #dbdb8d #9edae5 #c7c7c7".split()
PALETTE += "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #bcbd22 #17becf #7f7f7f".split()


@dataclass(frozen=True)
class Community:
    """Entities of a graph that facts link more among themselves than to others, named by the most connected."""

    id: int  # stable for one memory version: communities ordered by size desc, then label
    label: str  # its two or three most connected entities' names, "Acme, Helios +40"
    size: int  # entities in it
    central: str  # name of its most connected entity (the focus a click opens)
    members: tuple[str, ...]  # entity names, most connected first (at most MEMBERS kept)


@dataclass(frozen=True)
class Overview:
    """A graph as its communities and the facts between them; `entities` and `facts` count what was grouped."""

    communities: tuple[Community, ...]  # at most `limit`; the rest folded into one "Other" entry, the last
    links: tuple[tuple[int, int, int], ...]  # (community a, community b, facts between them), a < b
    entities: int
    facts: int


def overview(links: sh.EntityLinks, *, limit: int = 40) -> Overview:
    """A graph's communities, largest first, past `limit` (1 or more) the smallest as one "Other"; facts between."""
    names = {e["id"]: e["name"] for e in links["entities"]}
    degree = {e["id"]: e["degree"] for e in links["entities"]}
    ranked = sorted(names, key=lambda n: (-degree[n], names[n], n))  # most connected first
    place = {n: i for i, n in enumerate(ranked)}
    grouped = [sorted(g, key=place.__getitem__) for g in groups(links["links"], ranked)]
    found = sorted(((_label([names[n] for n in g[:3]], len(g)), g) for g in grouped), key=lambda c: (-len(c[1]), c))
    if len(found) > limit:
        tail = sorted((n for _, g in found[limit - 1 :] for n in g), key=place.__getitem__)
        found = [*found[: limit - 1], (f"Other ({len(found) - limit + 1} communities)", tail)]
    communities = tuple(
        Community(i, label, len(g), names[g[0]], tuple(names[n] for n in g[:MEMBERS]))
        for i, (label, g) in enumerate(found)
    )
    of = {n: i for i, (_, g) in enumerate(found) for n in g}
    between: Counter[tuple[int, int]] = Counter()  # within one community too: (c, c)
    for a, b, n in links["links"]:
        between[(min(of[a], of[b]), max(of[a], of[b]))] += n
    apart = tuple((a, b, n) for (a, b), n in sorted(between.items()) if a != b)
    return Overview(communities, apart, len(names), sum(between.values()))


def groups(links: list[tuple[int, int, int]], ranked: list[int]) -> list[set[int]]:
    """Louvain on the most connected within CORE links; each other joins the community it most links to, or apart."""
    place = {n: i for i, n in enumerate(ranked)}
    reach = [max(place[a], place[b]) for a, b, _ in links]  # a link is in the core of those ranked before it
    size = sorted(reach)[CORE] if len(reach) > CORE else len(ranked)
    found = _louvain(ranked[:size], [k for k, r in zip(links, reach, strict=True) if r < size])
    of = {n: i for i, group in enumerate(found) for n in group}
    neighbours: dict[int, list[tuple[int, int]]] = {n: [] for n in ranked[size:]}
    for a, b, n in links:
        for one, other in ((a, b), (b, a)):
            if place[one] >= size:
                neighbours[one].append((other, n))
    rest, before = ranked[size:], -1
    while len(rest) != before:  # rounds until one joins none: each the first community it has most facts with
        before, left, rest = len(rest), rest, []
        for n in left:
            votes: Counter[int] = Counter()
            for m, facts in neighbours[n]:
                if m in of:
                    votes[of[m]] += facts
            if votes:
                of[n] = min(votes, key=lambda c: (-votes[c], c))
            else:
                rest.append(n)
    for n, i in of.items():
        found[i].add(n)
    return found + _louvain(rest, [(n, m, k) for n in rest for m, k in neighbours[n] if m not in of])


def _louvain(nodes: list[int], links: list[tuple[int, int, int]]) -> list[set[int]]:
    """networkx's Louvain, seeded, on `nodes` and `links` (between them)."""
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_weighted_edges_from(links)
    return list(nx.community.louvain_communities(graph, weight="weight", seed=SEED)) if nodes else []


def _label(names: list[str], size: int) -> str:
    """Its two most connected entities' names and how many more ("Acme, Helios +40"); all of three or fewer."""
    shown = names[:3] if size <= 3 else names[:2]
    return ", ".join(shown) + (f" +{size - len(shown)}" if size > len(shown) else "")


def drawn(ov: Overview, *, most: int = 2) -> Plan:
    """Communities, the largest in the middle, each joined to the `most` it shares most facts with (#39), by count."""
    nodes = []
    for i, c in enumerate(ov.communities):
        size, said = min(40.0, 8 + 3 * c.size**0.5), plural(c.size, "entity", "entities")
        title = f"{c.label}: {said}\n" + ", ".join(c.members[:12]) + "\nclick: open it"
        drawn = node(f"community:{c.id}", wrapped(c.label, 24) + f"\n{said}", "community", min(i, 1), title, size=size)
        nodes.append(drawn | {"central": c.central, "color": PALETTE[i % len(PALETTE)]})
    heaviest = sorted(ov.links, key=lambda x: (-x[2], x[:2]))
    kept = {k for c in ov.communities for k in [x for x in heaviest if c.id in x[:2]][:most]}
    edges = []
    for a, b, n in sorted(kept):
        width, said = 1 + min(6.0, n**0.5 / 2), plural(n, "fact")
        between = f"{said} between these two communities"
        edges.append(
            line(f"community:{a}", f"community:{b}", between, label=said, weight=0.5, width=width, dashes=False)
        )
    return Plan(nodes, edges, nodes[0]["id"] if nodes else "", reason="" if nodes else "this graph holds no fact yet")
