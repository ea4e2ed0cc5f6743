"""Drawing a graph: filters, a node cap that keeps the strongest facts, pyvis HTML that renders
offline, and GraphML. No Streamlit here: pages only show what this returns."""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

Obj = dict[str, Any]

KIND_COLORS = {
    "person": "#4e79a7",
    "place": "#59a14f",
    "organization": "#f28e2b",
    "event": "#e15759",
    "idea": "#b07aa1",
    "preference": "#edc948",
    "value": "#bab0ab",
}
OTHER_COLOR = "#76b7b2"
PHYSICS_LIMIT = 150  # above this, positions are computed ahead and physics is off
DEFAULT_CAP = 400


def color_of(kind: str) -> str:
    return KIND_COLORS.get(kind, OTHER_COLOR)


def fact_label(f: Obj) -> str:
    o = f["object"]
    return f"{f['subject']['name']} —{f['relation']}→ {o.get('name', o.get('value'))}"


def _node_id(e: Obj) -> str:
    if "value" in e:
        return f"value:{e['value']}"
    return f"{e['kind']}:{e['name']}"


@dataclass
class Filters:
    kinds: set[str] | None = None
    relations: set[str] | None = None
    min_weight: float = 0.0
    statuses: set[str] = field(default_factory=lambda: {"active", "disputed"})
    focus: str | None = None  # a node id: draw only its neighbourhood
    depth: int = 1
    cap: int = DEFAULT_CAP


@dataclass
class Plan:
    """What will be drawn: nodes, edges, and what was left out and why."""

    nodes: list[Obj]
    edges: list[Obj]
    matching_facts: int
    left_out_facts: int
    left_out_nodes: int

    @property
    def note(self) -> str:
        if not self.left_out_facts:
            return ""
        return (
            f"Showing the strongest {len(self.edges)} of {self.matching_facts} matching facts; "
            f"{self.left_out_facts} facts and {self.left_out_nodes} entities were left out to stay under "
            f"the cap of drawn entities."
        )


def _matches(f: Obj, flt: Filters) -> bool:
    kinds_ok = flt.kinds is None or (f["subject"]["kind"] in flt.kinds or f["object"].get("kind", "value") in flt.kinds)
    return (
        f["status"] in flt.statuses
        and f["weight"] >= flt.min_weight
        and kinds_ok
        and (flt.relations is None or f["relation"] in flt.relations)
    )


def _neighbourhood(facts: list[Obj], focus: str, depth: int) -> list[Obj]:
    keep, frontier = {focus}, {focus}
    for _ in range(depth):
        nxt = set()
        for f in facts:
            a, b = _node_id(f["subject"]), _node_id(f["object"])
            if a in frontier:
                nxt.add(b)
            if b in frontier:
                nxt.add(a)
        frontier = nxt - keep
        keep |= nxt
    return [f for f in facts if _node_id(f["subject"]) in keep and _node_id(f["object"]) in keep]


def plan(graph: Obj, flt: Filters | None = None, *, highlight: Iterable[str] = ()) -> Plan:
    """Choose nodes and edges: filter, focus, then the heaviest facts until the node cap is reached."""
    flt = flt or Filters()
    facts = [f for f in graph["facts"] if _matches(f, flt)]
    if flt.focus:
        facts = _neighbourhood(facts, flt.focus, flt.depth)
    marked = set(highlight)
    chosen: list[Obj] = []
    nodes: dict[str, Obj] = {}
    for f in sorted(facts, key=lambda f: -f["weight"]):
        ends = [f["subject"], f["object"]]
        new = [e for e in ends if _node_id(e) not in nodes]
        if len(nodes) + len(new) > flt.cap:
            continue
        for e in new:
            nodes[_node_id(e)] = e
        chosen.append(f)
    all_nodes = {_node_id(e) for f in facts for e in (f["subject"], f["object"])}
    degree: dict[str, int] = {}
    for f in chosen:
        for e in (f["subject"], f["object"]):
            degree[_node_id(e)] = degree.get(_node_id(e), 0) + 1
    node_rows = [
        {
            "id": nid,
            "label": e.get("name", e.get("value")),
            "kind": e.get("kind", "value"),
            "facts": degree[nid],
            "color": color_of(e.get("kind", "value")),
            "size": 10 + 4 * degree[nid] ** 0.5,
            "title": f"{e.get('name', e.get('value'))} ({e.get('kind', 'value')})\n{degree[nid]} facts drawn",
        }
        for nid, e in nodes.items()
    ]
    edge_rows = [
        {
            "from": _node_id(f["subject"]),
            "to": _node_id(f["object"]),
            "label": f["relation"],
            "weight": f["weight"],
            "status": f["status"],
            "width": 1 + 6 * f["weight"],
            "dashes": f["status"] == "disputed",
            "highlight": fact_label(f) in marked,
            "title": f"{fact_label(f)}\nweight {f['weight']:.3f} ({f['status']})\n"
            f"{f['sources']} independent sources, {len(f.get('supports', []))} supports, "
            f"{len(f.get('disputes', []))} disputes",
        }
        for f in chosen
    ]
    return Plan(node_rows, edge_rows, len(facts), len(facts) - len(chosen), len(all_nodes) - len(nodes))


