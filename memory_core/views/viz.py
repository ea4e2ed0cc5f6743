"""Drawing a graph from a focus (#39): its rings, values beside their subject, "+N more" by relation; GraphML."""

from __future__ import annotations

import html
import io
import textwrap
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import cast

import networkx as nx

from ..plain import Obj
from ..rules.wording import fact_label
from .compare import ADDED_COLOR, GONE_COLOR, MOVED_COLOR, Compare, change_of, fact_key  # noqa: F401  (viz.* for pages)
from .focus import MOST, to_html  # noqa: F401  (viz.to_html: pages and tests name it here)
from .text import inert, plural  # noqa: F401  (viz.inert: pages and tests name it here too)

KIND_COLORS = {
    "person": "#4e79a7",
    "place": "#59a14f",
    "organization": "#f28e2b",
    "event": "#e15759",
    "idea": "#b07aa1",
    "preference": "#ff9da7",  # not yellow: the focus is (#39)
    "value": "#bab0ab",
}
OTHER_COLOR = "#76b7b2"
FOCUS_COLOR = "#ffd400"  # the focus's alone, as is its size (#39)
FIRST = 13  # entities a focus opens with (itself and 12), so its fit is readable: the rest of MOST for clicks
SPARE = 12  # neighbours of each drawn entity a click opens, the heaviest (sent with the page)
KIDS = 4  # entities past the first ring that one entity opens with (the rest behind "+N more")
MORE = 6  # "+N more" nodes at most
VALUES = 3  # values written in a subject's box; the rest on hover
WRAP = 18  # characters a line of a name


def color_of(kind: str) -> str:
    return KIND_COLORS.get(kind, OTHER_COLOR)


def node_id(e: Obj) -> str:
    return f"{e['kind']}:{e['name']}"


@dataclass
class Filters:
    kinds: set[str] | None = None
    relations: set[str] | None = None
    min_weight: float = 0.0
    statuses: set[str] = field(default_factory=lambda: {"active", "disputed"})
    depth: int = 1


@dataclass
class Plan:
    """What will be drawn around `focus`: nodes, edges, what a click opens (`spare`), and why nothing is drawn."""

    nodes: list[Obj]
    edges: list[Obj]
    focus: str = ""
    spare: Obj = field(default_factory=dict)
    reason: str = ""  # when nothing is drawn: the filter that emptied the drawing, in words
    gone: int = 0  # of the edges, the facts gone since the moment compared with (dashed)
    hidden: int = 0  # neighbours of drawn entities not drawn (behind "+N more" or a click)


def _count(f: Obj, what: str) -> int:
    """How many supports or disputes a fact has: a count (the drawing's read) or the list (the state format)."""
    value = f.get(what, [])
    return value if isinstance(value, int) else len(value)


def _words(values: Iterable[str]) -> str:
    return ", ".join(sorted(values))


def _kept(facts: list[Obj], flt: Filters) -> tuple[list[Obj], str]:
    """The facts every filter keeps; none, and why: the first filter that leaves none, the filters applied in turn."""
    if not facts:
        return [], "this graph holds no fact yet"
    left = facts
    for keep, words in _filter_steps(flt):
        if not (kept := [f for f in left if keep(f)]):
            before = f" (of the {len(left)} facts the filters before it keep)" if len(left) < len(facts) else ""
            return [], words + before
        left = kept
    return left, ""


def _filter_steps(flt: Filters) -> list[tuple[Callable[[Obj], bool], str]]:
    """Each filter, as a test of a fact and the words for when it leaves none."""
    kinds, relations, least = flt.kinds, flt.relations, flt.min_weight
    none = "no status is chosen, so the status filter excludes all"
    status = f"the status filter ({_words(flt.statuses)}) excludes all" if flt.statuses else none
    return [
        (lambda f: f["status"] in flt.statuses, status),
        (
            lambda f: kinds is None or f["subject"]["kind"] in kinds or f["object"].get("kind", "value") in kinds,
            f"there is no fact of kinds {_words(kinds or ())}",
        ),
        (
            lambda f: relations is None or f["relation"] in relations,
            f"there is no fact with relations {_words(relations or ())}",
        ),
        (lambda f: f["weight"] >= least, f"the minimum weight {least:.2f} leaves no fact"),
    ]


