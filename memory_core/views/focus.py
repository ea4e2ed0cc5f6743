"""A focus's drawing as still, offline pyvis HTML and its script: click to open, double-click to walk (#39)."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..plain import Obj
from ..rules.vocabulary import GRAPHS
from . import layout
from .compare import ADDED_COLOR, GONE_COLOR, MOVED_COLOR

if TYPE_CHECKING:
    from jinja2 import Environment

    from .viz import Plan

MOST = 60  # nodes drawn at once, those a click opens too (#39)
_SCRIPT = """<script>
(function () {
  var GRAPH = %GRAPH%, FOCUS = %FOCUS%, SPARE = %SPARE%, MOST = %MOST%;
  var nodes = network.body.data.nodes, edges = network.body.data.edges;
  function page() {
    try { return new URL(window.parent.location.href); } catch (e) { return new URL(document.referrer); }
  }
  function go(url) {
    try {
      var app = window.parent;
      app.history.pushState({}, "", url.pathname + url.search);
      app.dispatchEvent(new app.PopStateEvent("popstate"));
    } catch (e) { window.top.location.href = url.href; }
  }
  function factUrl(fact) {
    var here = page(), q = new URLSearchParams();
    ["org", "as"].forEach(function (k) { if (here.searchParams.get(k)) { q.set(k, here.searchParams.get(k)); } });
    q.set("graph", GRAPH);
    q.set("fact", String(fact));
    return new URL("fact-weights?" + q.toString(), here);
  }
  function focusUrl(name) {
    var here = page();
    ["entity", "expand", "view", "community"].forEach(function (k) { here.searchParams.delete(k); });
    here.searchParams.set("focus", name);
    return here;
  }
  // Everything drawn in the frame (names and relations too): the focus within 8% of its middle (#39); after a
  // click (`loose`), wherever what is drawn needs, moved to smoothly; the nodes themselves stay where they are.
  function fit(loose) {
    var f = network.getPositions([FOCUS])[FOCUS], b = {l: f.x, r: f.x, t: f.y, b: f.y};
    function add(l, t, r, btm) { b.l = Math.min(b.l, l); b.r = Math.max(b.r, r); b.t = Math.min(b.t, t); b.b = Math.max(b.b, btm); }
    nodes.getIds().forEach(function (id) { var x = network.getBoundingBox(id); add(x.left, x.top, x.right, x.bottom); });
    Object.values(network.body.edges).forEach(function (e) {
      var s = e.labelModule.size;
      if (e.options.label) { add(s.left, s.top, s.left + s.width, s.top + s.height); }
    });
    var el = document.getElementById("mynetwork"), W = 0.98 * el.clientWidth, H = 0.98 * el.clientHeight;
    var off = loose ? Infinity : 0.08, k = 0.5 + off;
    var s = Math.min(W / (b.r - b.l), H / (b.b - b.t), k * W / (b.r - f.x), k * W / (f.x - b.l),
                     k * H / (b.b - f.y), k * H / (f.y - b.t));
    function near(c, at, room) { return Math.max(at - room, Math.min(at + room, c)); }
    var at = {x: near((b.l + b.r) / 2, f.x, off * W / s), y: near((b.t + b.b) / 2, f.y, off * H / s)};
    network.moveTo({position: at, scale: s, animation: loose ? {duration: 300, easingFunction: "easeInOutQuad"} : false});
  }
  network.once("afterDrawing", function () { fit(false); window.centred = true; });
  network.redraw();
  // Around a node, outward from the focus: free places for the neighbours a click opens.
  function around(id, n) {
    var all = network.getPositions(), c = all[id], f = all[FOCUS] || {x: 0, y: 0}, out = [];
    var base = (c.x === f.x && c.y === f.y) ? Math.PI / 2 : Math.atan2(c.y - f.y, c.x - f.x);
    var taken = Object.values(all);
    for (var k = 0; out.length < n && k < 400; k++) {
      var ring = 1 + Math.floor(k / 12), a = base + ((k % 12) - 5.5) * 0.32;
      var p = {x: c.x + 170 * ring * Math.cos(a), y: c.y + 170 * ring * Math.sin(a)};
      if (taken.every(function (q) { return Math.abs(q.x - p.x) > 130 || Math.abs(q.y - p.y) > 70; })) {
        out.push(p);
        taken.push(p);
      }
    }
    return out;
  }
  function open(id, relation) {
    var wanted = [], seen = {};
    SPARE.edges.forEach(function (e) {
      if (relation && e.label.split("\\n").indexOf(relation) < 0) { return; }
      var other = e.from === id ? e.to : (e.to === id ? e.from : null);
      if (other && !nodes.get(other) && !seen[other] && SPARE.nodes[other]) { seen[other] = 1; wanted.push(other); }
    });
    wanted = wanted.slice(0, Math.max(0, MOST - nodes.length));
    var places = around(id, wanted.length);
    nodes.add(wanted.slice(0, places.length).map(function (w, i) {
      return Object.assign({}, SPARE.nodes[w], {x: places[i].x, y: places[i].y});
    }));
    var near = function (n) { return n === id || seen[n]; };  // the facts of the node clicked and of those it opened
    edges.add(SPARE.edges.filter(function (e) {
      return (near(e.from) || near(e.to)) && nodes.get(e.from) && nodes.get(e.to) && !edges.get(e.id);
    }));
    window.fitted = false;  // once drawn, the view moves to show what opened
    network.once("afterDrawing", function () {
      network.once("animationFinished", function () { window.fitted = true; });
      fit(true);
    });
  }
  // A click opens the fact whose tooltip shows, even where vis-network's hit test reports a node (#16).
  var shown = null;
  network.on("showPopup", function (id) { shown = edges.get(id) ? id : null; });
  network.on("hidePopup", function () { shown = null; });
  network.on("click", function (params) {
    if (params.nodes.length && shown === null) {
      var node = nodes.get(params.nodes[0]);
      if (node && node.central) {  // a community: opened around its most connected entity, its members listed
        var u = focusUrl(node.central);
        u.searchParams.set("community", node.id.split(":")[1]);
        go(u);
      } else if (node && node.more) { open(node.more[0], node.more[1]); nodes.remove(node.id); }
      else if (node && node.name) { open(node.id, null); }
      return;
    }
    var id = shown !== null ? shown : params.edges[0], edge = id === undefined ? null : edges.get(id);
    if (edge && edge.fact !== null && edge.fact !== undefined) { go(factUrl(edge.fact)); }
  });
  network.on("doubleClick", function (params) {
    var node = params.nodes.length ? nodes.get(params.nodes[0]) : null;
    if (node && node.name && node.id !== FOCUS) { go(focusUrl(node.name)); }
  });
})();
</script>
"""


def script(graph: str, focus: str, spare: Obj) -> str:
    """The drawing's script, its data as JSON (memory's text only as data: <, > and & escaped, so no tag shows)."""
    values = {"%GRAPH%": graph, "%FOCUS%": focus, "%SPARE%": spare, "%MOST%": MOST}
    out = _SCRIPT
    for key, value in values.items():
        text = json.dumps(value, ensure_ascii=False)
        out = out.replace(key, text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
    return out


_OUTSIDE = re.compile(r"<(link|script)\b[^>]*(href|src)=[\"']https?://[^>]*>(\s*</script>)?", re.I)


_SHOWN = {"scaling": {"label": {"drawThreshold": 1}}}  # every name and relation written, however small the fit


def _options() -> Obj:
    """vis-network's options: no physics (nothing moves), straight edges, relations level, text on white."""
    text, arrows = {"strokeWidth": 0, "background": "#ffffff"}, {"to": {"enabled": True, "scaleFactor": 0.5}}
    return {
        "physics": {"enabled": False},
        "layout": {"randomSeed": layout.SEED, "improvedLayout": False},
        "nodes": {"shape": "dot", "physics": False, "font": {"size": layout.FONT, **text}, **_SHOWN},
        "edges": {"arrows": arrows, "smooth": False, "font": {"size": layout.EDGE, "align": "horizontal", **text}}
        | _SHOWN,
        "interaction": {"hover": True, "tooltipDelay": 120},
    }