_OUTSIDE = re.compile(r"<(link|script)\b[^>]*(href|src)=[\"']https?://[^>]*>(\s*</script>)?", re.I)


def to_html(p: Plan, *, height: int = 620) -> str:
    """Self-contained pyvis HTML: vis-network inlined, no outside URL, positions precomputed when big."""
    from pyvis.network import Network

    net = Network(height=f"{height}px", width="100%", directed=True, cdn_resources="in_line")
    big = len(p.nodes) > PHYSICS_LIMIT
    positions = _layout(p) if big else {}
    for n in p.nodes:
        extra: Obj = {}
        if big:
            x, y = positions[n["id"]]
            extra = {"x": x, "y": y, "physics": False}
        net.add_node(n["id"], label=n["label"], color=n["color"], size=n["size"], title=n["title"], **extra)
    for e in p.edges:
        net.add_edge(
            e["from"],
            e["to"],
            title=e["title"],
            label=e["label"],
            width=e["width"],
            dashes=e["dashes"],
            color="#d62728" if e["highlight"] else ("#999999" if e["status"] != "active" else "#555555"),
        )
    net.toggle_physics(not big)
    return _OUTSIDE.sub("", _render(net, physics=not big))


def _render(net: Any, *, physics: bool) -> str:
    """pyvis's page for `net`, with its template escaping every value it prints. pyvis's own
    generate_html switches to a tooltip that sets innerHTML from a node's title whenever a title
    contains "href"; memory's names and kinds reach titles, so that switch stays off here:
    vis-network then shows titles as plain text."""
    net.templateEnv.autoescape = True
    nodes, edges, heading, height, width, options = net.get_network_data()
    return str(
        net.templateEnv.get_template(net.path).render(
            height=height,
            width=width,
            nodes=nodes,
            edges=edges,
            heading=heading,
            options=options,
            physics_enabled=physics,
            use_DOT=net.use_DOT,
            dot_lang=net.dot_lang,
            widget=net.widget,
            bgcolor=net.bgcolor,
            conf=net.conf,
            tooltip_link=False,
            neighborhood_highlight=net.neighborhood_highlight,
            select_menu=net.select_menu,
            filter_menu=net.filter_menu,
            notebook=False,
            cdn_resources=net.cdn_resources,
        )
    )


def _layout(p: Plan) -> dict[str, tuple[float, float]]:
    g = nx.Graph()
    g.add_nodes_from(n["id"] for n in p.nodes)
    g.add_edges_from((e["from"], e["to"]) for e in p.edges)
    pos = nx.spring_layout(g, seed=7, iterations=30)
    scale = 60 * len(p.nodes) ** 0.5
    return {k: (float(v[0] * scale), float(v[1] * scale)) for k, v in pos.items()}


def to_graphml(p: Plan) -> str:
    """The drawn graph as GraphML, for other tools."""
    g = nx.MultiDiGraph()
    for n in p.nodes:
        g.add_node(n["id"], label=str(n["label"]), kind=n["kind"])
    for e in p.edges:
        g.add_edge(e["from"], e["to"], relation=e["label"], weight=e["weight"], status=e["status"])
    buf = io.BytesIO()
    nx.write_graphml(g, buf)
    return buf.getvalue().decode("utf-8")


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:])")


def inert(text: object) -> str:
    """Text from memory made inert for Markdown that allows HTML: Markdown's punctuation backslashed
    (no link, image, emphasis, LaTeX or colour directive), then HTML's characters escaped."""
    return html.escape(_MARKDOWN.sub(r"\\\1", str(text)), quote=False)


def legend_html(p: Plan) -> str:
    """The legend as Markdown with HTML, for the page: a coloured dot per kind, each kind made inert."""
    return " ".join(
        f"<span style='color:{html.escape(x['color'], quote=True)}'>●</span> {inert(x['kind'])} ({int(x['entities'])})"
        for x in legend(p)
    )


def legend(p: Plan) -> list[Obj]:
    """Kinds drawn, with their colour and count."""
    counts: dict[str, int] = {}
    for n in p.nodes:
        counts[n["kind"]] = counts.get(n["kind"], 0) + 1
    return [{"kind": k, "color": color_of(k), "entities": c} for k, c in sorted(counts.items())]
