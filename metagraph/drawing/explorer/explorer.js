/* The metagraph explorer: draws the JSON in #mg-data (metagraph/drawing/html.py) as nested
   SVG boxes. No library, no network. Components expand and collapse; clicking shows details in
   the side panel; an API's reach is highlighted; names can be searched. */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("mg-data").textContent);
  var SVGNS = "http://www.w3.org/2000/svg";
  var PAD = 10, GAP = 14, HEAD = 38, PILL_H = 22, PILL_PAD = 10, FILLS = ["#f4f6fb",
    "#e6ebf5", "#d6deef", "#c5d0e8", "#b4c2e0"], ERROR = "#d62728";

  // ---- the model ------------------------------------------------------------------------
  var comps = {}, apis = {}, kids = {}, apisOf = {}, tops = [];
  DATA.components.forEach(function (c) { comps[c.id] = c; kids[c.id] = []; apisOf[c.id] = []; });
  DATA.components.forEach(function (c) {
    if (c.parent && comps[c.parent]) kids[c.parent].push(c.id); else tops.push(c.id);
  });
  DATA.apis.forEach(function (a) {
    apis[a.id] = a;
    if (a.component && apisOf[a.component]) apisOf[a.component].push(a.id);
  });
  var callees = {}, callers = {};
  DATA.edges.forEach(function (e, i) {
    e.index = i;
    if (e.kind !== "call") return;
    (callees[e.source] = callees[e.source] || []).push(e.target);
    (callers[e.target] = callers[e.target] || []).push(e.source);
  });
  function ancestors(id) {  // of a component, nearest first
    var out = [], c = comps[id];
    while (c && c.parent && comps[c.parent]) { out.push(c.parent); c = comps[c.parent]; }
    return out;
  }
  function descendants(id) {
    var out = [];
    (function walk(k) { kids[k].forEach(function (c) { out.push(c); walk(c); }); })(id);
    return out;
  }
  function ownBytes(c) { return c.state.reduce(function (s, r) { return s + r.bytes; }, 0); }
  function totalBytes(id) {
    return [id].concat(descendants(id)).reduce(function (s, k) { return s + ownBytes(comps[k]); }, 0);
  }
  var graphBytes = tops.reduce(function (s, k) { return s + totalBytes(k); }, 0);
  var graphParams = tops.reduce(function (s, k) { return s + (comps[k].params || 0); }, 0);

  // ---- view state -------------------------------------------------------------------------
  var open = {}, selected = null, reach = null, matches = {}, view = { x: 20, y: 20, s: 1 };
  var show = { call: true, data: true, labels: true };
  DATA.components.forEach(function (c) { open[c.id] = false; });
  DATA.open.forEach(function (id) { open[id] = true; });  // chosen by views.py
  var errorEdge = DATA.edges.filter(function (e) { return e.error; })[0] || null;

  function reveal(apiId) {  // open every component around an API (or component)
    var a = apis[apiId], c = a ? a.component : apiId;
    if (!c || !comps[c]) return;
    if (a) open[c] = true;
    ancestors(c).forEach(function (p) { open[p] = true; });
  }

  // ---- the page ---------------------------------------------------------------------------
  document.body.insertAdjacentHTML("afterbegin",
    '<div id="mg-app"><div id="mg-bar"><span class="mg-title"></span>' +
    '<input id="mg-search" type="search" placeholder="search components and APIs" ' +
    'aria-label="search"><span id="mg-count"></span>' +
    '<button id="mg-expand">expand all</button><button id="mg-collapse">collapse all</button>' +
    '<button id="mg-fit">fit</button>' +
    '<label><input type="checkbox" id="mg-show-call" checked> calls</label>' +
    '<label><input type="checkbox" id="mg-show-data" checked> data</label>' +
    '<label><input type="checkbox" id="mg-show-labels"> labels</label></div>' +
    '<div id="mg-main"><div id="mg-canvas"><svg id="mg-svg" xmlns="' + SVGNS + '">' +
    '<defs id="mg-defs"></defs><g id="mg-view"></g></svg><div id="mg-tip"></div></div>' +
    '<div id="mg-panel"></div></div></div>');
  var $ = function (id) { return document.getElementById(id); };
  $("mg-app").querySelector(".mg-title").textContent = DATA.title || "metagraph";
  $("mg-show-labels").checked = show.labels;
  var svg = $("mg-svg"), viewG = $("mg-view"), panel = $("mg-panel"), tip = $("mg-tip");

  // ---- text widths ------------------------------------------------------------------------
  var ctx = document.createElement("canvas").getContext("2d"), widths = {};
  function textW(text, font) {
    var key = font + "|" + text;
    if (!(key in widths)) { ctx.font = font; widths[key] = ctx.measureText(text).width; }
    return widths[key];
  }
  var LABEL = "10.5px system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif";
  var LABEL_ERROR = "600 12px system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif";
  var FONT = "12px system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif";
  var BOLD = "600 13px system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif";
  var SMALL = "11px system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif";

  // ---- formatting -------------------------------------------------------------------------
  function num(n) { return Number(n).toLocaleString("en-US"); }
  function bytes(n) {
    if (n < 1024) return n + " B";
    var units = ["KiB", "MiB", "GiB", "TiB"], i = -1;
    do { n /= 1024; i++; } while (n >= 1024 && i < units.length - 1);
    return n.toFixed(1) + " " + units[i];
  }
  function si(n, unit) {
    var units = ["", "k", "M", "G", "T", "P"], i = 0;
    while (Math.abs(n) >= 1000 && i < units.length - 1) { n /= 1000; i++; }
    return (i ? n.toFixed(2) : String(Math.round(n * 100) / 100)) + " " + units[i] + unit;
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (ch) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[ch];
    });
  }
  function meta(c) {
    var parts = [c.cls];
    if (c.params !== null && c.params !== undefined) parts.push(num(c.params) + " params");
    var b = totalBytes(c.id);
    if (b) parts.push(bytes(b) + " state");
    return parts.join(" · ");
  }

  // ---- layout: nested boxes, children on shelves ------------------------------------------
  var boxes = {};  // id -> {x, y, w, h} of every drawn component and API
  function pillSize(a) { return { w: textW(a.name, FONT) + 2 * PILL_PAD, h: PILL_H }; }
  function headWidth(c) {  // what the title (toggle, name, class and sizes) needs
    return Math.max(textW(c.name, BOLD) + 34, textW(meta(c), SMALL) + 2 * PAD, 110);
  }
  function measure(id) {
    var c = comps[id], head = headWidth(c);
    var m = { id: id, w: head, h: HEAD, items: [] };
    if (!open[id]) return m;
    var pills = apisOf[id].map(function (a) { var s = pillSize(apis[a]); s.id = a; s.api = true; return s; });
    var sub = kids[id].map(measure);
    var area = sub.reduce(function (s, k) { return s + k.w * k.h; }, 0);
    var widest = sub.reduce(function (s, k) { return Math.max(s, k.w); }, 0);
    var limit = Math.max(widest, Math.sqrt(area) * 1.6, head - 2 * PAD, 420);
    var y = HEAD, right = 0, roomy = show.labels ? 3.5 : 1;  // labels need room between
    function shelf(items, gap) {
      var x = 0, rowH = 0;
      items.forEach(function (it) {
        if (x > 0 && x + it.w > limit) { y += rowH + gap; x = 0; rowH = 0; }
        it.x = PAD + x; it.y = y; x += it.w + gap; rowH = Math.max(rowH, it.h);
        right = Math.max(right, x - gap);
      });
      if (items.length) y += rowH + GAP * roomy;
    }
    shelf(pills, 8 * roomy * 1.5);
    shelf(sub, GAP * roomy);
    m.items = pills.concat(sub);
    m.w = Math.max(m.w, right + 2 * PAD);
    m.h = Math.max(y - GAP * roomy + PAD, HEAD);
    return m;
  }
  function place(m, x, y) {
    boxes[m.id] = { x: x, y: y, w: m.w, h: m.h };
    m.items.forEach(function (it) {
      if (it.api) boxes[it.id] = { x: x + it.x, y: y + it.y, w: it.w, h: it.h };
      else place(it, x + it.x, y + it.y);
    });
  }
  function viewKey() {  // as views.key names a view: its open components, sorted
    return DATA.components.filter(function (c) { return open[c.id]; })
      .map(function (c) { return c.id; }).sort().join("\n");
  }
  var laid = null;  // Graphviz's layout of the view shown, or null: rows packed here
  function layout() {
    laid = (DATA.layouts || {})[viewKey()] || null;
    svg.setAttribute("data-layout", laid ? "dot" : "rows");
    if (laid) { layoutFromDot(); return; }
    boxes = {};
    var x = 0, top = 0;
    if (apis.input) {
      var s = pillSize(apis.input);
      boxes.input = { x: 0, y: 0, w: s.w, h: s.h };
      x = s.w + 60; top = 0;
    }
    tops.forEach(function (id) {
      var m = measure(id);
      place(m, x, top);
      x += m.w + 40;
    });
  }
  function title(id) {  // a component's title: toggle, name, class and sizes, where dot put
    var t = laid && open[id] && laid.titles && laid.titles[id];  // an open one's, else at the
    if (t) return { x: t[0], y: t[1], w: t[2], h: HEAD };  // top left of its box
    var b = boxes[id];
    return { x: b.x, y: b.y, w: Math.min(b.w, headWidth(comps[id])), h: HEAD };
  }
  function layoutFromDot() {  // boxes where dot put them, an API as wide as its text needs
    boxes = {};  // (a title keeps dot's room, clear of the edges: `squeeze` fits its text)
    Object.keys(laid.boxes).forEach(function (id) {
      var b = laid.boxes[id], w = b[2];
      if (apis[id]) w = Math.max(w, pillSize(apis[id]).w);
      boxes[id] = { x: b[0] + (b[2] - w) / 2, y: b[1], w: w, h: apis[id] ? PILL_H : b[3] };
    });
  }
  function squeeze(text, font, room) {  // a title's text narrowed to the room dot kept for it
    return textW(text, font) > room ? ' textLength="' + room.toFixed(1) + '" lengthAdjust="spacingAndGlyphs"' : "";
  }
  function visible(apiId) {  // the drawn box standing for an API: itself, or a closed ancestor
    var a = apis[apiId];
    if (!a || !a.component) return apiId;
    var chain = [a.component].concat(ancestors(a.component)).reverse(), i;
    for (i = 0; i < chain.length; i++) if (!open[chain[i]]) return chain[i];
    return apiId;
  }

  // ---- edges ------------------------------------------------------------------------------
  function port(b, toward) {
    var cx = b.x + b.w / 2, cy = b.y + b.h / 2, dx = toward.x - cx, dy = toward.y - cy;
    if (Math.abs(dx) * b.h >= Math.abs(dy) * b.w) {
      var sx = dx >= 0 ? 1 : -1;
      return { x: cx + sx * b.w / 2, y: cy + (dx ? dy * (b.w / 2) / Math.abs(dx) : 0), nx: sx, ny: 0 };
    }
    var sy = dy >= 0 ? 1 : -1;
    return { x: cx + (dy ? dx * (b.h / 2) / Math.abs(dy) : 0), y: cy + sy * b.h / 2, nx: 0, ny: sy };
  }
  function center(b) { return { x: b.x + b.w / 2, y: b.y + b.h / 2 }; }
  function inside(inner, outer) {
    return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.w <= outer.x + outer.w &&
      inner.y + inner.h <= outer.y + outer.h;
  }
  function curve(a, b, kind) {
    var p = port(a, center(b)), q = port(b, center(a));
    var d = Math.hypot(q.x - p.x, q.y - p.y), k = Math.min(90, Math.max(24, d / 2.5));
    var off = kind === "data" ? 14 : 0, ox = -(q.y - p.y) / (d || 1) * off, oy = (q.x - p.x) / (d || 1) * off;
    var c1 = { x: p.x + p.nx * k + ox, y: p.y + p.ny * k + oy }, c2 = { x: q.x + q.nx * k + ox, y: q.y + q.ny * k + oy };
    return {
      d: "M" + p.x.toFixed(1) + "," + p.y.toFixed(1) + " C" + c1.x.toFixed(1) + "," + c1.y.toFixed(1) +
        " " + c2.x.toFixed(1) + "," + c2.y.toFixed(1) + " " + q.x.toFixed(1) + "," + q.y.toFixed(1),
      mid: { x: (p.x + 3 * c1.x + 3 * c2.x + q.x) / 8, y: (p.y + 3 * c1.y + 3 * c2.y + q.y) / 8 }
    };
  }
  function visibleEdges() {
    var byKey = {}, out = [];
    DATA.edges.forEach(function (e) {
      if (!show[e.kind] && !e.error) return;
      var s = visible(e.source), t = visible(e.target);
      if (s === t || !boxes[s] || !boxes[t]) return;
      var key = s + "|" + t + "|" + e.kind, v = byKey[key];
      if (!v) { v = byKey[key] = { key: key, source: s, target: t, kind: e.kind, edges: [], color: e.color, error: false }; out.push(v); }
      v.edges.push(e);
      if (v.color !== e.color) v.color = "#7f7f7f";
      if (e.error) { v.error = true; v.color = ERROR; }
    });
    return out;
  }

  // ---- drawing ----------------------------------------------------------------------------
  var drawnEdges = [];
  function render() {
    layout();
    drawnEdges = visibleEdges();
    var colors = {};
    drawnEdges.forEach(function (e) { colors[e.color] = true; });
    var defs = "";
    Object.keys(colors).forEach(function (c, i) {
      colors[c] = i;
      defs += '<marker id="mg-call-' + i + '" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="' + c + '"/></marker>' +
        '<marker id="mg-data-' + i + '" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10" fill="none" stroke="' + c + '" stroke-width="1.5"/></marker>';
    });
    $("mg-defs").innerHTML = defs;
    var parts = [], toggles = [];  // titles and toggles drawn last: no edge runs across them
    var order = DATA.components.filter(function (c) { return boxes[c.id]; })
      .sort(function (a, b) { return a.depth - b.depth; });
    order.forEach(function (c) {
      var b = boxes[c.id], h = title(c.id), closed = !open[c.id], hasKids = kids[c.id].length > 0 || apisOf[c.id].length > 0;
      var fill = FILLS[Math.min(c.depth, FILLS.length - 1)];
      parts.push('<g class="mg-component' + (closed ? " mg-collapsed" : "") + '" data-id="' + esc(c.id) + '">' +
        '<rect x="' + b.x + '" y="' + b.y + '" width="' + b.w + '" height="' + b.h + '" rx="8" fill="' + fill + '"/></g>');
      toggles.push('<g class="mg-heading" data-id="' + esc(c.id) + '"><rect x="' + (h.x + 1.5) + '" y="' + (h.y + 1.5) + '" width="' + (h.w - 3) + '" height="' + (HEAD - 3) + '" rx="7" fill="' + fill + '"/>' +
        '<text class="mg-name" x="' + (h.x + 30) + '" y="' + (h.y + 17) + '"' + squeeze(c.name, BOLD, h.w - 34) + '>' + esc(c.name) + '</text>' +
        '<text class="mg-meta" x="' + (h.x + PAD) + '" y="' + (h.y + 32) + '"' + squeeze(meta(c), SMALL, h.w - 2 * PAD) + '>' + esc(meta(c)) + '</text></g>' +
        '<rect class="mg-head" x="' + h.x + '" y="' + h.y + '" width="' + h.w + '" height="' + HEAD + '" rx="8" data-id="' + esc(c.id) + '"/>');
      if (hasKids) toggles.push('<g class="mg-toggle" data-id="' + esc(c.id) + '"><rect x="' + (h.x + 7) + '" y="' + (h.y + 5) + '" width="16" height="16" rx="3"/>' +
        '<text x="' + (h.x + 11) + '" y="' + (h.y + 17.5) + '">' + (closed ? "+" : "\u2212") + '</text></g>');
    });
    drawnEdges.forEach(function (e) {
      var routed = laid && laid.edges[e.key];
      var g = routed ? { d: routed.d, mid: routed.label ? { x: routed.label[0], y: routed.label[1] } : null }
        : curve(boxes[e.source], boxes[e.target], e.kind);
      if (!g.mid) g.mid = curve(boxes[e.source], boxes[e.target], e.kind).mid;
      e.mid = g.mid;
      parts.push('<path class="mg-edge mg-' + e.kind + (e.error ? " mg-error" : "") + '" data-key="' + esc(e.key) +
        '" data-source="' + esc(e.source) + '" data-target="' + esc(e.target) + '" d="' + g.d + '" stroke="' + e.color +
        '" marker-end="url(#mg-' + e.kind + '-' + colors[e.color] + ')"/>' +
        '<path class="mg-hit" data-key="' + esc(e.key) + '" d="' + g.d + '"/>');
    });
    Object.keys(boxes).forEach(function (id) {
      var a = apis[id];
      if (!a) return;
      var b = boxes[id], root = !!(a.component && comps[a.component] && !comps[a.component].parent);
      parts.push('<g class="mg-api' + (root ? " mg-root" : "") + (id === "input" ? " mg-input" : "") + '" data-id="' + esc(id) + '">' +
        '<rect x="' + b.x + '" y="' + b.y + '" width="' + b.w + '" height="' + b.h + '" rx="' + (id === "input" ? 11 : 5) + '"/>' +
        '<text x="' + (b.x + PILL_PAD) + '" y="' + (b.y + 15.5) + '">' + esc(a.name) + '</text></g>');
    });
    var faulty = [];  // the faulty edge's label goes above everything, titles included
    placeLabels().forEach(function (p) {
      var e = p.edge, step = e.error ? 15 : 13, y0 = e.mid.y - (p.lines.length - 1) * step / 2 + 4;
      (e.error ? faulty : parts).push('<text class="mg-label' + (e.error ? " mg-error" : "") + (p.shown ? "" : " mg-thinned") +
        '" data-key="' + esc(e.key) + '" text-anchor="middle" fill="' + e.color + '">' +
        p.lines.map(function (l, i) { return '<tspan x="' + e.mid.x.toFixed(1) + '" y="' + (y0 + i * step).toFixed(1) + '">' + esc(l) + '</tspan>'; }).join("") + '</text>');
    });
    viewG.innerHTML = parts.join("") + toggles.join("") + faulty.join("");
    paintClasses();
    applyView();
  }

  // ---- edge labels: every one that fits, the faulty edge's always ------------------------
  var LABEL_CHARS = 30;  // as views.LABEL_CHARS
  function labelLines(e) {  // as views.ViewEdge.label: the faulty edge's all, else at most two
    var lines = [];
    e.edges.forEach(function (x) { x.label.split("\n").forEach(function (l) { if (l && lines.indexOf(l) < 0) lines.push(l); }); });
    if (e.error) return lines;
    if (lines.length > 2) lines = [lines[0], "+" + (lines.length - 1) + " more"];
    return lines.map(function (l) { return l.length <= LABEL_CHARS ? l : l.slice(0, LABEL_CHARS - 1) + "\u2026"; });
  }
  function overlaps(a, b) {
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  }
  function placeLabels() {  // a label that would cover another, an API or a title is thinned
    var taken = [];  // with labels off, the faulty edge's still shows
    Object.keys(boxes).forEach(function (id) { taken.push(apis[id] ? boxes[id] : title(id)); });
    var placed = drawnEdges.filter(function (e) { return (show.labels || e.error) && labelLines(e).length; }).map(function (e) {
      var lines = labelLines(e), font = e.error ? LABEL_ERROR : LABEL, step = e.error ? 15 : 13;
      var w = lines.reduce(function (m, l) { return Math.max(m, textW(l, font)); }, 0) + 4, h = lines.length * step;
      return { edge: e, lines: lines, box: { x: e.mid.x - w / 2, y: e.mid.y - h / 2, w: w, h: h } };
    });
    var order = placed.slice().sort(function (a, b) {  // the faulty edge first, then calls
      return (b.edge.error - a.edge.error) || ((a.edge.kind === "data") - (b.edge.kind === "data"));
    });
    order.forEach(function (p) {  // the faulty edge's: always shown, and nothing covers it
      p.shown = p.edge.error || !taken.some(function (b) { return overlaps(p.box, b); });
      if (p.shown) taken.push(p.box);
    });
    return placed;
  }

  function paintClasses() {
    var reached = reach ? reach.apis : null;
    viewG.querySelectorAll(".mg-api").forEach(function (el) {
      var id = el.getAttribute("data-id");
      el.classList.toggle("mg-dim", !!reached && !reached[id]);
      el.classList.toggle("mg-reach", !!reached && !!reached[id]);
      el.classList.toggle("mg-match", !!matches[id]);
      el.classList.toggle("mg-selected", !!selected && selected.id === id);
    });
    viewG.querySelectorAll(".mg-component").forEach(function (el) {
      var id = el.getAttribute("data-id");
      var hit = reached && (reach.comps[id] || false);
      el.classList.toggle("mg-reach", !!hit && !open[id]);
      el.classList.toggle("mg-match", !!matches[id]);
      el.classList.toggle("mg-selected", !!selected && selected.id === id);
    });
    viewG.querySelectorAll(".mg-edge").forEach(function (el) {
      var e = edgeByKey(el.getAttribute("data-key"));
      var on = reached && e.edges.some(function (x) { return reach.edges[x.index]; });
      el.classList.toggle("mg-dim", !!reached && !on && !e.error);
      el.classList.toggle("mg-reach", !!on);
      el.classList.toggle("mg-selected", !!selected && selected.type === "edge" && selected.id === e.key);
    });
    viewG.querySelectorAll(".mg-label").forEach(function (el) { el.classList.toggle("mg-dim", !!reached); });
  }
  function edgeByKey(key) {
    for (var i = 0; i < drawnEdges.length; i++) if (drawnEdges[i].key === key) return drawnEdges[i];
    return null;
  }

  // ---- reach: everything an API calls, directly or not -------------------------------------
  function reachOf(apiId) {
    var seen = {}, stack = [apiId], comp = {}, edges = {};
    seen[apiId] = true;
    while (stack.length) {
      var a = stack.pop();
      (callees[a] || []).forEach(function (b) { if (!seen[b]) { seen[b] = true; stack.push(b); } });
    }
    DATA.edges.forEach(function (e) { if (seen[e.source] && seen[e.target] && e.source !== "input") edges[e.index] = true; });
    Object.keys(seen).forEach(function (a) {
      var api = apis[a];
      if (api && api.component) [api.component].concat(ancestors(api.component)).forEach(function (c) { comp[c] = true; });
    });
    return { apis: seen, comps: comp, edges: edges };
  }

  // ---- the side panel ---------------------------------------------------------------------
  var legend = '<div class="mg-legend">' +
    '<span><svg width="34" height="10"><line x1="0" y1="5" x2="34" y2="5" stroke="#555" stroke-width="1.6"/></svg> call</span>' +
    '<span><svg width="34" height="10"><line x1="0" y1="5" x2="34" y2="5" stroke="#555" stroke-width="1.6" stroke-dasharray="5 3"/></svg> data</span>' +
    '<span style="color:#1f77b4">float</span><span style="color:#2ca02c">int</span><span style="color:#ff7f0e">bool</span>' +
    '<span style="color:#9467bd">key</span><span style="color:#7f7f7f">mixed</span><span style="color:' + ERROR + '">error</span></div>';
  function link(id, text) { return '<a data-go="' + esc(id) + '">' + esc(text || id) + '</a>'; }
  function stateTable(c) {
    if (!c.state.length) return '<p class="mg-sub">no state of its own</p>';
    var rows = c.state.map(function (r) {
      return '<tr><td class="mg-mono">' + esc(r.name) + '</td><td class="mg-mono">' + esc(r.dtype + "[" + r.shape.join(",") + "]") +
        '</td><td>' + (r.trainable ? "param" : "state") + '</td><td class="mg-num">' + num(r.size) + '</td><td class="mg-num">' + bytes(r.bytes) + '</td></tr>';
    }).join("");
    var own = ownBytes(c), size = c.state.reduce(function (s, r) { return s + r.size; }, 0);
    return '<table class="mg-state"><thead><tr><th>name</th><th>shape</th><th>kind</th><th class="mg-num">scalars</th><th class="mg-num">bytes</th></tr></thead><tbody>' +
      rows + '</tbody><tfoot><tr><th colspan="3">total (own)</th><th class="mg-num">' + num(size) + '</th><th class="mg-num">' + bytes(own) + '</th></tr></tfoot></table>';
  }
  function costTable(cost) {
    var rows = Object.keys(cost).map(function (k) {
      var v = cost[k], text = v;
      if (typeof v === "number") {
        if (/byte|size/.test(k)) text = bytes(v);
        else if (/second/.test(k)) text = v.toFixed(3) + " s";
        else if (/flop|transcend/.test(k)) text = si(v, "");
        else text = num(v);
      }
      return '<tr><td>' + esc(k) + '</td><td class="mg-num">' + esc(text) + '</td></tr>';
    }).join("");
    return '<table class="mg-cost">' + rows + '</table>';
  }
  function callList(list, label) {
    if (!list.length) return "";
    return '<h3>' + label + '</h3><ul>' + list.map(function (e) {
      var other = label === "called by" || label === "data in" ? e.source : e.target;
      return '<li>' + link(other) + '<div class="mg-mono">' + e.details.map(esc).join("<br>") + '</div></li>';
    }).join("") + '</ul>';
  }
  function showPanel() {
    var h = "";
    if (!selected) {
      h = '<h2>' + esc(DATA.title || "metagraph") + '</h2><div class="mg-sub">' + num(DATA.components.length) + " components, " +
        num(DATA.apis.filter(function (a) { return a.id !== "input"; }).length) + " APIs, " + num(graphParams) + " params, " + bytes(graphBytes) + " of state</div>";
      if (errorEdge) h += '<h3>error</h3><p class="mg-error-text">' + esc(errorEdge.label) + '</p><p>' + link("edge:" + errorEdge.source + "|" + errorEdge.target + "|call", "the faulty edge") + '</p>';
      var costed = DATA.apis.filter(function (a) { return a.cost; });
      if (costed.length) h += '<h3>cost (XLA)</h3><ul>' + costed.map(function (a) { return '<li>' + link(a.id) + (a.cost.flops !== undefined ? ": " + si(a.cost.flops, "FLOP") : "") + '</li>'; }).join("") + '</ul>';
      h += '<h3>legend</h3>' + legend + '<p class="mg-sub">Click a component for its state, an API for its spaces, source, cost and everything it reaches, an edge for what flowed. +/− folds a component; drag to pan, wheel to zoom.</p>';
    } else if (selected.type === "component") {
      var c = comps[selected.id];
      h = '<h2>' + esc(c.name) + '</h2><div class="mg-sub">' + esc(c.cls) + ' · <span class="mg-mono">' + esc(c.id) + '</span></div>' +
        '<table><tr><td>parameters (with inside)</td><td class="mg-num">' + (c.params === null ? "?" : num(c.params)) + '</td></tr>' +
        '<tr><td>state (own)</td><td class="mg-num">' + bytes(ownBytes(c)) + '</td></tr><tr><td>state (with inside)</td><td class="mg-num">' + bytes(totalBytes(c.id)) + '</td></tr></table>' +
        '<h3>state</h3>' + stateTable(c);
      if (apisOf[c.id].length) h += '<h3>APIs</h3><ul>' + apisOf[c.id].map(function (a) { return '<li>' + link(a, apis[a].name) + '</li>'; }).join("") + '</ul>';
      if (kids[c.id].length) h += '<h3>components</h3><ul>' + kids[c.id].map(function (k) { return '<li>' + link(k, comps[k].name) + ' <span class="mg-sub">' + esc(comps[k].cls) + '</span></li>'; }).join("") + '</ul>';
    } else if (selected.type === "api") {
      var a = apis[selected.id];
      h = '<h2>' + esc(a.name) + '</h2><div class="mg-sub mg-mono">' + esc(a.id) + '</div>';
      var ins = Object.keys(a.inputs || {});
      if (ins.length || a.outputs) h += '<h3>spaces (first call)</h3><table>' + ins.map(function (k) { return '<tr><td>' + esc(k) + '</td><td class="mg-mono">' + esc(a.inputs[k]) + '</td></tr>'; }).join("") +
        (a.outputs ? '<tr><td>→ output</td><td class="mg-mono">' + esc(a.outputs) + '</td></tr>' : "") + '</table>';
      if (a.source) h += '<h3>source</h3><div class="mg-mono" title="' + esc(a.source.file) + '">' + esc(a.source.file.split(/[\\/]/).slice(-3).join("/")) + ":" + a.source.line + '</div><div class="mg-sub mg-mono">' + esc(a.source.qualname) + '</div>';
      if (a.cost) h += '<h3>cost (XLA)</h3>' + costTable(a.cost);
      if (a.component && comps[a.component]) h += '<h3>component</h3>' + link(a.component) + ' <span class="mg-sub">' + num(comps[a.component].params || 0) + ' params</span>';
      if (reach) h += '<h3>reaches</h3><p>' + (Object.keys(reach.apis).length - 1) + ' APIs in ' + Object.keys(reach.comps).length + ' components (highlighted)</p>';
      var into = DATA.edges.filter(function (e) { return e.target === a.id; }), out = DATA.edges.filter(function (e) { return e.source === a.id; });
      h += callList(into.filter(function (e) { return e.kind === "call"; }), "called by") + callList(out.filter(function (e) { return e.kind === "call"; }), "calls") +
        callList(into.filter(function (e) { return e.kind === "data"; }), "data in") + callList(out.filter(function (e) { return e.kind === "data"; }), "data out");
    } else {
      var e = edgeByKey(selected.id) || selected.edge;
      h = '<h2>' + (e.error ? '<span class="mg-error-text">faulty ' : "") + e.kind + (e.error ? "</span>" : "") + '</h2><div class="mg-sub">' + link(e.source) + " → " + link(e.target) + '</div>';
      e.edges.forEach(function (x) {
        h += '<h3>' + esc(x.source) + ' → ' + esc(x.target) + '</h3>' + (x.error ? '<p class="mg-error-text">' + esc(x.label) + '</p>' : "") +
          '<div class="mg-mono">' + x.details.map(esc).join("<br>") + '</div>';
      });
    }
    panel.innerHTML = h;
  }
  function select(kind, id) {
    if (kind === "edge") {
      var e = edgeByKey(id);
      selected = e ? { type: "edge", id: id, edge: e } : null;
      reach = null;
    } else if (kind === "api") {
      selected = { type: "api", id: id };
      reach = id === "input" ? null : reachOf(id);
    } else if (kind === "component") {
      selected = { type: "component", id: id }; reach = null;
    } else { selected = null; reach = null; }
    paintClasses();
    showPanel();
  }
  function go(id) {  // a link in the panel: an API, a component or an edge
    if (id.indexOf("edge:") === 0) { select("edge", id.slice(5)); return; }
    reveal(id);
    if (comps[id] && comps[id].parent) reveal(comps[id].parent);
    render();
    select(apis[id] ? "api" : "component", id);
    focusOn(id);
  }

  // ---- search -----------------------------------------------------------------------------
  function search(q) {
    matches = {};
    q = q.trim().toLowerCase();
    var n = 0, first = null;
    if (q) {
      DATA.components.forEach(function (c) { if (c.id.toLowerCase().indexOf(q) >= 0 || c.cls.toLowerCase().indexOf(q) >= 0) { matches[c.id] = true; n++; first = first || c.id; if (c.parent) reveal(c.parent); } });
      DATA.apis.forEach(function (a) { if (a.id.toLowerCase().indexOf(q) >= 0) { matches[a.id] = true; n++; first = first || a.id; reveal(a.id); } });
    }
    $("mg-count").textContent = q ? n + " found" : "";
    render();
    return first;
  }

  // ---- pan and zoom -----------------------------------------------------------------------
  function applyView() { viewG.setAttribute("transform", "translate(" + view.x + "," + view.y + ") scale(" + view.s + ")"); }
  function extent() {  // of the boxes, and of dot's whole drawing (curves and labels) if laid
    if (laid) return { x: 0, y: 0, w: laid.size[0], h: laid.size[1] };
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    Object.keys(boxes).forEach(function (k) { var b = boxes[k]; x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y); x1 = Math.max(x1, b.x + b.w); y1 = Math.max(y1, b.y + b.h); });
    return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
  }
  function fit() {
    var r = svg.getBoundingClientRect(), e = extent();
    if (!isFinite(e.w) || !r.width) return;
    view.s = Math.max(0.05, Math.min(1.2, (r.width - 40) / e.w, (r.height - 40) / e.h));
    view.x = (r.width - e.w * view.s) / 2 - e.x * view.s; view.y = 20 - e.y * view.s;
    applyView();
  }
  function focusOn(id) {
    var b = boxes[id], r = svg.getBoundingClientRect();
    if (!b) return;
    view.s = Math.max(view.s, 0.6);
    view.x = r.width / 2 - (b.x + b.w / 2) * view.s; view.y = r.height / 2 - (b.y + b.h / 2) * view.s;
    applyView();
  }
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
    var s = Math.max(0.03, Math.min(4, view.s * Math.exp(-ev.deltaY * 0.0015)));
    view.x = mx - (mx - view.x) * s / view.s; view.y = my - (my - view.y) * s / view.s; view.s = s;
    applyView();
  }, { passive: false });
  var drag = null;
  svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false }; });
  window.addEventListener("mousemove", function (ev) {
    if (drag) {
      var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; $("mg-canvas").classList.add("mg-dragging"); }
      if (drag.moved) { view.x = drag.vx + dx; view.y = drag.vy + dy; applyView(); }
    }
  });
  window.addEventListener("mouseup", function () { $("mg-canvas").classList.remove("mg-dragging"); setTimeout(function () { drag = null; }, 0); });

  // ---- clicks and hovers ------------------------------------------------------------------
  function target(ev) {
    var el = ev.target.closest ? ev.target.closest(".mg-toggle, .mg-api, .mg-hit, .mg-head, .mg-component") : null;
    if (!el) return null;
    if (el.classList.contains("mg-toggle")) return { kind: "toggle", id: el.getAttribute("data-id") };
    if (el.classList.contains("mg-api")) return { kind: "api", id: el.getAttribute("data-id") };
    if (el.classList.contains("mg-hit")) return { kind: "edge", id: el.getAttribute("data-key") };
    return { kind: "component", id: el.getAttribute("data-id") };
  }
  svg.addEventListener("click", function (ev) {
    if (drag && drag.moved) return;
    var t = target(ev);
    if (!t) { select(null); return; }
    if (t.kind === "toggle") { open[t.id] = !open[t.id]; render(); select("component", t.id); return; }
    select(t.kind, t.id);
  });
  svg.addEventListener("dblclick", function (ev) {
    var t = target(ev);
    if (t && t.kind === "component") { open[t.id] = !open[t.id]; render(); }
  });
  var hovered = null;  // the label of the edge under the mouse, shown even where thinned
  function cssEsc(s) { return String(s).replace(/["\\]/g, "\\$&"); }
  svg.addEventListener("mousemove", function (ev) {
    var t = target(ev), text = "";
    if (hovered) { hovered.classList.remove("mg-hover"); hovered = null; }
    if (t && t.kind === "api") {
      var a = apis[t.id];
      text = a.id + (a.outputs ? "\n(" + Object.keys(a.inputs || {}).map(function (k) { return k + ": " + a.inputs[k]; }).join(", ") + ") -> " + a.outputs : "");
      if (a.cost && a.cost.flops !== undefined) text += "\n" + si(a.cost.flops, "FLOP");
    } else if (t && t.kind === "edge") {
      var e = edgeByKey(t.id);
      hovered = viewG.querySelector('.mg-label[data-key="' + cssEsc(t.id) + '"]');
      if (hovered) hovered.classList.add("mg-hover");
      text = e.kind + ": " + e.source + " -> " + e.target + "\n" + e.edges.map(function (x) { return x.label; }).join("\n");
    } else if (t && t.kind !== "toggle") {
      var c = comps[t.id];
      text = c.id + "\n" + meta(c) + (open[c.id] ? "" : "\n(collapsed: + or double-click opens)");
    }
    if (!text) { tip.style.display = "none"; return; }
    var r = $("mg-canvas").getBoundingClientRect();
    tip.textContent = text;
    tip.style.display = "block";
    tip.style.left = Math.min(ev.clientX - r.left + 14, r.width - 200) + "px";
    tip.style.top = (ev.clientY - r.top + 14) + "px";
  });
  svg.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  panel.addEventListener("click", function (ev) {
    var a = ev.target.closest("a[data-go]");
    if (a) go(a.getAttribute("data-go"));
  });
  $("mg-search").addEventListener("input", function (ev) { search(ev.target.value); });
  $("mg-search").addEventListener("keydown", function (ev) {
    if (ev.key === "Enter") { var first = search(ev.target.value); if (first) go(first); }
  });
  $("mg-expand").addEventListener("click", function () { DATA.components.forEach(function (c) { open[c.id] = true; }); render(); fit(); });
  $("mg-collapse").addEventListener("click", function () { DATA.components.forEach(function (c) { open[c.id] = !c.parent; }); render(); fit(); });
  $("mg-fit").addEventListener("click", fit);
  ["call", "data", "labels"].forEach(function (k) {
    $("mg-show-" + k).addEventListener("change", function (ev) { show[k] = ev.target.checked; render(); });
  });
  document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") select(null); });

  // the test hooks read this; nothing else does
  window.metagraphExplorer = { open: open, render: render, select: select, data: DATA };
  render();
  fit();
  if (errorEdge) select("edge", visible(errorEdge.source) + "|" + visible(errorEdge.target) + "|call");
  else showPanel();
})();