def box(n: Obj) -> layout.Box:
    """A node's drawn extent around its position: half width, half height, and its centre's offset down."""
    lines, font = n["label"].split("\n"), layout.FONT if n["size"] else layout.EDGE
    w, h = max(map(len, lines)) * layout.CHAR * font / 2, len(lines) * layout.LINE * font / 2
    if not n["size"] or not n["ring"]:  # a box (the focus too: no edge crosses its name): its text inside, a margin
        return w + 6, h + 6, 0.0
    r = n["size"]
    return max(r, w), r + h + 1, h + 1


def to_html(p: Plan, *, graph: str = "world") -> str:
    """Self-contained pyvis HTML (no outside URL), positions given, physics off, with the drawing's script."""
    pos = layout.arrange(p.focus, p.nodes, p.edges, {n["id"]: box(n) for n in p.nodes})
    nodes = [_vis_node(n, pos[n["id"]]) for n in p.nodes]
    edges = [_vis_edge(e, i) for i, e in enumerate(p.edges)]
    spare = {
        "nodes": {k: _vis_node(n, None) for k, n in p.spare.get("nodes", {}).items()},
        "edges": [_vis_edge(e, i + len(edges)) for i, e in enumerate(p.spare.get("edges", []))],
    }
    page = _OUTSIDE.sub("", _render(nodes, edges, _options(), height="620px"))
    return page.replace("</body>", script(graph if graph in GRAPHS else "world", p.focus, spare) + "</body>", 1)


