"""The script of a focus's drawing (#39): the focus centred, a click on an entity opening its neighbours around
it (nothing drawn moves), a click on "+N more" opening that relation's, a double-click focusing on an entity
(the page's link, its trail kept by the page), a click on a fact opening its weight."""

from __future__ import annotations

import json

from ..plain import Obj

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
    ["entity", "expand"].forEach(function (k) { here.searchParams.delete(k); });
    here.searchParams.set("focus", name);
    return here;
  }
  // The focus in the frame's middle, everything drawn in the frame (names and relations too).
  function centre() {
    var f = network.getPositions([FOCUS])[FOCUS], ex = 1, ey = 1;
    nodes.getIds().forEach(function (id) {
      var b = network.getBoundingBox(id);
      ex = Math.max(ex, Math.abs(b.left - f.x), Math.abs(b.right - f.x));
      ey = Math.max(ey, Math.abs(b.top - f.y), Math.abs(b.bottom - f.y));
    });
    Object.values(network.body.edges).forEach(function (e) {
      var s = e.labelModule.size;
      if (!e.options.label) { return; }
      ex = Math.max(ex, Math.abs(s.left - f.x), Math.abs(s.left + s.width - f.x));
      ey = Math.max(ey, Math.abs(s.top - f.y), Math.abs(s.top + s.height - f.y));
    });
    var el = document.getElementById("mynetwork");
    var scale = 0.96 * Math.min(el.clientWidth / 2 / ex, el.clientHeight / 2 / ey);
    network.moveTo({position: f, scale: scale});
  }
  network.once("afterDrawing", function () { centre(); window.centred = true; });
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
    edges.add(SPARE.edges.filter(function (e) { return nodes.get(e.from) && nodes.get(e.to) && !edges.get(e.id); }));
    window.opened = (window.opened || 0) + places.length;
  }
  // A click opens the fact whose tooltip shows, even where vis-network's hit test reports a node (#16).
  var shown = null;
  network.on("showPopup", function (id) { shown = edges.get(id) ? id : null; });
  network.on("hidePopup", function () { shown = null; });
  network.on("click", function (params) {
    if (params.nodes.length && shown === null) {
      var node = nodes.get(params.nodes[0]);
      if (node && node.more) { open(node.more[0], node.more[1]); nodes.remove(node.id); }
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
  window.factUrl = factUrl;
  window.focusUrl = focusUrl;
  window.openAround = open;
})();
</script>
"""


def script(graph: str, focus: str, spare: Obj, most: int) -> str:
    """The drawing's script, its data as JSON (memory's text only as data: <, > and & escaped, so no tag shows)."""
    values = {"%GRAPH%": graph, "%FOCUS%": focus, "%SPARE%": spare, "%MOST%": most}
    out = _SCRIPT
    for mark, value in values.items():
        text = json.dumps(value, ensure_ascii=False)
        out = out.replace(mark, text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
    return out