def most_connected(facts: Iterable[Obj]) -> str | None:
    """The entity named by most facts (ties by name): where a graph opens with no focus (#39)."""
    counts = Counter(node_id(e) for f in facts for e in (f["subject"], f["object"]) if "kind" in e)
    return min(counts, key=lambda n: (-counts[n], n)) if counts else None


def wrapped(text: str, width: int = WRAP) -> str:
    """A name on lines of about `width` characters, whole; a word is split only past twice that (#39: never cut)."""
    width = max(width, min(2 * width, max(map(len, text.split()), default=0)))
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or text


def node(nid: str, label: str, kind: str, ring: int, title: str, **more: object) -> Obj:
    """A node as drawn: an entity (the focus: ring 0, larger, its own colour), a box of values (-1), "+N more" (-2)."""
    color = FOCUS_COLOR if ring == 0 else "#eeeeee" if kind == "more" else color_of(kind)
    size = 26.0 if ring == 0 else 12.0 if ring > 0 else 0.0
    return dict(id=nid, name="", label=label, kind=kind, ring=ring, color=color, size=size, title=title) | more


def _entity(nid: str, e: Obj, *, ring: int, facts: int, opens: bool = False) -> Obj:
    """An entity as drawn: its name in full on wrapped lines; its tooltip says what a click does (opens: any to open)."""
    click = "click: open its neighbours" if opens else "nothing more to open here"
    hint = f"\n{click} · double-click: focus on it" if ring else ""
    title = f"{e['name']} ({e['kind']})\n{plural(facts, 'fact')} read{hint}"
    return node(nid, wrapped(e["name"]), e["kind"], ring, title, name=e["name"])


def line(a: str, b: str, title: str, **more: object) -> Obj:
    """An edge as drawn: a fact's (`_edge`), or a box's dashed tie to its entity (no fact, no label)."""
    line = dict(to=b, fact=None, relation="", label="", weight=0.0, status="active", width=1.0, dashes=True)
    return {"from": a, **line, "highlight": False, "change": "", "title": title} | more


def _edge(f: Obj, gone: bool, *, to: str, compare: Compare | None, marked: set[str]) -> Obj:
    """A fact as drawn: ends, relation, weight (on hover), status, its id (a link), its change since a moment (R32)."""
    change, said = change_of(f, compare, gone)
    title = (
        f"{fact_label(f)}\nweight {f['weight']:.3f} ({f['status']})\n{plural(f['sources'], 'independent source')}, "
        f"{plural(_count(f, 'supports'), 'support')}, {plural(_count(f, 'disputes'), 'dispute')}{said}"
    )
    drawn = dict(fact=None if gone else f.get("id"), relation=f["relation"], label=f["relation"], weight=f["weight"])
    drawn |= dict(status=f["status"], width=1 + 4 * f["weight"], dashes=f["status"] == "disputed" or gone)
    return line(node_id(f["subject"]), to, title, **drawn, highlight=fact_label(f) in marked, change=change)


def _values_box(nid: str, owned: list[tuple[Obj, bool]]) -> Obj:
    """An entity's literal values (amounts, dates) as one box beside it, not entities (#39); weights on hover, disputes said."""
    how = lambda f, gone: f" ({'gone' if gone else f['status']})" if gone or f["status"] != "active" else ""
    lines = [wrapped(f"{f['relation']}: {f['object']['value']}{how(f, gone)}") for f, gone in owned]
    more = f"\n+{len(lines) - VALUES} more on hover" if len(lines) > VALUES else ""
    title = "\n".join(f"{fact_label(f)} · weight {f['weight']:.3f}{how(f, gone)}" for f, gone in owned)
    return node(f"values:{nid}", "\n".join(lines[:VALUES]) + more, "value", -1, title, of=nid)