def _vis_node(n: Obj, at: tuple[float, float] | None) -> Obj:
    """A node as vis-network takes it: a box (values, "+N more", the focus) with its text inside, else a dot."""
    drawn = {k: n.get(k) for k in ("id", "name", "label", "title", "color", "central")} | {"size": n["size"] or None}
    if not n["size"] or not n["ring"]:
        drawn |= {"shape": "box", "font": {"size": layout.EDGE if n["ring"] else layout.FONT, "background": "none"}}
    more = [n["of"], n["relation"]] if n["kind"] == "more" else None
    return _given(**drawn, borderWidth=4 if n["ring"] == 0 else None, more=more, x=at and at[0], y=at and at[1])


def _vis_edge(e: Obj, i: int) -> Obj:
    key = f"fact-{e['fact']}" if e["fact"] is not None else f"edge-{i}"  # stable across reloads
    drawn = {k: e[k] for k in ("from", "to", "fact", "title", "label", "dashes")}
    return _given(id=key, **drawn, width=round(e["width"], 2), color=_edge_color(e))


def _given(**values: object) -> Obj:
    """The values vis-network does not take as given: no empty label, no False, no None (a 0 stays)."""
    return {k: v for k, v in values.items() if not (v is None or v is False or v == "")}


def _edge_color(e: Obj) -> str:
    """Red: what the last notebook cell changed; then what changed since the moment compared; else by status."""
    if e["highlight"]:
        return "#d62728"
    if change := e["change"]:
        return {"added": ADDED_COLOR, "gone": GONE_COLOR}.get(change, MOVED_COLOR)
    return "#999999" if e["status"] != "active" else "#555555"


#: pyvis's template besides the drawing: a white page, its libraries inline; each other switch (heading, physics,
#: DOT, menus, highlight) left undefined, which its template reads as off.
PYVIS_PAGE: Obj = {"width": "100%", "bgcolor": "#ffffff", "cdn_resources": "in_line"}


#: A library pyvis's templates inline, left as this mark when rendering and put in after.
MARK = re.compile(r"<!--inline (lib/[\w./-]+)-->")
#: The part of a file pyvis inlines that the drawing uses (B8: the page is sent on every drawing): of vis-network's
#: 220 kB stylesheet its tooltip; none of pyvis's bindings (highlight and menus are off).
USED = {
    "lib/bindings/utils.js": "",
    "lib/vis-9.1.2/vis-network.css": (
        "div.vis-tooltip{background-color:#f5f4ed;border:1px solid #808074;border-radius:3px;"
        "box-shadow:3px 3px 10px rgba(0,0,0,.2);color:#000;font-family:verdana;font-size:14px;padding:5px;"
        "pointer-events:none;position:absolute;visibility:hidden;white-space:nowrap;z-index:5}"
    ),
}


@functools.lru_cache(maxsize=1)
def _pyvis() -> tuple[Path, Environment]:
    """pyvis's templates' folder, and its templates compiled once a process, escaping every value (B8)."""
    from jinja2 import Environment, FileSystemLoader

    spec = importlib.util.find_spec("pyvis")
    assert spec is not None and spec.submodule_search_locations, "pyvis is not installed"
    folder = Path(next(iter(spec.submodule_search_locations))) / "templates"

    class Inline(FileSystemLoader):
        def get_source(self, environment: Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
            if template.startswith("lib/"):
                return f"<!--inline {template}-->", template, lambda: True
            return super().get_source(environment, template)

    env = Environment(loader=Inline(folder), autoescape=True)
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False}  # smaller
    return folder, env


@functools.lru_cache(maxsize=8)
def _library(name: str) -> str:
    """A library pyvis inlines, as its template would include it, or the part of it the drawing uses."""
    return USED[name] if name in USED else (_pyvis()[0] / name).read_text(encoding="utf-8")


def _render(nodes: list[Obj], edges: list[Obj], options: Obj, *, height: str) -> str:
    """pyvis's template filled as its Network would (values escaped), without importing it (IPython)."""
    template = _pyvis()[1].get_template("template.html")
    page = str(template.render(height=height, nodes=nodes, edges=edges, options=json.dumps(options), **PYVIS_PAGE))
    head, body = page.split("</head>", 1)  # the template's libraries are in its head, memory's text below
    for name in dict.fromkeys(MARK.findall(head)):  # each library once
        head = head.replace(f"<!--inline {name}-->", _library(name), 1)
    return head + "</head>" + body
