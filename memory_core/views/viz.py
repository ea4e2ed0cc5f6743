"""Drawing a graph: filters, a cap that keeps the strongest facts, still pyvis HTML that renders offline
(positions from layout.py, physics off), and GraphML. No Streamlit here."""

from __future__ import annotations

import html
import io
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import cast

import networkx as nx

from ..plain import Obj
from ..rules.wording import fact_label
from . import layout
from .compare import ADDED_COLOR, GONE_COLOR, MOVED_COLOR, Compare, change_of, fact_key  # noqa: F401  (viz.* for pages)
from .templates import CLICK_SCRIPT, MARK, library, mark, pyvis_templates, templates
from .text import inert, plural  # noqa: F401  (viz.inert: pages and tests name it here too)

#: What a drawing's layout depends on (Plan.key).
Key = tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[float, ...], tuple[str, ...], float]

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
DEFAULT_CAP = 400
# Names that do not pile up (docs/decisions.md, "Graph drawing"): all, or the heaviest few and the focus.
LABEL_ALL = 60
LABEL_TOP = 60
#: Past this many entities, dots are smaller (3 + 1.2 per root of facts): 400 large ones left names < 10 px.
BIG = 150
EDGE_LABELS = 40  # a drawing of at most this many facts names each relation on its edge; else on hover
#: Past this many facts drawn, edges are thin (0.5 + 2 x weight) and faint: 4,000 full ones hid 400 dots.
THIN = 600


def color_of(kind: str) -> str:
    return KIND_COLORS.get(kind, OTHER_COLOR)


def _node_id(e: Obj) -> str:
    return f"value:{e['value']}" if "value" in e else f"{e['kind']}:{e['name']}"


@dataclass
class Filters:
    kinds: set[str] | None = None
    relations: set[str] | None = None
    min_weight: float = 0.0
    statuses: set[str] = field(default_factory=lambda: {"active", "disputed"})
    focus: str | None = None  # a node id: draw only its neighbourhood
    depth: int = 1
    #: With a focus, entities double-clicked open, whose neighbours (among the facts given, R20) are drawn too.
    expanded: tuple[str, ...] = ()
    cap: int = DEFAULT_CAP


@dataclass
class Plan:
    """What will be drawn: nodes, edges, and what was left out and why."""

    nodes: list[Obj]
    edges: list[Obj]
    matching_facts: int
    left_out_facts: int
    left_out_nodes: int
    reason: str = ""  # when nothing is drawn: the filter that emptied the drawing, in words
    gone: int = 0  # of the edges, the facts gone since the moment compared with (drawn last, dashed)

    @property
    def key(self) -> Key:
        """What the positions depend on: entities, the facts' ends, sizes, names drawn, the relations' mean length."""
        return (
            tuple(n["id"] for n in self.nodes),
            tuple((e["from"], e["to"]) for e in self.edges),
            tuple(round(n["size"], 1) for n in self.nodes),
            tuple(n["label"] for n in self.nodes),
            round(sum(len(e["label"]) for e in self.edges) / max(1, len(self.edges)), 1),
        )

    def key_for_layout(
        self,
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], dict[str, float], dict[str, str], float]:
        """The key as layout.arrange takes it."""
        ids, ends, sizes, labels, relation = self.key
        return ids, ends, dict(zip(ids, sizes, strict=True)), dict(zip(ids, labels, strict=True)), relation

    @property
    def note(self) -> str:
        if not self.left_out_facts:
            return ""
        return (
            f"Showing the strongest {len(self.edges)} of {self.matching_facts} matching facts; "
            f"{self.left_out_facts} facts and {self.left_out_nodes} entities were left out to stay under "
            f"the cap of drawn entities."
        )


def _neighbourhood(facts: list[Obj], focus: str, depth: int, expanded: Iterable[str] = ()) -> list[Obj]:
    """The facts among the focus's neighbourhood to `depth`, and among each drawn expanded entity's neighbours."""
    keep, frontier = {focus}, {focus}
    for _ in range(depth):
        nxt = _next_to(facts, frontier)
        frontier = nxt - keep
        keep |= nxt
    for opened in expanded:
        if opened in keep:
            keep |= _next_to(facts, {opened})
    return [f for f in facts if _node_id(f["subject"]) in keep and _node_id(f["object"]) in keep]


def _next_to(facts: list[Obj], entities: set[str]) -> set[str]:
    """The entities one fact away from any of `entities`."""
    ends = [(_node_id(f["subject"]), _node_id(f["object"])) for f in facts]
    return {b for a, b in ends if a in entities} | {a for a, b in ends if b in entities}


def _count(f: Obj, what: str) -> int:
    """How many supports or disputes a fact has: a count (the drawing's read) or the list (the state format)."""
    value = f.get(what, [])
    return value if isinstance(value, int) else len(value)


