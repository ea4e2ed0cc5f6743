"""pyvis's page templates, compiled once a process, their libraries put in after rendering (viz.to_html)."""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import Environment

MARK = re.compile(r"<!--inline (lib/[\w./-]+)-->")


def mark(name: str) -> str:
    return f"<!--inline {name}-->"


@functools.lru_cache(maxsize=1)
def pyvis_templates() -> str:
    """The folder of pyvis's templates and the libraries they inline."""
    spec = importlib.util.find_spec("pyvis")
    assert spec is not None and spec.submodule_search_locations, "pyvis is not installed"
    return str(Path(next(iter(spec.submodule_search_locations))) / "templates")


@functools.lru_cache(maxsize=2)
def templates(folder: str) -> Environment:
    """pyvis's templates compiled once, escaping every value; inlined libraries left as marks (B8)."""
    from jinja2 import Environment, FileSystemLoader

    class Inline(FileSystemLoader):
        def get_source(self, environment: Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
            if template.startswith("lib/"):
                return mark(template), template, lambda: True
            return super().get_source(environment, template)

    env = Environment(loader=Inline(folder), autoescape=True)
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False}  # smaller
    return env


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


@functools.lru_cache(maxsize=8)
def library(folder: str, name: str) -> str:
    """A library pyvis inlines, as its template would include it, or the part of it the drawing uses."""
    if name in USED:
        return USED[name]
    return (Path(folder) / name).read_text(encoding="utf-8")


#: A click on a fact opens its weight (`fact-weights?fact=ID`): the same-origin iframe, which may not navigate the
#: top window, moves the app's history and tells it as a back button would, so the session is kept.
CLICK_SCRIPT = """<script>
(function () {
  var GRAPH = %GRAPH%, FONT = %FONT%, EDGE = %EDGE%;
  function page() {
    try { return new URL(window.parent.location.href); } catch (e) { return new URL(document.referrer); }
  }
  function factUrl(fact) {
    var here = page(), q = new URLSearchParams();
    ["org", "as"].forEach(function (k) { if (here.searchParams.get(k)) q.set(k, here.searchParams.get(k)); });
    q.set("graph", GRAPH);
    q.set("fact", String(fact));
    return new URL("fact-weights?" + q.toString(), here);
  }
  function go(url) {
    try {
      var app = window.parent;
      app.history.pushState({}, "", url.pathname + url.search);
      app.dispatchEvent(new app.PopStateEvent("popstate"));
    } catch (e) {
      window.top.location.href = url.href;
    }
  }
  function openFact(fact) { go(factUrl(fact)); }
  // A double-click explores (#25): the first entity is the focus, others open or close (?expand=id,id, each
  // id's "%" and "," escaped); the page draws only what the reader may see (R20).
  function expandUrl(id) {
    var here = page(), q = here.searchParams;
    var open = (q.get("expand") || "").split(",").filter(Boolean).map(decodeURIComponent);
    if (!q.get("entity")) { q.set("entity", id); open = []; }
    else if (q.get("entity") === id) { return null; }
    else if (open.indexOf(id) >= 0) { open = open.filter(function (x) { return x !== id; }); }
    else { open.push(id); }
    var one = function (x) { return x.replace(/%/g, "%25").replace(/,/g, "%2C"); };
    q.set("expand", open.map(one).join(","));  // empty: all closed (the page then drops it from the link)
    return here;
  }
  window.expandUrl = expandUrl;
  network.on("doubleClick", function (params) {
    if (!params.nodes.length) { return; }
    var url = expandUrl(String(params.nodes[0]));
    if (url) { go(url); }
  });
  // Names at least 10 px at the fit: a frame narrower than the layout's 940 x 620 draws them larger.
  function readable() {
    var s = network.getScale(), fit = {};
    if (s * FONT < 10.5) { fit.nodes = {font: {size: 10.5 / s}}; }
    if (s * FONT * EDGE < 10.5) { fit.edges = {font: {size: 10.5 / s}}; }
    if (fit.nodes || fit.edges) {
      network.setOptions(fit);
      requestAnimationFrame(function () { requestAnimationFrame(apart); });  // once drawn at that size
    }
  }
  // Of two names that touch once larger, the smaller dot's goes to its tooltip: no two names drawn overlap.
  function apart() {
    var nodes = network.body.nodes, kept = [], gone = [];
    var named = Object.keys(nodes).filter(function (id) { return (nodes[id].options.label || "").trim(); });
    named.sort(function (a, b) { return nodes[b].options.size - nodes[a].options.size || (a < b ? -1 : 1); });
    named.forEach(function (id) {
      var b = nodes[id].labelModule.size;
      var hit = kept.some(function (k) {
        return b.left < k.left + k.width && k.left < b.left + b.width && b.top < k.top + k.height && k.top < b.top + b.height;
      });
      if (hit) { gone.push({id: id, label: " "}); } else { kept.push(b); }
    });
    if (gone.length) { network.body.data.nodes.update(gone); }
  }
  readable();  // the fit as drawn (zooming later changes nothing here)
  network.once("afterDrawing", readable);
  window.factUrl = factUrl;
  window.openFact = openFact;
  // A click opens the fact whose tooltip shows (vis-network's hit test reports a node near the edge pointed at).
  var shown = null;
  network.on("showPopup", function (id) { shown = network.body.data.edges.get(id) ? id : null; });
  network.on("hidePopup", function () { shown = null; });
  network.on("click", function (params) {
    var id = !params.nodes.length && params.edges.length ? params.edges[0] : shown;
    if (id === null || id === undefined) { return; }
    var edge = network.body.data.edges.get(id);
    if (edge && edge.fact !== null && edge.fact !== undefined) { openFact(edge.fact); }
  });
})();
</script>
"""
