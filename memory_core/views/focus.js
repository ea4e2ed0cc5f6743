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
  function extents(at) {  // each node's box (a dot's name whole: vis-network's box stops above its foot) and relation's
    var out = nodes.getIds().map(function (n) {
      var b = network.getBoundingBox(n), s = network.body.nodes[n].labelModule.size;
      return {l: Math.min(b.left, s.left), r: Math.max(b.right, s.left + s.width), t: b.top,
              b: Math.max(b.bottom, s.top + s.height), at: at[n], id: n};
    });
    return out.concat(Object.values(network.body.edges).filter(function (e) { return e.options.label; }).map(function (e) {
      var s = e.labelModule.size;
      return {l: s.left, r: s.left + s.width, t: s.top, b: s.top + s.height};
    }));
  }
  // Everything drawn in the frame (names and relations too), the focus within 8% of its middle (#39); once, as the
  // drawing opens: a click moves neither the view nor what is drawn (#39: not one px on the screen).
  function fit() {
    var f = network.getPositions([FOCUS])[FOCUS], b = extents({}).reduce(function (u, x) {  // what is drawn, and the focus
      return {l: Math.min(u.l, x.l), r: Math.max(u.r, x.r), t: Math.min(u.t, x.t), b: Math.max(u.b, x.b)};
    }, {l: f.x, r: f.x, t: f.y, b: f.y});
    var el = document.getElementById("mynetwork"), W = 0.98 * el.clientWidth, H = 0.98 * el.clientHeight;
    var off = 0.08, k = 0.5 + off;
    var s = Math.min(1, W / (b.r - b.l), H / (b.b - b.t), k * W / (b.r - f.x), k * W / (f.x - b.l),
                     k * H / (b.b - f.y), k * H / (f.y - b.t));
    var at = {x: Math.min(Math.max((b.l + b.r) / 2, f.x - off * W / s), f.x + off * W / s),
              y: Math.min(Math.max((b.t + b.b) / 2, f.y - off * H / s), f.y + off * H / s)};
    network.moveTo({position: at, scale: s, animation: false});
    window.centred = window.fitted = true;
  }
  network.once("afterDrawing", fit);
  // Each relation written over every line: vis-network writes it with its own edge, and a line drawn after it ran
  // through it (#39).
  network.on("afterDrawing", function (ctx) {
    Object.values(network.body.edges).forEach(function (e) { e.drawLabel(ctx, e.edgeType.getViaNode()); });
  });
  network.redraw();
  // What a click opens goes where there is room in the view (#39): each new node in turn at the free place nearest the
  // node clicked where its name and relations touch nothing drawn and no curve crosses a box (as layout.py's first
  // view); the rest wait behind "+N more".
  var ruler = document.createElement("canvas").getContext("2d");
  function box(at, label, font, pad, dot) {  // a text's box as vis-network draws it: in a box, under a dot, on an edge
    var lines = label.split("\n"), h = lines.length * font + 2 * pad;
    ruler.font = font + "px arial";
    var w = Math.max(dot, pad + Math.max.apply(null, lines.map(function (l) { return ruler.measureText(l).width / 2; })));
    return {l: at.x - w, r: at.x + w, t: dot ? at.y - dot : at.y - h / 2, b: dot ? at.y + 2 * dot + 1 + h : at.y + h / 2};
  }
  function meet(a, b) { return a.l < b.r + 6 && b.l < a.r + 6 && a.t < b.b + 6 && b.t < a.b + 6; }
  function curve(p, q) {  // points along an edge's curve from p to q as vis-network draws it (layout.BEND)
    var d = network.edgesHandler.options.smooth.roundness * (p.x - q.x);
    return Array.from({length: 65}, function (_, i) {
      var t = i / 64, a = (1 - t) * (1 - t) * (1 - t), b = 3 * t * (1 - t) * (1 - t), c = 3 * t * t * (1 - t), e = t * t * t;
      return {x: a * p.x + b * (p.x - d) + c * (q.x + d) + e * q.x, y: (a + b) * p.y + (c + e) * q.y};
    });
  }
  function cut(line, r) {  // whether a curve passes through box r (or within 3 of it)
    return line.some(function (p) { return p.x > r.l - 3 && p.x < r.r + 3 && p.y > r.t - 3 && p.y < r.b + 3; });
  }
  function place(id, items) {  // where each of `items` ({id, label, font, pad, dot, edge}) goes, its `edge` to `id` clear
    var at = network.getPositions(), boxes = extents(at), c = at[id], out = {}, spots = [];
    var lines = Object.values(network.body.edges).map(function (e) { return curve(at[e.fromId], at[e.toId]); });
    var el = document.getElementById("mynetwork"), W = el.clientWidth, H = el.clientHeight;
    var lo = network.DOMtoCanvas({x: 0.01 * W + 2, y: 0.01 * H + 2}), hi = network.DOMtoCanvas({x: 0.99 * W - 2, y: 0.99 * H - 2});
    for (var x = lo.x; x <= hi.x; x += 12) { for (var y = lo.y; y <= hi.y; y += 12) { spots.push({x: x, y: y}); } }
    spots.sort(function (p, q) { return Math.hypot(p.x - c.x, p.y - c.y) - Math.hypot(q.x - c.x, q.y - c.y); });
    function free(b, label) {  // a box in the view, clear of every box; a node's clear of every curve (a relation: over them)
      return b.l >= lo.x && b.r <= hi.x && b.t >= lo.y && b.b <= hi.y && boxes.every(function (o) { return !meet(o, b); })
        && (label || lines.every(function (l) { return !cut(l, b); }));
    }
    function join(p, q, label) {  // a fact's curve and relation, drawn if they stand clear of what is drawn
      var b = label && box({x: (p.x + q.x) / 2, y: (p.y + q.y) / 2}, label, 15, 0, 0), line = curve(p, q);
      var ok = (!b || free(b, true)) && boxes.every(function (o) { return !o.at || o.at === p || o.at === q || !cut(line, o); });
      return ok && lines.push(line) && (!b || boxes.push(b));
    }
    items.forEach(function (w) {
      out[w.id] = at[w.id] = spots.find(function (p) {
        var mine = Object.assign(box(p, w.label, w.font, w.pad, w.dot), {at: p});
        return free(mine) && boxes.push(mine) && (join(p, c, w.edge ? w.edge.label : "") || (boxes.pop(), false));
      });
      if (w.edge && out[w.id]) { out[w.edge.id] = true; }
    });
    SPARE.edges.forEach(function (e) {  // the click's other facts between what is drawn: without room they wait
      var p = at[e.from], q = at[e.to], near = [e.from, e.to].some(function (n) { return n === id || out[n]; });
      if (p && q && near && out[e.id] === undefined && !edges.get(e.id)) { out[e.id] = join(p, q, e.label) || null; }
    });
    return out;
  }
  function open(id, relation, more) {  // more: the "+N more" box clicked, if it was one
    var wanted = [], seen = {};
    SPARE.edges.forEach(function (e) {
      if (relation && e.label.split("\n").indexOf(relation) < 0) { return; }
      var other = e.from === id ? e.to : (e.to === id ? e.from : null);
      if (other && !nodes.get(other) && !seen[other] && SPARE.nodes[other]) { seen[other] = e.label; wanted.push(other); }
    });
    if (!wanted.length) { return; }
    var rest = more || {id: "more::" + id, label: "+99 more", shape: "box", color: "#eeeeee", more: [id, null]};
    var items = wanted.slice(0, Math.max(0, MOST - nodes.length - 1)).map(function (w) {
      var edge = SPARE.edges.find(function (e) { return [e.from, e.to].sort().join() === [w, id].sort().join(); });
      return {id: w, label: SPARE.nodes[w].label, font: 18, pad: 0, dot: SPARE.nodes[w].size, edge: edge};
    }).concat(more ? [] : [{id: rest.id, label: rest.label, font: 15, pad: 11, dot: 0}]);
    var places = place(id, items), opened = wanted.filter(function (w) { return places[w]; });
    if (!opened.length) { return more && nodes.update({id: more.id, title: more.title.split(":")[0] + ": no room left in this view (a double-click on its entity draws it whole)"}); }
    if (opened.length < wanted.length && !more && !places[rest.id]) { places[rest.id] = places[opened.pop()]; }
    nodes.add(opened.map(function (w) { return Object.assign({}, SPARE.nodes[w], places[w]); }));
    edges.add(SPARE.edges.filter(function (e) {  // the facts of the node clicked and of those it opened, with room
      return places[e.id] === true && nodes.get(e.from) && nodes.get(e.to);
    }));
    var left = wanted.length - opened.length, gone = (left ? [] : [rest]).concat(more ? [] : nodes.get({
      filter: function (n) { return n.more && n.more[0] === id; }}));  // the node's "+N more": one, or none
    nodes.remove(gone.map(function (n) { return n.id; }));
    edges.remove(edges.getIds({filter: function (e) { return gone.some(function (n) { return e.to === n.id; }); }}));
    if (left && (more || places[rest.id])) {  // its tooltip says them by relation, as the first view's "+N more" (#39)
      var by = {}, line = {dashes: true, width: 1, color: "#555555"};
      wanted.forEach(function (w) { if (opened.indexOf(w) < 0) { by[seen[w]] = (by[seen[w]] || 0) + 1; } });
      var title = left + (left > 1 ? " neighbours" : " neighbour") + (relation ? " by " + relation : " (" + Object.keys(by).map(function (r) { return by[r] + " " + r; }).join(", ") + ")") + " not drawn: click to open";
      var label = "+" + left + " more" + (relation ? "\n" + relation : "");
      nodes.update(Object.assign({font: {size: 15, background: "none"}}, rest, places[rest.id], {label: label, title: title}));
      if (!more) { edges.update(Object.assign({id: "line-" + rest.id, from: id, to: rest.id, title: title}, line)); }
    }
    window.fitted = false;  // until what opened is drawn
    network.once("afterDrawing", function () { window.fitted = true; });
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
      } else if (node && node.more) { open(node.more[0], node.more[1], node); }
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