def _more(hidden: Mapping[str, list[tuple[str, Obj]]]) -> list[Obj]:
    """The "+N more" boxes, MORE at most: the focus's by each relation, each other entity's by its largest (#39)."""
    out = []
    for i, n in enumerate(hidden):
        for r, c in Counter(f["relation"] for _, f in hidden[n]).most_common(None if i == 0 else 1):
            title = f"{plural(c, 'neighbour')} by {r} not drawn: click to open"
            out.append(node(f"more:{r}:{n}", f"+{c} more\n{r}", "more", -2, title, of=n, relation=r))
    return out[:MORE]


class _Graph:
    """The facts kept, as each entity's neighbours (entity to entity) and literal values, and how each is drawn."""

    def __init__(self, rows: list[tuple[Obj, bool]], draw: Callable[..., Obj]) -> None:
        self.draw = draw  # a fact as an edge (`_edge` with the comparison and the facts marked)
        self.near: dict[str, list[tuple[str, Obj, bool]]] = defaultdict(list)
        self.values: dict[str, list[tuple[Obj, bool]]] = defaultdict(list)
        self.ends: dict[str, Obj] = {}
        for f, gone in sorted(rows, key=lambda r: -r[0]["weight"]):  # stable: the read's order breaks ties
            a = node_id(f["subject"])
            self.ends[a] = f["subject"]
            if "kind" not in f["object"]:
                self.values[a].append((f, gone))
                continue
            b = node_id(f["object"])
            self.ends[b] = f["object"]
            self.near[a].append((b, f, gone))
            self.near[b].append((a, f, gone))

    def read(self, n: str) -> int:
        """How many of an entity's facts were read: its links and its values (its tooltip, drawn or opened)."""
        return len(self.near[n]) + len(self.values[n])

    def rings(self, focus: str, depth: int) -> dict[str, int]:
        """The entities drawn and their ring, heaviest first, FIRST at most; past depth 1 KIDS each, in turns (#39)."""
        drawn, ring = {focus: 0}, [focus]
        for k in range(1, depth + 1):
            room = (FIRST - 1) // depth if k < depth else FIRST - len(drawn)
            queues = [[b for b, _, _ in self.near[n] if b not in drawn] for n in ring]
            turns = dict.fromkeys(b for i in range(FIRST if k == 1 else KIDS) for q in queues for b in q[i : i + 1])
            ring = list(turns)[:room]  # the queues hold none drawn
            drawn |= dict.fromkeys(ring, k)
        return drawn

    def plan(self, focus: str, depth: int) -> Plan:
        """The focus's rings to `depth`, each entity joined to the one it hangs from; values and "+N more" boxes."""
        rings = self.rings(focus, depth)
        up, tree, across = self.joins(rings)
        owners = [n for n in rings if self.values[n]]
        hidden = {n: [(b, f) for b, f, _ in self.near[n] if b not in rings] for n in rings}
        nodes = [
            _entity(n, self.ends[n], ring=k, facts=self.read(n), opens=bool(hidden[n])) | ({"of": up[n]} if k else {})
            for n, k in rings.items()
        ]
        nodes += [_values_box(n, self.values[n]) for n in owners]
        edges = [self.draw(f, gone, to=b) for _, b, f, gone in tree]
        edges += [self.draw(f, gone, to=f"values:{n}") | {"label": ""} for n in owners for f, gone in self.values[n]]
        more = _more(hidden)
        spare = self.spare(rings, hidden, more, across)
        gone = sum(1 for e in edges if e["change"] == "gone")
        edges += [line(box["of"], box["id"], box["title"]) for box in more]
        return Plan(nodes + more, _merged(edges), focus, spare, "", gone, len(spare["nodes"]))

    def joins(self, rings: Mapping[str, int]) -> tuple[dict[str, str], list, list]:
        """The entity each hangs from; the facts joining the two (drawn) and the other facts between those drawn."""
        up = {b: next(a for a, _, _ in self.near[b] if rings.get(a) == k - 1) for b, k in rings.items() if k}
        joined = [
            (n, b, f, gone) for n in rings for b, f, gone in self.near[n] if b in rings and node_id(f["subject"]) == n
        ]
        tree = [(n, b, f, gone) for n, b, f, gone in joined if n == up.get(b) or b == up.get(n)]
        return up, tree, [j for j in joined if j not in tree]

    def spare(
        self, rings: Mapping[str, int], hidden: Mapping[str, list[tuple[str, Obj]]], more: list[Obj], across: list
    ) -> Obj:
        """What a click opens: each drawn entity's SPARE heaviest not drawn (and its "+N more"), the facts across."""
        opens = {n: dict.fromkeys(b for b, _ in hidden[n][:SPARE]) for n in rings}
        for box in more:
            same = [b for b, f in hidden[box["of"]] if f["relation"] == box["relation"]]
            opens[box["of"]] |= dict.fromkeys(same[:SPARE])
        nodes = {b: _entity(b, self.ends[b], ring=9, facts=self.read(b)) for n in rings for b in opens[n]}
        edges = [
            self.draw(f, gone, to=node_id(f["object"])) for n in rings for b, f, gone in self.near[n] if b in opens[n]
        ]
        edges += [self.draw(f, gone, to=b) for _, b, f, gone in across]
        return {"nodes": nodes, "edges": _unique(edges)}