def _words(values: Iterable[str]) -> str:
    return ", ".join(sorted(values))


def why_empty(facts: list[Obj], flt: Filters) -> str:
    """The filter that leaves nothing to draw, found by applying the filters one at a time."""
    if not facts:
        return "this graph holds no fact yet"
    left = facts
    for keep, words in _filter_steps(flt):
        kept = [f for f in left if keep(f)]
        if not kept:
            return words + (f" (of the {len(left)} facts the filters before it keep)" if len(left) < len(facts) else "")
        left = kept
    if flt.focus:
        focus = flt.focus.split(":", 1)
        others = " that the other filters keep" if len(left) < len(facts) else ""
        return f"the focus entity {focus[1]} ({focus[0]}) has no facts within depth {flt.depth}{others}"
    return f"the entity cap {flt.cap} is below the two entities a fact needs"


def _filter_steps(flt: Filters) -> list[tuple[Callable[[Obj], bool], str]]:
    """Each filter, as a test of a fact and the words for when it leaves none."""
    return [
        (
            lambda f: f["status"] in flt.statuses,
            f"the status filter ({_words(flt.statuses)}) excludes all"
            if flt.statuses
            else "no status is chosen, so the status filter excludes all",
        ),
        (
            lambda f: (
                flt.kinds is None or f["subject"]["kind"] in flt.kinds or f["object"].get("kind", "value") in flt.kinds
            ),
            f"there is no fact of kinds {_words(flt.kinds or ())}",
        ),
        (
            lambda f: flt.relations is None or f["relation"] in flt.relations,
            f"there is no fact with relations {_words(flt.relations or ())}",
        ),
        (lambda f: f["weight"] >= flt.min_weight, f"the minimum weight {flt.min_weight:.2f} leaves no fact"),
    ]


def _short(name: str, most: int = 22) -> str:
    """A name as drawn under its dot: cut after `most` characters (the whole name is on hover)."""
    return name if len(name) <= most else name[: most - 1].rstrip() + "…"


def _labelled(nodes: Iterable[str], heft: dict[str, float], always: set[str]) -> set[str]:
    """The entities whose name is drawn: all of a small drawing, else the heaviest and those always named."""
    ids = list(nodes)
    if len(ids) <= LABEL_ALL:
        return set(ids)
    return set(sorted(ids, key=lambda n: (-heft[n], n))[:LABEL_TOP]) | (always & set(ids))


def _pick(facts: Iterable[Obj], nodes: dict[str, Obj], cap: int, *, both_new: bool = True) -> list[Obj]:
    """The facts, heaviest first, whose ends fit under the cap (`nodes` grows); without `both_new`, only facts
    touching an entity already drawn."""
    picked = []
    for f in sorted(facts, key=lambda f: -f["weight"]):
        new = [e for e in (f["subject"], f["object"]) if _node_id(e) not in nodes]
        if (not both_new and len(new) == 2) or len(nodes) + len(new) > cap:
            continue
        nodes |= {_node_id(e): e for e in new}
        picked.append(f)
    return picked


def _node_row(nid: str, e: Obj, *, facts: int, named: bool, opened: bool, big: bool) -> Obj:
    """An entity as drawn: its name (under its dot when `named`), kind, colour, size by its facts."""
    name, kind = str(e.get("name", e.get("value"))), e.get("kind", "value")
    return {
        "id": nid,
        "name": name,
        "label": _short(name) if named else "",
        "kind": kind,
        "facts": facts,
        "color": color_of(kind),
        "size": 3 + 1.2 * facts**0.5 if big else 10 + 4 * facts**0.5,
        "title": f"{name} ({kind})\n{facts} facts drawn" + ("\n(open: double-click to close)" if opened else ""),
        "open": opened,  # the focus or an entity expanded: drawn with a thick border
    }


def _edge_row(f: Obj, gone: bool, *, compare: Compare | None, many: int, marked: set[str]) -> Obj:
    """A fact as drawn among `many`: its ends, weight, status, what changed (R32), and its title."""
    change, said = change_of(f, compare, gone)
    thin = many > THIN
    return {
        "from": _node_id(f["subject"]),
        "to": _node_id(f["object"]),
        "fact": None if gone else f.get("id"),  # the fact's database id when read with ids: a link to its weight
        "relation": f["relation"],
        "label": f["relation"] if many <= EDGE_LABELS else "",
        "weight": f["weight"],
        "status": f["status"],
        "width": 0.5 + 2 * f["weight"] if thin else 1 + 6 * f["weight"],
        "thin": thin,
        "dashes": f["status"] == "disputed" or gone,
        "highlight": fact_label(f) in marked,
        "change": change,
        "title": f"{fact_label(f)}\nweight {f['weight']:.3f} ({f['status']})\n"
        f"{plural(f['sources'], 'independent source')}, {plural(_count(f, 'supports'), 'support')}, "
        f"{plural(_count(f, 'disputes'), 'dispute')}" + said,
    }


