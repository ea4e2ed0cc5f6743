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
  // Everything drawn in the frame (names and relations too): the focus within 8% of its middle (#39). After a
  // click (`loose`) the view moves only if something drawn is outside it, and then as little as it can: zoomed
  // out no further than needed, panned no further than needed, smoothly; the nodes stay where they are, so
  // what was drawn does not jump (#39: a click moves it by less than 20 px). Returns whether the view moves.
  function fit(loose) {
    var f = network.getPositions([FOCUS])[FOCUS], b = {l: f.x, r: f.x, t: f.y, b: f.y};
    function add(l, t, r, btm) { b.l = Math.min(b.l, l); b.r = Math.max(b.r, r); b.t = Math.min(b.t, t); b.b = Math.max(b.b, btm); }
    nodes.getIds().forEach(function (id) { var x = network.getBoundingBox(id); add(x.left, x.top, x.right, x.bottom); });
    Object.values(network.body.edges).forEach(function (e) {
      var s = e.labelModule.size;
      if (e.options.label) { add(s.left, s.top, s.left + s.width, s.top + s.height); }
    });
    var el = document.getElementById("mynetwork"), W = 0.98 * el.clientWidth, H = 0.98 * el.clientHeight;
    if (loose) {
      var v = network.getViewPosition(), now = network.getScale();
      var s = Math.min(now, W / (b.r - b.l), H / (b.b - b.t));
      function pan(c, lo, hi, half) { return Math.max(hi - half, Math.min(lo + half, c)); }
      var at = {x: pan(v.x, b.l, b.r, W / 2 / s), y: pan(v.y, b.t, b.b, H / 2 / s)};
      if (s === now && at.x === v.x && at.y === v.y) { return false; }
      network.moveTo({position: at, scale: s, animation: {duration: 300, easingFunction: "easeInOutQuad"}});
      return true;
    }
    var off = 0.08, k = 0.5 + off;
    var s = Math.min(W / (b.r - b.l), H / (b.b - b.t), k * W / (b.r - f.x), k * W / (f.x - b.l),
                     k * H / (b.b - f.y), k * H / (f.y - b.t));
    function near(c, at, room) { return Math.max(at - room, Math.min(at + room, c)); }
    var at = {x: near((b.l + b.r) / 2, f.x, off * W / s), y: near((b.t + b.b) / 2, f.y, off * H / s)};
    network.moveTo({position: at, scale: s, animation: false});
    return true;
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
      if (relation && e.label.split("\n").indexOf(relation) < 0) { return; }
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
      if (fit(true)) { network.once("animationFinished", function () { window.fitted = true; }); } else { window.fitted = true; }
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