def plan(
    graph: Mapping[str, object],
    focus: str | None = None,
    flt: Filters | None = None,
    *,
    highlight: Iterable[str] = (),
    compare: Compare | None = None,
) -> Plan:
    """The focus (a node id; None: the most connected) and its rings to `flt.depth` (#39); gone facts dashed (R32)."""
    flt = flt or Filters()
    kept, reason = _kept(cast("list[Obj]", graph["facts"]), flt)  # a drawing's read or a state's graph: facts as JSON
    ghosts = _kept(compare.gone, flt)[0] if compare else []
    draw = partial(_edge, compare=compare, marked=set(highlight))
    g = _Graph([(f, False) for f in kept] + [(f, True) for f in ghosts], draw)
    focus = focus if focus in g.ends else most_connected(kept)  # none only when no fact is kept
    return g.plan(focus, flt.depth) if focus else Plan([], [], reason=reason)


def _unique(edges: list[Obj]) -> list[Obj]:
    """Each fact once, heaviest first."""
    seen: dict[tuple[str, str, str], Obj] = {}
    for e in edges:
        seen.setdefault((e["from"], e["to"], e["relation"]), e)
    return sorted(seen.values(), key=lambda e: -e["weight"])


def _merged(edges: list[Obj]) -> list[Obj]:
    """Facts between the same two entities: the first edge names every relation (one label, not two on one spot)."""
    by_pair: dict[frozenset[str], list[Obj]] = defaultdict(list)
    for e in _unique(edges):
        by_pair[frozenset((e["from"], e["to"]))].append(e)
    for group in by_pair.values():
        labels = [e["label"] for e in group if e["label"]]
        for i, e in enumerate(group):
            e["label"] = "\n".join(labels) if i == 0 else ""
    return [e for group in by_pair.values() for e in group]


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
    """The legend as HTML (st.html, no Markdown read): a coloured dot per kind, each kind escaped."""
    dot = "<span style='color:{}'>●</span> {} ({})"
    return " ".join(
        dot.format(html.escape(x["color"], quote=True), html.escape(x["kind"]), int(x["entities"])) for x in legend(p)
    )


def legend(p: Plan) -> list[Obj]:
    """Kinds drawn, with their colour and count."""
    counts = Counter(n["kind"] for n in p.nodes if n["ring"] >= 0)
    return [{"kind": k, "color": color_of(k), "entities": c} for k, c in sorted(counts.items())]