def _tallies(facts: list[Obj]) -> tuple[dict[str, int], dict[str, float]]:
    """Each entity's facts drawn, and their weights summed (which names are drawn)."""
    ends = [(_node_id(e), f["weight"]) for f in facts for e in (f["subject"], f["object"])]
    heft: dict[str, float] = {}
    for nid, weight in ends:
        heft[nid] = heft.get(nid, 0.0) + weight
    return dict(Counter(nid for nid, _ in ends)), heft


def plan(
    graph: Mapping[str, object],
    flt: Filters | None = None,
    *,
    highlight: Iterable[str] = (),
    compare: Compare | None = None,
) -> Plan:
    """Choose nodes and edges: filter, focus, then the heaviest facts up to the cap; with `compare`, edges say what
    changed since an earlier moment (R32), and facts gone since are drawn too, last."""
    flt = flt or Filters()
    every = cast("list[Obj]", graph["facts"])  # a drawing's read or a state's graph: its facts as JSON
    facts, nodes, chosen, ghosts = _chosen(every, flt, compare)
    degree, heft = _tallies(chosen + ghosts)
    opened = set(flt.expanded) if flt.focus else set()
    named = _labelled(nodes, heft, {flt.focus, *opened} if flt.focus else set())
    node_rows = [
        _node_row(nid, e, facts=degree[nid], named=nid in named, opened=nid in opened, big=len(nodes) > BIG)
        for nid, e in nodes.items()
    ]
    drawn = [(f, False) for f in chosen] + [(f, True) for f in ghosts]
    many, marked = len(drawn), set(highlight)
    edge_rows = [_edge_row(f, gone, compare=compare, many=many, marked=marked) for f, gone in drawn]
    reason = "" if drawn else why_empty(every, flt)
    left_out = len({_node_id(e) for f in facts for e in (f["subject"], f["object"])} - set(nodes))
    return Plan(node_rows, edge_rows, len(facts), len(facts) - len(chosen), left_out, reason, len(ghosts))


def _chosen(
    every: list[Obj], flt: Filters, compare: Compare | None
) -> tuple[list[Obj], dict[str, Obj], list[Obj], list[Obj]]:
    """The facts the filters keep (around the focus), the entities drawn, the facts drawn and those gone since."""
    tests = [keep for keep, _ in _filter_steps(flt)]
    facts = [f for f in every if all(keep(f) for keep in tests)]
    if flt.focus:
        facts = _neighbourhood(facts, flt.focus, flt.depth, flt.expanded)
    nodes: dict[str, Obj] = {}
    chosen = _pick(facts, nodes, flt.cap)
    gone = [g for g in (compare.gone if compare else []) if all(keep(g) for keep in tests)]
    return facts, nodes, chosen, _pick(gone, nodes, flt.cap, both_new=not flt.focus)


_OUTSIDE = re.compile(r"<(link|script)\b[^>]*(href|src)=[\"']https?://[^>]*>(\s*</script>)?", re.I)
GRAPHS = ("world", "user", "flow")


def _options(font: float) -> Obj:
    """vis-network's options: no physics, so nothing moves once drawn; labels outlined over crossing edges."""
    edge = round(font * layout.EDGE_FONT, 1)
    return {
        "physics": {"enabled": False},
        "layout": {"randomSeed": layout.SEED, "improvedLayout": False},
        "nodes": {"shape": "dot", "physics": False, "font": {"size": font, "strokeWidth": 4, "strokeColor": "#ffffff"}},
        "edges": {
            "arrows": {"to": {"enabled": True, "scaleFactor": 0.5}},
            "smooth": {"enabled": True, "type": "curvedCW", "roundness": 0.12},
            "font": {"size": edge, "align": "middle", "strokeWidth": 3, "strokeColor": "#ffffff"},
        },
        "interaction": {"hover": True, "tooltipDelay": 120, "hideEdgesOnDrag": True},
    }


def layout_of(p: Plan) -> layout.Layout:
    """Positions (in the drawing's units) and the names' font for a plan: the same plan, the same drawing."""
    return layout.arrange(*p.key_for_layout())


