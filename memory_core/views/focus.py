"""A focus's drawing as still, offline pyvis HTML and its script: click to open, double-click to walk (#39)."""

from __future__ import annotations

import functools
import html
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


@functools.cache
def _script() -> str:
    """The drawing's script (focus.js beside this module), its data still to be put in."""
    return "<script>\n" + Path(__file__).with_name("focus.js").read_text(encoding="utf-8") + "</script>\n"


def script(graph: str, focus: str, spare: Obj) -> str:
    """The drawing's script, its data as JSON (memory's text only as data: <, > and & escaped, so no tag shows)."""
    out = _script()
    for key, value in {"%GRAPH%": graph, "%FOCUS%": focus, "%SPARE%": spare, "%MOST%": MOST}.items():
        text = json.dumps(value, ensure_ascii=False)
        out = out.replace(key, text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
    return out


_OUTSIDE = re.compile(r"<(link|script)\b[^>]*(href|src)=[\"']https?://[^>]*>(\s*</script>)?", re.I)
_SHOWN = {"scaling": {"label": {"drawThreshold": 1}}}  # every name and relation written, however small the fit
_CURVED = {"type": "cubicBezier", "forceDirection": "horizontal", "roundness": layout.BEND}  # edges leave level (#39)


def _options(smooth: Obj | bool) -> Obj:
    """vis-network's options: no physics (nothing moves), edges as `smooth` says, relations level, text on white."""
    text, arrows = {"strokeWidth": 0, "background": "#ffffff"}, {"to": {"enabled": True, "scaleFactor": 0.5}}
    return {
        "physics": {"enabled": False},
        "layout": {"randomSeed": layout.SEED, "improvedLayout": False},
        "nodes": {"shape": "dot", "physics": False, "font": {"size": layout.FONT, **text}, **_SHOWN},
        "edges": {"arrows": arrows, "smooth": smooth, "font": {"size": layout.EDGE, "align": "horizontal", **text}}
        | _SHOWN,
        "interaction": {"hover": True, "tooltipDelay": 120},
    }


def box(n: Obj) -> layout.Box:
    """A node's drawn extent around its position: half width, half height, and its centre's offset down."""
    lines, font = n["label"].split("\n"), layout.FONT if n["size"] else layout.EDGE
    w, h = max(map(len, lines)) * layout.CHAR * font / 2, len(lines) * layout.LINE * font / 2
    if not n["size"] or not n["ring"]:  # a box (the focus too: no edge crosses its name): its text inside, 5 and 6 more
        return w + 11, h + 11, 0.0
    r = n["size"]
    return max(r, w), r + h + 7, h + 7


def to_html(p: Plan, *, graph: str = "world", library: str | None = None) -> str:
    """Self-contained pyvis HTML (no outside URL), positions given, physics off, with the drawing's script; with
    `library`, vis-network's address on the server that serves the page (`library_dir()`), loaded from there."""
    pos = layout.arrange(p.focus, p.nodes, p.edges, {n["id"]: box(n) for n in p.nodes})
    nodes = [_vis_node(n, pos[n["id"]]) for n in p.nodes]
    edges = [_vis_edge(e, i) for i, e in enumerate(p.edges)]
    spare = {
        "nodes": {k: _vis_node(n, None) for k, n in p.spare.get("nodes", {}).items()},
        "edges": [_vis_edge(e, i + len(edges)) for i, e in enumerate(p.spare.get("edges", []))],
    }
    smooth = not p.focus.startswith("community:") and _CURVED  # the communities' ring: straight
    page = _OUTSIDE.sub("", _render(nodes, edges, _options(smooth), height="620px", library=library))
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
    boxed = {"to": not e["to"].startswith(("values:", "more:"))}  # no arrowhead on the entity's own box (#39: its name)
    return _given(id=key, **drawn, width=round(e["width"], 2), color=_edge_color(e), arrows=boxed)


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
#: vis-network, as pyvis's template inlines it: 468 kB of the drawing's page, parsed and compiled on the browser's
#: page thread each time it is drawn, unless loaded from the server (`to_html`'s `library`, B8).
VIS = "lib/vis-9.1.2/vis-network.min.js"
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


def library_dir() -> Path:
    """The folder of vis-network's script (`VIS`), for a server to serve (pages/_drawing.library)."""
    return _pyvis()[0] / Path(VIS).parent


def _render(nodes: list[Obj], edges: list[Obj], options: Obj, *, height: str, library: str | None = None) -> str:
    """pyvis's template filled as its Network would (values escaped), without importing it (IPython); vis-network
    loaded from `library` if given."""
    template = _pyvis()[1].get_template("template.html")
    page = str(template.render(height=height, nodes=nodes, edges=edges, options=json.dumps(options), **PYVIS_PAGE))
    head, body = page.split("</head>", 1)  # the template's libraries are in its head, memory's text below
    if library is not None:
        inline = f"<script><!--inline {VIS}--></script>"
        head = head.replace(inline, f'<script src="{html.escape(library, quote=True)}"></script>', 1)
    for name in dict.fromkeys(MARK.findall(head)):  # each library once
        head = head.replace(f"<!--inline {name}-->", _library(name), 1)
    return head + "</head>" + body
