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
    var named = Object.values(network.body.edges).filter(function (e) { return e.options.label; });
    return out.concat(named.map(function (e) {
      var s = e.labelModule.size;
      return {l: s.left, r: s.left + s.width, t: s.top, b: s.top + s.height};
    }));
  }
  function clamp(c, lo, hi) { return Math.max(lo, Math.min(hi, c)); }
  function fitted() { window.fitted = true; }
  // Everything drawn in the frame (names and relations too), the focus within 8% of its middle (#39). After a click
  // (`loose`) the view moves only if something drawn is outside it, as little as it can (zoom, pan), smoothly; the
  // nodes stay where they are, so what was drawn does not jump (#39: less than 20 px). Then `window.fitted`.
  function fit(loose) {
    var f = network.getPositions([FOCUS])[FOCUS], b = extents({}).reduce(function (u, x) {  // what is drawn, and the focus
      return {l: Math.min(u.l, x.l), r: Math.max(u.r, x.r), t: Math.min(u.t, x.t), b: Math.max(u.b, x.b)};
    }, {l: f.x, r: f.x, t: f.y, b: f.y});
    var el = document.getElementById("mynetwork"), W = 0.98 * el.clientWidth, H = 0.98 * el.clientHeight;
    if (loose) {
      var v = network.getViewPosition(), now = network.getScale();
      var s = Math.min(now, W / (b.r - b.l), H / (b.b - b.t));
      var at = {x: clamp(v.x, b.r - W / 2 / s, b.l + W / 2 / s), y: clamp(v.y, b.b - H / 2 / s, b.t + H / 2 / s)};
      if (s === now && at.x === v.x && at.y === v.y) { return fitted(); }
      network.moveTo({position: at, scale: s, animation: {duration: 300, easingFunction: "easeInOutQuad"}});
      return network.once("animationFinished", fitted);
    }
    var off = 0.08, k = 0.5 + off;
    var s = Math.min(1, W / (b.r - b.l), H / (b.b - b.t), k * W / (b.r - f.x), k * W / (f.x - b.l),
                     k * H / (b.b - f.y), k * H / (f.y - b.t));
    var at = {x: clamp((b.l + b.r) / 2, f.x - off * W / s, f.x + off * W / s),
              y: clamp((b.t + b.b) / 2, f.y - off * H / s, f.y + off * H / s)};
    network.moveTo({position: at, scale: s, animation: false});
    fitted();
  }
  network.once("afterDrawing", function () { fit(false); window.centred = true; });
  network.redraw();
  // What a click opens goes where there is room in the view (#39): each new node in turn at the free place nearest the
  // node clicked where its name and relations touch nothing drawn and no line crosses a box (as layout.py's first view);
  // the rest wait behind "+N more". If none fits, lines may cross the clicked node's values box, then any box, and
  // leave the view (a few: `fit` then moves it as little as it can).
  var ruler = document.createElement("canvas").getContext("2d"), widths = {};
  function box(at, label, font, pad, dot) {  // a text's box as vis-network draws it: in a box, under a dot, on an edge
    var lines = label.split("\n"), h = lines.length * font + 2 * pad, w = widths[font + label];
    if (w === undefined) {
      ruler.font = font + "px arial";
      w = widths[font + label] = Math.max.apply(null, lines.map(function (l) { return ruler.measureText(l).width / 2; }));
    }
    w = Math.max(w + pad, dot);
    return {l: at.x - w, r: at.x + w, t: dot ? at.y - dot : at.y - h / 2, b: dot ? at.y + 2 * dot + 1 + h : at.y + h / 2};
  }
  function mid(p, q) { return {x: (p.x + q.x) / 2, y: (p.y + q.y) / 2}; }
  function meet(a, b) { return a.l < b.r + 6 && b.l < a.r + 6 && a.t < b.b + 6 && b.t < a.b + 6; }
  function crosses(a, b, r) {  // whether the line from a to b passes through box r (or within 3 of it)
    var t0 = 0, t1 = 1, d = [b.x - a.x, b.y - a.y], p = [a.x, a.y], lo = [r.l - 3, r.t - 3], hi = [r.r + 3, r.b + 3];
    for (var k = 0; k < 2; k++) {
      if (!d[k]) { if (p[k] < lo[k] || p[k] > hi[k]) { return false; } continue; }
      var u = (lo[k] - p[k]) / d[k], v = (hi[k] - p[k]) / d[k];
      t0 = Math.max(t0, Math.min(u, v)); t1 = Math.min(t1, Math.max(u, v));
    }
    return t0 <= t1;
  }
  function place(id, items, mode) {  // where each of `items` ({id, label, font, pad, dot, facts: [[end, relation]]}) goes
    var at = network.getPositions(), boxes = extents(at), c = at[id], out = {}, spots = [], step = mode > 1 ? 25 : 12;
    var lines = Object.values(network.body.edges).map(function (e) { return [at[e.fromId], at[e.toId]]; });
    var el = document.getElementById("mynetwork"), W = el.clientWidth, H = el.clientHeight, far = mode > 1 ? W : 0;
    var lo = network.DOMtoCanvas({x: 0.01 * W + 2 - far, y: 0.01 * H + 2 - far});  // within `fit`'s margins
    var hi = network.DOMtoCanvas({x: 0.99 * W - 2 + far, y: 0.99 * H - 2 + far});
    for (var x = lo.x; x <= hi.x; x += step) { for (var y = lo.y; y <= hi.y; y += step) { spots.push({x: x, y: y}); } }
    spots.sort(function (p, q) { return Math.hypot(p.x - c.x, p.y - c.y) - Math.hypot(q.x - c.x, q.y - c.y); });
    function free(b) {
      return b.l >= lo.x && b.r <= hi.x && b.t >= lo.y && b.b <= hi.y && boxes.every(function (o) { return !meet(o, b); })
        && lines.every(function (s) { return !crosses(s[0], s[1], b); });
    }
    function join(p, q, label) {  // a fact's line and relation drawn; whether they stand clear of what was drawn
      var b = label && box(mid(p, q), label, 15, 0, 0), ok = (!b || free(b)) && boxes.every(function (o) {
        return o.at === p || o.at === q || mode > (o.id === "values:" + id ? 0 : 1) || !crosses(p, q, o);
      });
      lines.push([p, q]);
      return (!b || boxes.push(b)) && ok;
    }
    SPARE.edges.forEach(function (e) {  // the facts between nodes drawn that the click adds: without room they wait
      var p = at[e.from], q = at[e.to], b = p && q && box(mid(p, q), e.label, 15, 0, 0);
      if (b && (e.from === id || e.to === id) && !edges.get(e.id)) { out[e.id] = free(b) && join(p, q, e.label) ? true : null; }
    });
    items.forEach(function (w) {
      out[w.id] = at[w.id] = spots.find(function (p) {
        var n = [boxes.length, lines.length], mine = Object.assign(box(p, w.label, w.font, w.pad, w.dot), {at: p});
        var ok = free(mine) && boxes.push(mine) && w.facts.every(function (f) { return !at[f[0]] || join(p, at[f[0]], f[1]); });
        return ok || (boxes.length = n[0], lines.length = n[1], false);  // what it drew taken back
      });
    });
    return out;
  }
  function open(id, relation, more) {  // more: the "+N more" box clicked, if it was one
    var wanted = [], seen = {};
    SPARE.edges.forEach(function (e) {
      if (relation && e.label.split("\n").indexOf(relation) < 0) { return; }
      var other = e.from === id ? e.to : (e.to === id ? e.from : null);
      if (other && !nodes.get(other) && !seen[other] && SPARE.nodes[other]) { seen[other] = 1; wanted.push(other); }
    });
    if (!wanted.length) { return; }
    var rest = more || {id: "more::" + id, label: "+99 more", shape: "box", color: "#eeeeee", more: [id, null]};
    var items = wanted.slice(0, Math.max(0, MOST - nodes.length - 1)).map(function (w) {
      var facts = SPARE.edges.filter(function (e) { return e.from === w || e.to === w; }).map(function (e) {
        return [e.from === w ? e.to : e.from, e.label];
      });
      return {id: w, label: SPARE.nodes[w].label, font: 18, pad: 0, dot: SPARE.nodes[w].size, facts: facts};
    }).concat(more ? [] : [{id: rest.id, label: rest.label, font: 15, pad: 11, dot: 0, facts: [[id, ""]]}]);
    for (var mode = 0, places = {}, opened = []; mode < 3 && !opened.length; mode++) {  // past the first, a few
      places = place(id, mode ? items.slice(0, 3) : items, mode);
      opened = wanted.filter(function (w) { return places[w]; });
    }
    if (opened.length < wanted.length && !more && !places[rest.id]) { places[rest.id] = places[opened.pop()]; }
    nodes.add(opened.map(function (w) { return Object.assign({}, SPARE.nodes[w], places[w]); }));
    edges.add(SPARE.edges.filter(function (e) {  // the facts of the node clicked and of those it opened, with room
      var near = e.from === id || e.to === id || places[e.from] || places[e.to];
      return near && nodes.get(e.from) && nodes.get(e.to) && !edges.get(e.id) && places[e.id] !== null;
    }));
    var left = wanted.length - opened.length, gone = (left ? [] : [rest]).concat(more ? [] : nodes.get({
      filter: function (n) { return n.more && n.more[0] === id; }}));  // the node's "+N more": one, or none
    nodes.remove(gone.map(function (n) { return n.id; }));
    edges.remove(edges.getIds({filter: function (e) { return gone.some(function (n) { return e.to === n.id; }); }}));
    if (left && (more || places[rest.id])) {
      var title = left + " neighbours not drawn: click to open", line = {dashes: true, width: 1, color: "#555555"};
      var label = "+" + left + " more" + (relation ? "\n" + relation : "");
      nodes.update(Object.assign({font: {size: 15, background: "none"}}, rest, places[rest.id], {label: label, title: title}));
      if (!more) { edges.update(Object.assign({id: "line-" + rest.id, from: id, to: rest.id, title: title}, line)); }
    }
    window.fitted = false;  // once drawn, the view moves to show what opened, only if some of it is outside
    network.once("afterDrawing", function () { fit(true); });
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