def to_html(p: Plan, *, drawing: layout.Layout | None = None, graph: str = "world", height: int = 620) -> str:
    """Self-contained pyvis HTML (no outside URL), positions given and physics off; a click on a fact opens its
    weight, a double-click on an entity opens or closes its neighbours."""
    drawn = drawing if drawing is not None else layout_of(p)
    pos = drawn.positions
    # What vis-network takes as given is left out, numbers rounded to what a screen shows (B8).
    nodes = [
        _given(
            id=n["id"],
            label=n["label"],  # "" draws no name: it is in the title, shown on hover
            title=n["title"],
            color=n["color"],
            size=round(n["size"], 1),
            borderWidth=4 if n.get("open") else None,
            x=pos[n["id"]][0],  # the layout fills the frame's aspect itself (layout.py)
            y=pos[n["id"]][1],
        )
        for n in p.nodes
    ]
    edges = [
        _given(
            id=f"fact-{e['fact']}" if e["fact"] is not None else f"edge-{i}",  # stable across reloads
            to=e["to"],
            fact=e["fact"],
            title=e["title"],
            label=e["label"],
            width=round(e["width"], 2),
            dashes=e["dashes"],
            color=_edge_color(e),
            **{"from": e["from"]},
        )
        for i, e in enumerate(p.edges)
    ]
    font = round(drawn.font, 1)
    page = _OUTSIDE.sub("", _render(nodes, edges, _options(font), height=f"{height}px"))
    script = CLICK_SCRIPT.replace("%GRAPH%", json.dumps(graph if graph in GRAPHS else "world"))
    script = script.replace("%FONT%", json.dumps(font)).replace("%EDGE%", json.dumps(layout.EDGE_FONT))
    return page.replace("</body>", script + "</body>", 1)


def _given(**values: object) -> Obj:
    """The values vis-network does not take as given: no empty label, no False, no None (a 0 stays)."""
    return {k: v for k, v in values.items() if not (v is None or v is False or v == "")}


def _edge_color(e: Obj) -> str:
    """Red: what the last notebook cell changed; then what changed since the moment compared; else by status."""
    if e["highlight"]:
        return "#d62728"
    change = e.get("change", "")
    if change:
        return {"added": ADDED_COLOR, "gone": GONE_COLOR}.get(change, MOVED_COLOR)
    if e.get("thin"):  # a thin edge (THIN): drawn faint, so thousands of them do not hide the dots and names
        return "rgba(120,120,120,0.35)" if e["status"] != "active" else "rgba(70,70,70,0.35)"
    return "#999999" if e["status"] != "active" else "#555555"


#: pyvis's template besides the drawing: a white page, no heading, physics, DOT, menus or highlight.
PYVIS_PAGE: Obj = {"width": "100%", "heading": "", "bgcolor": "#ffffff", "cdn_resources": "in_line", "dot_lang": ""}
PYVIS_PAGE |= dict.fromkeys(("physics_enabled", "use_DOT", "widget", "conf", "tooltip_link"), False)
PYVIS_PAGE |= dict.fromkeys(("neighborhood_highlight", "select_menu", "filter_menu", "notebook"), False)


def _render(nodes: list[Obj], edges: list[Obj], options: Obj, *, height: str) -> str:
    """pyvis's template filled as its Network would fill it (every value escaped; no innerHTML tooltip, since memory's
    text reaches titles), without importing Network (it imports IPython); the libraries put in after."""
    folder = pyvis_templates()
    page = str(
        templates(folder)
        .get_template("template.html")
        .render(height=height, nodes=nodes, edges=edges, options=json.dumps(options), **PYVIS_PAGE)
    )
    head, body = page.split("</head>", 1) if "</head>" in page else (page, None)
    for name in dict.fromkeys(MARK.findall(head)):  # each library once, in the head only (memory's text is below)
        head = head.replace(mark(name), library(folder, name), 1)
    return head if body is None else head + "</head>" + body


def to_graphml(p: Plan) -> str:
    """The drawn graph as GraphML, for other tools."""
    g = nx.MultiDiGraph()
    for n in p.nodes:
        g.add_node(n["id"], label=n["name"], kind=n["kind"])
    for e in p.edges:
        g.add_edge(e["from"], e["to"], relation=e["relation"], weight=e["weight"], status=e["status"])
    buf = io.BytesIO()
    nx.write_graphml(g, buf)
    return buf.getvalue().decode("utf-8")


def legend_html(p: Plan) -> str:
    """The legend as Markdown with HTML: a coloured dot per kind, each kind made inert."""
    return " ".join(
        f"<span style='color:{html.escape(x['color'], quote=True)}'>●</span> {inert(x['kind'])} ({int(x['entities'])})"
        for x in legend(p)
    )


def legend(p: Plan) -> list[Obj]:
    """Kinds drawn, with their colour and count."""
    counts = Counter(n["kind"] for n in p.nodes)
    return [{"kind": k, "color": color_of(k), "entities": c} for k, c in sorted(counts.items())]
