// locksim report: the interactive timeline and clock plot (written by hand, no library).
// Reads the JSON in <script id="tl-data"> (reports/src/report/page_data.rs writes it):
// {runs: [{label, seed, dur, nodes, clients, fenced,
//   holds: [client, key, start, end, token, grant, shared, end cause (0 released, 1 abandoned,
//           2 crashed, 3 run end)],
//   waits: [client, key, start, end, outcome (0 granted, 1 failed, 2 crashed, 3 run end,
//           4 superseded)],
//   writes: [client, key, at, token, value, fenced accepted, grant, violation index or -1],
//   faults: [kind, targets, start, end, open], overlaps: [client a, client b, key, start, end,
//   violation index or -1], violations: [kind, at, detail], clocks: [node, at, offset ms, ppm],
//   leaders: [server, at, term or null (it stopped leading)],
//   messages: [from, to, sent, arrive or null, lost, label], explain: {vi, title, anchor,
//   sentences} or null, explain_command}]}; times are true-time ms.
// Without JavaScript none of this shows and the static timeline chart stays the page's.
(function () {
  'use strict';
  var dataEl = document.getElementById('tl-data');
  var root = document.getElementById('tl');
  if (!dataEl || !root) return;
  var D = JSON.parse(dataEl.textContent);
  if (!D.runs.length) return;
  var NS = 'http://www.w3.org/2000/svg';
  var $ = function (id) { return document.getElementById(id); };
  var sel = $('tl-run'), view = $('tl-view'), side = $('tl-side'), tip = $('tl-tip'), clockEl = $('tl-clock');
  var LM = 118, RM = 12, LANE = 18, TOP = 34;  // TOP grows with the rows of fault names
  var run, lanes, leads, v0, v1, pinned = null, drag = null;
  var ENDS = ['released', 'abandoned (the library said it was lost)', 'client crashed', 'still held at the end'];
  var WAITS = ['granted', 'failed', 'client crashed', 'still waiting at the end', 'superseded by a new call'];
  // Why a run shows no message: the bound the page keeps (reports/src/report/explorer.rs says
  // the same under the timeline).
  var NO_MESSAGES = 'No messages drawn in this run: a recorded history holds no messages, so they are drawn only in a run whose violation is explained below (those its diagram draws, from its replay\u2019s trace).';
  var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22'];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(tag, text, parent, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmtMs(t) { return t.toFixed(3) + ' ms'; }
  function name(id) { return run.nodes[id] || ('node ' + id); }
  // The node's wall clock at true time t, from its recorded segments; null when not recorded.
  function wall(node, t) {
    var seg = null;
    run.clocks.forEach(function (c) { if (c[0] === node && c[1] <= t) seg = c; });
    return seg ? t + seg[2] + (t - seg[1]) * seg[3] / 1e6 : null;
  }
  function clocksText(node, t) {
    var w = wall(node, t);
    return 'true ' + fmtMs(t) + ' · ' + name(node) + '\u2019s wall clock ' + (w === null ? 'not recorded' : fmtMs(w));
  }
  function nodeId(n) { return run.nodes.indexOf(n); }

  function choose(i) {
    run = D.runs[i];
    lanes = run.clients.slice();
    // Servers get lanes too (faults and the explained violation's messages land on them).
    run.nodes.forEach(function (n, id) { if (lanes.indexOf(id) < 0 && n !== 'resource') lanes.push(id); });
    // Each claim to lead as a span: [server, from, to, term, index of the change that began it,
    // whether a change of that server ended it (else the run did)].
    leads = [];
    run.leaders.forEach(function (l, i) {
      if (l[2] === null) return;
      var next = run.leaders.slice(i + 1).filter(function (m) { return m[0] === l[0]; })[0];
      leads.push([l[0], l[1], next ? next[1] : run.dur, l[2], i, !!next]);
    });
    v0 = 0; v1 = run.dur; pinned = null;
    tip.hidden = true;
    side.textContent = '';
    html('p', run.violations.length ? 'Click an overlap or a stale write (red) to read what happened.' : 'This run has no violation.', side, 'meta');
    if (!run.messages.length) html('p', NO_MESSAGES, side, 'meta tl-nomsg');
    render();
  }

  function x(t) { return LM + (t - v0) / (v1 - v0) * (view.clientWidth - LM - RM); }
  function laneY(node) { var i = lanes.indexOf(node); return i < 0 ? -1 : TOP + i * LANE; }

  function niceStep(span) {
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
  }
  function tickText(t, step) {
    if (step >= 100) return (t / 1000).toFixed(Math.max(0, -Math.floor(Math.log10(step / 1000) + 1e-9))) + ' s';
    return t.toFixed(Math.max(0, -Math.floor(Math.log10(step) + 1e-9))) + ' ms';
  }

  // Marks narrower than a pixel and closer than two to the last one join it: the DOM stays small
  // at any zoom; hovering a joined mark says how many it holds.
  function Packer(svg) { this.svg = svg; this.last = {}; }
  Packer.prototype.add = function (key, x0, x1, y, h, attrs) {
    var l = this.last[key];
    if (x1 - x0 < 1.5 && l && x0 - l.x1 < 2) {
      l.x1 = Math.max(l.x1, x1); l.n++;
      l.e.setAttribute('width', Math.max(1, l.x1 - l.x0));
      l.e.setAttribute('data-k', 'cluster'); l.e.setAttribute('data-n', l.n);
      return;
    }
    attrs.x = x0; attrs.y = y; attrs.width = Math.max(1, x1 - x0); attrs.height = h;
    this.last[key] = { x0: x0, x1: Math.max(x1, x0 + 1), n: 1, e: el('rect', attrs, this.svg) };
  };

  // Fault names in rows above the lanes, each in the first row where it does not run into the
  // one before (at most four rows; a fault without room keeps its shading and its hover).
  function faultLabels() {
    var rows = [], out = [];
    run.faults.forEach(function (f, i) {
      if (f[3] < v0 || f[2] > v1) return;
      var text = f[0] + ' ' + f[1], lx = Math.max(LM + 2, x(f[2]) + 2), r = 0;
      while (r < rows.length && rows[r] > lx) r++;
      if (r >= 4) return;
      rows[r] = lx + text.length * 6.2 + 8;
      out.push({ i: i, x: lx, row: r, text: text });
    });
    TOP = 22 + Math.max(1, rows.length) * 12;
    return out;
  }

  function render() {
    var labels = faultLabels();
    var W = Math.max(600, view.clientWidth), H = TOP + lanes.length * LANE + 8;
    view.textContent = '';
    var svg = el('svg', { width: W, height: H, id: 'tl-svg', 'class': 'tl-svg' }, view);
    el('rect', { x: 0, y: 0, width: W, height: H, fill: '#fff', 'data-k': 'bg' }, svg);
    el('clipPath', { id: 'tl-clip' }, svg).appendChild(el('rect', { x: LM, y: 0, width: W - LM - RM, height: H }));
    var step = niceStep(v1 - v0), axis = el('g', { id: 'tl-axis' }, svg);
    for (var t = Math.ceil(v0 / step) * step; t <= v1 + 1e-9; t += step) {
      el('line', { x1: x(t), x2: x(t), y1: 16, y2: H, stroke: '#eee' }, axis);
      el('text', { x: x(t), y: 12, 'class': 'tl-tick', 'text-anchor': 'middle' }, axis).textContent = tickText(t, step);
    }
    lanes.forEach(function (id, i) {
      var y = TOP + i * LANE;
      el('text', { x: LM - 6, y: y + 12, 'text-anchor': 'end', 'class': 'tl-lane' }, svg).textContent = name(id);
      el('line', { x1: LM, x2: W - RM, y1: y + LANE - 1, y2: y + LANE - 1, stroke: '#f2f2f2' }, svg);
    });
    var g = el('g', { 'clip-path': 'url(#tl-clip)' }, svg);
    run.faults.forEach(function (f, i) {
      if (f[3] < v0 || f[2] > v1) return;
      var a = { x: x(f[2]), y: 16, width: Math.max(2, x(f[3]) - x(f[2])), height: H - 16, 'class': 'tl-fault', 'data-k': 'fault', 'data-i': i };
      el('rect', a, g);
      // The targets' own lanes are shaded darker.
      f[1].split(/[^A-Za-z0-9_-]+/).forEach(function (n) {
        var y = laneY(nodeId(n));
        if (y >= 0) el('rect', { x: a.x, y: y, width: a.width, height: LANE - 2, 'class': 'tl-fault-lane', 'data-k': 'fault', 'data-i': i }, g);
      });
    });
    labels.forEach(function (l) {
      el('text', { x: l.x, y: 29 + l.row * 12, 'class': 'tl-fname', 'data-k': 'fault', 'data-i': l.i }, g).textContent = l.text;
    });
    var pack = new Packer(g);
    // Server lanes: while a server claims to lead, a band; where its claim changes, a mark.
    leads.forEach(function (l, i) {
      if (l[2] < v0 || l[1] > v1) return;
      pack.add('l' + l[0], x(l[1]), x(l[2]), laneY(l[0]) + 4, LANE - 9, { 'class': 'tl-lead', 'data-k': 'lead', 'data-i': i });
    });
    run.leaders.forEach(function (l, i) {
      if (l[1] < v0 || l[1] > v1) return;
      el('rect', { x: x(l[1]) - 1.5, y: laneY(l[0]), width: 3, height: LANE - 2, 'class': l[2] === null ? 'tl-leader tl-unlead' : 'tl-leader', 'data-k': 'leader', 'data-i': i }, g);
    });
    run.waits.forEach(function (w, i) {
      if (w[3] < v0 || w[2] > v1 || w[4] === 4) return;
      pack.add('w' + w[0], x(w[2]), x(w[3]), laneY(w[0]) + 6, 5, { 'class': 'tl-wait', 'data-k': 'wait', 'data-i': i });
    });
    run.holds.forEach(function (h, i) {
      if (h[3] < v0 || h[2] > v1) return;
      pack.add('h' + h[0], x(h[2]), x(h[3]), laneY(h[0]) + 2, LANE - 5, { 'class': h[6] ? 'tl-hold tl-shared' : 'tl-hold', 'data-k': 'hold', 'data-i': i });
    });
    run.writes.forEach(function (w, i) {
      if (w[2] < v0 || w[2] > v1) return;
      var bad = w[7] >= 0, y = laneY(w[0]);
      if (bad) el('rect', { x: x(w[2]) - 3, y: y, width: 6, height: LANE - 2, 'class': 'tl-stale', 'data-k': 'write', 'data-i': i, 'data-vi': w[7] }, g);
      else pack.add('x' + w[0], x(w[2]) - 0.5, x(w[2]) + 0.5, y + LANE - 6, 3, { 'class': 'tl-write', 'data-k': 'write', 'data-i': i });
    });
    run.overlaps.forEach(function (o, i) {
      if (o[4] < v0 || o[3] > v1) return;
      [o[0], o[1]].forEach(function (c) {
        el('rect', { x: x(o[3]), y: laneY(c), width: Math.max(3, x(o[4]) - x(o[3])), height: LANE - 2, 'class': 'tl-overlap', 'data-k': 'overlap', 'data-i': i, 'data-vi': o[5] }, g);
      });
    });
    run.messages.forEach(function (m, i) {
      var a = laneY(nodeId(m[0])), b = laneY(nodeId(m[1]));
      if (a < 0 || b < 0) return;
      var end = m[3] === null ? m[2] + 1 : m[3];
      var y2 = m[3] === null ? (a + b) / 2 : b;
      el('line', { x1: x(m[2]), y1: a + 8, x2: x(end), y2: y2 + 8, 'class': m[4] ? 'tl-msg tl-lost' : 'tl-msg', 'data-k': 'msg', 'data-i': i }, g);
    });
    $('tl-range').textContent = 'showing ' + fmtMs(v0) + ' to ' + fmtMs(v1) + ' of ' + fmtMs(run.dur);
    svg.addEventListener('mouseover', hover);
    svg.addEventListener('mouseout', function () { if (!pinned) tip.hidden = true; });
    svg.addEventListener('click', click);
    svg.addEventListener('wheel', wheel, { passive: false });
    svg.addEventListener('mousedown', function (e) { drag = { x: e.clientX, v0: v0, v1: v1 }; });
    if (pinned) {
      var p = svg.querySelector('[data-k="' + pinned.k + '"][data-i="' + pinned.i + '"]');
      if (p) p.classList.add('tl-pinned');
    }
    clockPlot();
  }

  // What a mark is, as lines: [field, text]; the field names let the self-test read them.
  function describe(k, i, n) {
    var out = [];
    if (k === 'cluster') return [['what', n + ' marks here: zoom in (wheel, or the buttons) to see each']];
    if (k === 'hold') {
      var h = run.holds[i];
      out.push(['what', 'hold of key ' + h[1] + ' (' + (h[6] ? 'shared' : 'exclusive') + ') by ' + name(h[0])]);
      out.push(['node', name(h[0])]);
      out.push(['token', h[4] === null ? (run.fenced ? 'none' : 'none: this model issues no token') : String(h[4])]);
      out.push(['grant', 'grant ' + h[5] + ' of ' + name(h[0])]);
      out.push(['granted', 'granted: ' + clocksText(h[0], h[2])]);
      out.push(['ended', ENDS[h[7]] + ': ' + clocksText(h[0], h[3])]);
      out.push(['event', 'Granted { key: ' + h[1] + ', mode: ' + (h[6] ? 'shared' : 'exclusive') + ', token: ' + (h[4] === null ? 'None' : 'Some(' + h[4] + ')') + ', grant: ' + h[5] + ' }']);
    } else if (k === 'wait') {
      var w = run.waits[i];
      out.push(['what', name(w[0]) + ' waiting for key ' + w[1] + ': ' + WAITS[w[4]]]);
      out.push(['node', name(w[0])]);
      out.push(['start', 'acquire called: ' + clocksText(w[0], w[2])]);
      out.push(['end', 'ended: ' + clocksText(w[0], w[3])]);
      out.push(['event', 'AcquireStart { key: ' + w[1] + ' }']);
    } else if (k === 'write') {
      var r = run.writes[i], res = nodeId('resource');
      out.push(['what', (r[7] >= 0 ? 'STALE write' : 'write') + ' of key ' + r[1] + ' by ' + name(r[0])]);
      out.push(['node', 'resource (the write of ' + name(r[0]) + ')']);
      out.push(['token', r[3] === null ? 'none' : String(r[3])]);
      out.push(['at', clocksText(res, r[2])]);
      out.push(['event', 'ResourceWrite { client: ' + name(r[0]) + ', key: ' + r[1] + ', grant: ' + r[6] + ', token: ' + (r[3] === null ? 'None' : 'Some(' + r[3] + ')') + ', value: ' + r[4] + ', fenced_accepted: ' + !!r[5] + ' }']);
      if (r[7] >= 0) out.push(['violation', run.violations[r[7]][0] + ': ' + run.violations[r[7]][2]]);
    } else if (k === 'overlap') {
      var o = run.overlaps[i];
      out.push(['what', 'OVERLAP on key ' + o[2] + ': ' + name(o[0]) + ' and ' + name(o[1]) + ' both hold it']);
      out.push(['at', 'from ' + clocksText(o[1], o[3]) + ' to true ' + fmtMs(o[4])]);
      if (o[5] >= 0) out.push(['violation', run.violations[o[5]][2]]);
    } else if (k === 'leader' || k === 'lead') {
      var c = k === 'lead' ? run.leaders[leads[i][4]] : run.leaders[i], led = null;
      if (c[2] === null) run.leaders.forEach(function (m) { if (m[0] === c[0] && m[1] <= c[1] && m[2] !== null) led = m[2]; });
      var ci = run.leaders.indexOf(c), span = leads.filter(function (l) { return l[4] === ci; })[0];
      out.push(['what', c[2] === null ? name(c[0]) + ' stops leading' : name(c[0]) + ' leads, term ' + c[2]]);
      out.push(['node', name(c[0])]);
      out.push(['term', c[2] === null ? 'none from now (it led term ' + led + ')' : String(c[2])]);
      out.push(['at', (c[2] === null ? 'stopped: ' : 'from: ') + clocksText(c[0], c[1])]);
      if (span) out.push(['until', span[5] ? 'until: ' + clocksText(c[0], span[2]) : 'until the end of the run']);
      out.push(['event', 'LeaderChange { node: ' + name(c[0]) + ', term: ' + (c[2] === null ? 'None' : 'Some(' + c[2] + ')') + ' }']);
    } else if (k === 'fault') {
      var f = run.faults[i];
      out.push(['what', 'fault: ' + f[0] + ' on ' + f[1]]);
      out.push(['at', 'from true ' + fmtMs(f[2]) + (f[4] ? ' to the end of the run' : ' to ' + fmtMs(f[3]))]);
    } else if (k === 'msg') {
      var m = run.messages[i];
      out.push(['what', 'message ' + m[5] + ': ' + m[0] + ' \u2192 ' + m[1] + (m[4] ? ' (lost)' : '')]);
      out.push(['node', m[0]]);
      out.push(['sent', 'sent: ' + clocksText(nodeId(m[0]), m[2])]);
      if (m[3] !== null) out.push(['arrived', 'arrived: ' + clocksText(nodeId(m[1]), m[3])]);
    }
    return out;
  }

  function showTip(t, e) {
    var lines = describe(t.getAttribute('data-k'), +t.getAttribute('data-i'), t.getAttribute('data-n'));
    if (!lines.length) return false;
    tip.textContent = '';
    lines.forEach(function (l) { html('div', l[1], tip).setAttribute('data-f', l[0]); });
    tip.hidden = false;
    var r = root.getBoundingClientRect();
    tip.style.left = Math.min(e.clientX - r.left + 12, root.clientWidth - 320) + 'px';
    tip.style.top = (e.clientY - r.top + 14) + 'px';
    return true;
  }
  function hover(e) {
    var t = e.target;
    if (pinned || !t.hasAttribute('data-i')) return;
    showTip(t, e);
  }

  function click(e) {
    var t = e.target;
    if (drag && Math.abs(e.clientX - drag.x) > 3) return;
    view.querySelectorAll('.tl-pinned').forEach(function (p) { p.classList.remove('tl-pinned'); });
    if (!t.hasAttribute('data-i')) { pinned = null; tip.hidden = true; return; }
    pinned = { k: t.getAttribute('data-k'), i: t.getAttribute('data-i') };
    t.classList.add('tl-pinned');
    showTip(t, e);
    if (t.hasAttribute('data-vi')) explain(+t.getAttribute('data-vi'), t.getAttribute('data-k'), +t.getAttribute('data-i'));
  }

  // The narrative beside the timeline: the report's own explanation when this is the violation
  // it told, else the checker's words and the command that tells it.
  function explain(vi, k, i) {
    side.textContent = '';
    var when = k === 'write' ? run.writes[i][2] : run.overlaps[i][3];
    html('h4', (k === 'write' ? 'Stale write' : 'Overlap') + ' at ' + fmtMs(when), side);
    if (vi < 0) {
      html('p', 'Past the first ' + run.violations.length + ' violations this page keeps the words of.', side, 'meta');
      return;
    }
    html('p', run.violations[vi][0] + ': ' + run.violations[vi][2], side, 'tl-detail');
    var ex = run.explain;
    if (ex && ex.vi === vi) {
      html('p', ex.title, side, 'tl-title');
      var ol = html('ol', undefined, side, 'tl-narrative');
      ex.sentences.forEach(function (s) { html('li', s, ol); });
      var a = html('a', 'its space-time diagram, below', html('p', undefined, side));
      a.href = '#' + ex.anchor;
    } else if (run.explain_command) {
      html('p', 'Told in full, with its diagram, by:', side);
      html('code', run.explain_command.replace('{index}', vi), side);
    } else {
      html('p', 'A live run cannot be replayed, so its violations are not told.', side, 'meta');
    }
  }

  function zoomAt(t, f) {
    var a = t - (t - v0) * f, b = t + (v1 - t) * f;
    if (b - a < 0.01) return;
    v0 = Math.max(0, a); v1 = Math.min(run.dur, b);
    if (v1 <= v0) { v0 = 0; v1 = run.dur; }
    render();
  }
  function wheel(e) {
    e.preventDefault();
    var t = v0 + (e.clientX - view.getBoundingClientRect().left - LM) / (view.clientWidth - LM - RM) * (v1 - v0);
    zoomAt(Math.min(v1, Math.max(v0, t)), e.deltaY < 0 ? 0.5 : 2);
  }
  function pan(dt) {
    var s = v1 - v0;
    v0 = Math.min(Math.max(0, v0 + dt), run.dur - s); v1 = v0 + s;
    render();
  }
  window.addEventListener('mouseup', function (e) {
    if (!drag) return;
    var dx = e.clientX - drag.x;
    if (Math.abs(dx) > 3) {
      var s = drag.v1 - drag.v0;
      v0 = drag.v0; v1 = drag.v1;
      pan(-dx / (view.clientWidth - LM - RM) * s);
    }
    setTimeout(function () { drag = null; }, 0);
  });

  // Each node's wall clock minus true time over the view: drift is a slope, a step a jump.
  function clockPlot() {
    clockEl.textContent = '';
    if (!run.clocks.length) {
      html('p', 'No clock readings recorded: a live run has one machine clock, and its nodes\u2019 offsets from true time are not known.', clockEl, 'meta');
      return;
    }
    var nodes = [], lo = 0, hi = 0, curves = {};
    run.clocks.forEach(function (c, i) {
      if (run.nodes[c[0]] === 'resource') return;
      var next = run.clocks.slice(i + 1).filter(function (d) { return d[0] === c[0]; })[0];
      var end = next ? next[1] : run.dur, endOff = c[2] + (end - c[1]) * c[3] / 1e6;
      if (!curves[c[0]]) { curves[c[0]] = []; nodes.push(c[0]); }
      curves[c[0]].push([c[1], c[2]], [end, endOff]);
      lo = Math.min(lo, c[2], endOff); hi = Math.max(hi, c[2], endOff);
    });
    var flat = hi - lo < 1e-6;
    if (flat) {
      lo -= 1; hi += 1;
      html('p', 'Every clock read true time in this run (no offset, drift or step).', clockEl, 'meta');
    }
    var W = Math.max(600, view.clientWidth), H = flat ? 60 : 150, top = 8, bottom = H - (flat ? 8 : 22);
    var pad = (hi - lo) * 0.08; lo -= pad; hi += pad;
    var y = function (o) { return bottom - (o - lo) / (hi - lo) * (bottom - top); };
    var svg = el('svg', { width: W, height: H, id: 'tl-clock-svg', 'class': 'tl-svg' }, clockEl);
    el('clipPath', { id: 'tl-clip2' }, svg).appendChild(el('rect', { x: LM, y: 0, width: W - LM - RM, height: H }));
    (flat ? [0] : [lo + pad, 0, hi - pad]).forEach(function (o) {
      el('line', { x1: LM, x2: W - RM, y1: y(o), y2: y(o), stroke: o === 0 ? '#999' : '#eee' }, svg);
      var a = Math.abs(o), text = a === 0 ? '0' : a >= 10000 ? (o / 1000).toFixed(a >= 1e6 ? 0 : 1) + ' s' : o.toFixed(a < 10 ? 3 : 0) + ' ms';
      el('text', { x: LM - 6, y: y(o) + 4, 'text-anchor': 'end', 'class': 'tl-tick' }, svg).textContent = (o > 0 ? '+' : '') + text;
    });
    var g = el('g', { 'clip-path': 'url(#tl-clip2)' }, svg), legend = html('div', undefined, clockEl, 'tl-legend');
    nodes.forEach(function (n, k) {
      var pts = curves[n].map(function (p) { return x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1); }).join(' ');
      var max = Math.max.apply(null, curves[n].map(function (p) { return Math.abs(p[1]); }));
      var line = el('polyline', { points: pts, fill: 'none', stroke: COLORS[k % COLORS.length], 'stroke-width': 1.6, 'class': 'tl-cl', 'data-node': name(n), 'data-max': max.toFixed(3) }, g);
      el('title', {}, line).textContent = name(n) + ': wall clock minus true time, largest ' + max.toFixed(3) + ' ms';
      var item = html('span', name(n), legend);
      item.style.borderLeft = '10px solid ' + COLORS[k % COLORS.length];
    });
  }

  D.runs.forEach(function (r, i) {
    var o = html('option', r.label + ', seed ' + r.seed + (r.why ? ' (' + r.why + ')' : ''), sel);
    o.value = i;
  });
  sel.addEventListener('change', function () { choose(+sel.value); });
  $('tl-in').addEventListener('click', function () { zoomAt((v0 + v1) / 2, 0.5); });
  $('tl-out').addEventListener('click', function () { zoomAt((v0 + v1) / 2, 2); });
  $('tl-left').addEventListener('click', function () { pan(-(v1 - v0) / 2); });
  $('tl-right').addEventListener('click', function () { pan((v1 - v0) / 2); });
  $('tl-all').addEventListener('click', function () { v0 = 0; v1 = run.dur; render(); });
  window.addEventListener('resize', function () { render(); });
  root.hidden = false;
  choose(0);

  // `#selftest`: real DOM events on the rendered marks, and what the page showed, written as
  // JSON into the element tl-selftest for a headless browser's DOM dump (tests/report_browser.rs).
  if (location.hash !== '#selftest') return;
  var out = {};
  function axis() { return [].map.call(view.querySelectorAll('#tl-axis text'), function (t) { return t.textContent; }); }
  function mouse(type, t) {
    var r = t.getBoundingClientRect();
    t.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 }));
  }
  function select(i) { sel.value = i; sel.dispatchEvent(new Event('change')); }
  try {
    // Hover: the first hold with a token, zoomed in until it is a mark of its own.
    var ri = D.runs.findIndex(function (r) { return r.holds.some(function (h) { return h[4] !== null; }); });
    if (ri >= 0) {
      select(ri);
      var hi = run.holds.findIndex(function (h) { return h[4] !== null; }), h = run.holds[hi], len = Math.max(h[3] - h[2], 0.01);
      v0 = Math.max(0, h[2] - len); v1 = Math.min(run.dur, h[3] + len); render();
      var mark = view.querySelector('[data-k="hold"][data-i="' + hi + '"]');
      mouse('mouseover', mark);
      out.hover = { label: run.label, seed: run.seed, node: name(h[0]), at_ms: h[2], tip_visible: !tip.hidden,
        token: tip.querySelector('[data-f="token"]').textContent, event: tip.querySelector('[data-f="event"]').textContent,
        granted: tip.querySelector('[data-f="granted"]').textContent };
      mouse('mouseout', mark);
    }
    // Leader change: the first server to claim a higher term than another server claimed before
    // (an election or promotion after a failover), hovered on its lane; and who led (per the
    // bands) just before the run's first fault.
    var lr = -1, lc = -1;
    D.runs.some(function (r, i) {
      lc = r.leaders.findIndex(function (l, j) {
        return l[2] !== null && r.leaders.slice(0, j).some(function (m) { return m[0] !== l[0] && m[2] !== null && m[2] < l[2]; });
      });
      lr = lc >= 0 ? i : -1;
      return lc >= 0;
    });
    if (lr >= 0) {
      select(lr);
      var c = run.leaders[lc], lmark = view.querySelector('[data-k="leader"][data-i="' + lc + '"]'), fields = {};
      mouse('mouseover', lmark);
      [].forEach.call(tip.querySelectorAll('div'), function (d) { fields[d.getAttribute('data-f')] = d.textContent; });
      var f0 = run.faults[0];
      out.leader = { label: run.label, seed: run.seed, at_ms: c[1], tip_visible: !tip.hidden, fields: fields,
        lane: name(lanes[Math.round((+lmark.getAttribute('y') - TOP) / LANE)]),
        fault: f0 ? [f0[0], f0[1], f0[2]] : null,
        led_before_fault: f0 ? leads.filter(function (l) { return l[1] < f0[2] && l[2] >= f0[2]; }).map(function (l) { return [name(l[0]), l[3]]; }) : [] };
      mouse('mouseout', lmark);
    }
    // Zoom: the axis of the whole run, then one wheel notch in the middle.
    select(0);
    var nomsg = side.querySelector('.tl-nomsg');
    out.no_messages_note = nomsg ? nomsg.textContent : null;
    out.axis_before = axis();
    var svg = $('tl-svg'), r = svg.getBoundingClientRect();
    svg.dispatchEvent(new WheelEvent('wheel', { bubbles: true, cancelable: true, deltaY: -100, clientX: r.left + LM + (r.width - LM - RM) / 2, clientY: r.top + 20 }));
    out.axis_after = axis();
    out.view_after = [v0, v1];
    // Click: the explained violation's mark, and what the side panel then says.
    var ei = D.runs.findIndex(function (r) { return r.explain && r.explain.vi >= 0; });
    if (ei >= 0) {
      select(ei);
      var vmark = view.querySelector('[data-vi="' + run.explain.vi + '"]');
      mouse('click', vmark);
      out.click = { label: run.label, seed: run.seed, kind: vmark.getAttribute('data-k'), pinned: !!view.querySelector('.tl-pinned'),
        narrative: [].map.call(side.querySelectorAll('.tl-narrative li'), function (li) { return li.textContent; }) };
    }
    // The results table at this window's width: the container's and the table's widths, and
    // each header cell's right edge (a cut column ends past the window or the container).
    var tbl = document.getElementById('results');
    if (tbl) {
      var box = tbl.parentElement.getBoundingClientRect();
      out.table = { window: window.innerWidth, page: document.documentElement.scrollWidth, box: [box.left, box.right],
        client: tbl.parentElement.clientWidth, scroll: tbl.parentElement.scrollWidth,
        heads: [].map.call(tbl.querySelectorAll('th'), function (th) { var b = th.getBoundingClientRect(); return [th.textContent, b.left, b.right]; }) };
    }
    out.clocks = {};
    [].forEach.call(clockEl.querySelectorAll('.tl-cl'), function (l) { out.clocks[l.getAttribute('data-node')] = +l.getAttribute('data-max'); });
    out.runs = D.runs.map(function (r) { return r.label + ':' + r.seed; });
    out.messages = D.runs.map(function (r) { return r.messages.length; });
  } catch (err) {
    out.error = String(err && err.stack || err);
  }
  var pre = $('tl-selftest');
  pre.textContent = JSON.stringify(out);
  pre.hidden = false;
})();
