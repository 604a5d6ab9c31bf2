// The run view: counters and the step map, fed by /state, /cells and the
// /events stream. Text from the run (answers, tool results) is only ever
// set as textContent, never parsed as HTML.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const canvas = $('map');
  const ctx = canvas.getContext('2d');
  let W = 1, H = 1, n = 0, scale = 1, selected = -1;
  let rgb = [], img = null, dirty = false, es = null, loading = false;

  const fmt = (x) => Number(x).toLocaleString('en-US');
  // task is the batch task this page shows (?task=NAME), or '' for the
  // run, or the batch, the view serves; q adds it to an address.
  const task = new URLSearchParams(location.search).get('task') || '';
  const q = (path) => task ? path + (path.includes('?') ? '&' : '?') + 'task=' + encodeURIComponent(task) : path;
  let batchMode = false;
  const pct = (x) => (100 * x).toFixed(x < 0.01 ? 3 : 2) + '%';
  function dur(ns) {
    if (ns < 0) return 'unknown';
    let s = ns / 1e9;
    if (s < 0.001) return (s * 1e6).toFixed(0) + ' µs';
    if (s < 1) return (s * 1000).toFixed(s < 0.01 ? 2 : 0) + ' ms';
    if (s < 90) return s.toFixed(1) + ' s';
    const d = Math.floor(s / 86400); s -= d * 86400;
    const h = Math.floor(s / 3600); s -= h * 3600;
    const m = Math.floor(s / 60); s -= m * 60;
    return (d ? d + 'd ' : '') + (d || h ? h + 'h ' : '') + m + 'm' + (d ? '' : ' ' + Math.floor(s) + 's');
  }
  function hexRGB(h) { return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)]; }
  function b64(s) { const bin = atob(s); const out = new Uint8Array(bin.length); for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i); return out; }
  function set(id, text) { $(id).textContent = text; }

  async function getJSON(url) {
    const r = await fetch(url, { credentials: 'same-origin' });
    if (!r.ok) throw new Error(url + ': ' + r.status + ' ' + (await r.text()));
    return r.json();
  }

  async function load() {
    if (loading) return;
    loading = true;
    try {
      if (es) { es.close(); es = null; }
      const st = await getJSON(q('/state'));
      if (st.batch) { batchMode = true; showBatch(st.batch); connectBatch(); return; }
      $('back').hidden = !task;
      rgb = st.palette.map(hexRGB);
      set('detail-note', st.detail);
      legend(st.palette, st.stats.k || 3);
      layout(st.stats.width, st.stats.height);
      const r = await fetch(q('/cells'), { credentials: 'same-origin' });
      if (!r.ok) throw new Error('/cells: ' + r.status);
      put(0, new Uint8Array(await r.arrayBuffer()));
      show(st.stats);
      fit();
      connect();
    } catch (e) {
      fail(String(e));
    } finally {
      loading = false;
    }
  }

  function connectBatch() {
    es = new EventSource('/events');
    es.addEventListener('batch', (e) => showBatch(JSON.parse(e.data)));
    es.onopen = () => fail('');
    es.onerror = () => fail('the event stream is interrupted; reconnecting…');
  }

  const statusOrder = ['queued', 'running', 'unfinished', 'decided', 'stopped', 'solved', 'failed', 'invalid'];
  function showBatch(b) {
    $('run-sections').hidden = true;
    $('batch-section').hidden = false;
    set('source', 'batch · ' + b.source + ' · ' + fmt(b.tasks) + ' tasks');
    if (b.error) fail('stopped following the batch: ' + b.error);
    const cards = [card('b-tasks', 'tasks', fmt(b.tasks), fmt(b.steps) + ' steps, ' + fmt(b.samples) + ' samples')];
    for (const s of statusOrder) if (b.by_status[s]) cards.push(card('b-' + s, s, fmt(b.by_status[s]), ''));
    cards.push(card('b-cost', 'dollars', '$' + b.cost.toFixed(4), b.cost_cap > 0 ? 'of the $' + b.cost_cap.toFixed(2) + ' cap: ' + pct(b.cost / b.cost_cap) : 'no cap'));
    $('batch-counters').replaceChildren(...cards);
    set('batch-note', b.listed < b.tasks ? 'listing ' + fmt(b.listed) + ' of ' + fmt(b.tasks) + ' tasks, the running ones first' : 'running tasks first; open a task to see its run');
    $('batch-tasks').tBodies[0].replaceChildren(...b.list.map((t) => {
      const tr = row([t.id || t.name, t.kind || '', t.status, fmt(t.steps) + (t.total ? ' of ' + fmt(t.total) : ''), fmt(t.samples), '$' + t.cost.toFixed(4), t.error || '']);
      tr.className = 'st-' + t.status;
      if (t.openable) {
        const a = document.createElement('a');
        a.href = '/?task=' + encodeURIComponent(t.name);
        a.textContent = tr.cells[0].textContent;
        tr.cells[0].replaceChildren(a);
      }
      return tr;
    }));
  }

  function card(id, label, value, sub) {
    const d = document.createElement('div');
    d.className = 'card'; d.id = id;
    for (const [cls, text] of [['label', label], ['value', value], ['sub', sub]]) {
      const s = document.createElement('span'); s.className = cls; s.textContent = text; d.appendChild(s);
    }
    return d;
  }

  function fail(msg) { const el = $('error'); el.textContent = msg; el.hidden = !msg; }

  function legend(p, k) {
    const sw = { 'lg-few': p[k], 'lg-many': p[31], 'lg-flag': p[k | 0x20], 'lg-cont': p[k | 0x40], 'lg-esc': p[k | 0x80], 'lg-none': p[0] };
    for (const id in sw) $(id).style.background = sw[id];
  }

  function layout(w, h) {
    W = w; H = h; n = 0;
    canvas.width = W; canvas.height = H;
    img = ctx.createImageData(W, H);
    const [r, g, b] = rgb[0];
    for (let i = 0; i < W * H; i++) { const o = 4 * i; img.data[o] = r; img.data[o + 1] = g; img.data[o + 2] = b; img.data[o + 3] = 255; }
    dirty = true;
    set('map-size', W + ' × ' + H + ' cells');
  }

  // put draws cells from step from on; false when they do not fit the
  // layout (a run of unknown length outgrew it).
  function put(from, bytes) {
    if (from + bytes.length > W * H) return false;
    for (let i = 0; i < bytes.length; i++) {
      const o = 4 * (from + i), c = rgb[bytes[i]];
      img.data[o] = c[0]; img.data[o + 1] = c[1]; img.data[o + 2] = c[2];
    }
    n = Math.max(n, from + bytes.length);
    dirty = true;
    return true;
  }

  function frame() {
    if (dirty && img) { ctx.putImageData(img, 0, 0); dirty = false; }
    requestAnimationFrame(frame);
  }

  function connect() {
    es = new EventSource(q('/events?from=' + n));
    es.addEventListener('cells', (e) => {
      const d = JSON.parse(e.data);
      if (!put(d.from, b64(d.cells))) load();
    });
    es.addEventListener('stats', (e) => {
      const s = JSON.parse(e.data);
      if (s.width !== W || s.height !== H) { load(); return; }
      show(s);
    });
    es.onopen = () => fail('');
    es.onerror = () => fail('the event stream is interrupted; reconnecting…');
  }

  function show(s) {
    set('source', s.task + ' · ' + s.model + ' · k=' + (s.k || 'adaptive') + ' · ' + s.source + (s.run ? ' · run ' + s.run : '') + (s.done ? ' · done' : ''));
    if (s.error) fail('stopped following the journal: ' + s.error);
    set('c-steps', fmt(s.steps));
    set('c-left', s.left >= 0 ? fmt(s.left) + ' left of ' + fmt(s.total) : 'total unknown');
    set('c-eta', s.done ? 'done' : dur(s.eta_ns));
    set('c-steptime', s.steps ? 'mean step ' + dur(s.step_time_ns / s.steps) : '');
    set('c-sps', s.steps ? s.samples_per_step.toFixed(3) : '–');
    set('c-most', s.most_step >= 0 ? 'most: ' + s.most_samples + ' at step ' + fmt(s.most_step) : '');
    set('c-flagrate', s.samples ? pct(s.flag_rate) : '–');
    set('c-flags', Object.entries(s.flags || {}).map(([k, v]) => k + ' ' + fmt(v)).join(', '));
    set('c-contested', fmt(s.contested) + ' / ' + fmt(s.escalated));
    set('c-pending', s.pending >= 0 ? 'step ' + fmt(s.pending) + ': tool call running' : '');
    set('c-tokens', fmt(s.usage.input_tokens) + ' / ' + fmt(s.usage.output_tokens));
    const cap = s.cost_cap > 0 ? ' of the $' + s.cost_cap.toFixed(2) + ' cap (' + pct(s.cost / s.cost_cap) + ')' : '';
    set('c-cost', s.cost_step >= 0 ? '$' + s.cost.toFixed(4) + cap + ' at step ' + fmt(s.cost_step) : 'cost: not in the journal before its first checkpoint' + (s.cost_cap > 0 ? '; cap $' + s.cost_cap.toFixed(2) : ''));
    const bu = s.budget || {};
    if (bu.p_hat < 0) { set('c-budget', '–'); set('c-budget-sub', 'no valid vote yet'); } else if (bu.share >= 0) {
      set('c-budget', bu.share <= 1 ? pct(bu.share) + ' spent' : 'spent ' + bu.share.toFixed(1) + '× over');
      set('c-budget-sub', 'of 1−T = ' + (1 - bu.target).toPrecision(3) + ' (T ' + bu.target + '); p̂ ' + bu.p_hat.toFixed(4) + (bu.projected >= 0 ? '; whole run ≈ ' + bu.projected.toExponential(2) : ''));
    } else {
      set('c-budget', bu.spent.toExponential(2));
      set('c-budget-sub', 'chance a decided step went wrong (no target T); p̂ ' + bu.p_hat.toFixed(4) + (bu.projected >= 0 ? '; whole run ≈ ' + bu.projected.toExponential(2) : ''));
    }
    const ws = s.workers || [];
    $('workers-section').hidden = ws.length === 0 && !s.remote;
    set('workers-route', s.remote ? '(' + s.remote + ')' : '');
    $('workers').tBodies[0].replaceChildren(...ws.map((w) => row([w.worker, fmt(w.samples), fmt(w.valid), fmt(w.flagged), fmt(w.errors), fmt(w.lost), new Date(w.last).toLocaleTimeString()])));
    const cur = s.current;
    $('current-card').hidden = !cur;
    if (cur) {
      set('c-current', fmt(cur.step));
      set('c-current-sub', cur.valid + ' valid, ' + cur.flagged + ' flagged, ' + cur.errors + ' errors');
    }
    const tb = $('models').tBodies[0];
    tb.replaceChildren(...(s.models || []).map((m) => row([m.model, fmt(m.valid), fmt(m.flagged), fmt(m.errors), fmt(m.winner_votes), fmt(m.usage.input_tokens), fmt(m.usage.output_tokens)])));
  }

  function row(cols) {
    const tr = document.createElement('tr');
    for (const c of cols) { const td = document.createElement('td'); td.textContent = c; tr.appendChild(td); }
    return tr;
  }

  function zoom(z) {
    scale = Math.min(Math.max(z, 1 / 8), 64);
    canvas.style.width = (W * scale) + 'px';
    canvas.style.height = (H * scale) + 'px';
    set('zoom-level', (scale >= 1 ? scale : '1/' + Math.round(1 / scale)) + '×');
    mark();
  }
  function fit() {
    const availW = Math.max($('map-wrap').clientWidth - 4, 64);
    const availH = Math.max(window.innerHeight * 0.7 - 4, 64);
    let z = 1;
    while (W * z * 2 <= availW && H * z * 2 <= availH && z < 64) z *= 2;
    while ((W * z > availW || H * z > availH) && z > 1 / 8) z /= 2;
    zoom(z);
  }

  function mark() {
    const m = $('marker');
    if (selected < 0) { m.hidden = true; return; }
    const x = selected % W, y = Math.floor(selected / W), sz = Math.max(scale, 6);
    m.style.left = (x * scale - (sz - scale) / 2 - 2) + 'px';
    m.style.top = (y * scale - (sz - scale) / 2 - 2) + 'px';
    m.style.width = (sz + 4) + 'px';
    m.style.height = (sz + 4) + 'px';
    m.hidden = false;
  }

  async function step(k) {
    if (!(k >= 0)) return;
    selected = k; mark();
    $('step-section').hidden = false;
    set('step-title', 'Step ' + fmt(k));
    const tb = $('step-summary').tBodies[0], vb = $('step-votes').tBodies[0], sb = $('step-samples').tBodies[0];
    tb.replaceChildren(); vb.replaceChildren(); sb.replaceChildren(); set('step-json', ''); set('step-samples-note', '');
    const r = await fetch(q('/step/' + k), { credentials: 'same-origin' });
    const text = await r.text();
    if (!r.ok) { tb.replaceChildren(row(['not available', text.trim()])); return; }
    const rec = JSON.parse(text);
    set('step-json', JSON.stringify(rec, null, 2));
    const u = rec.usage || {};
    const w = rec.winner || {};
    const rows = [
      ['k', rec.k],
      ['winner', w.value !== undefined ? JSON.stringify(w.value) : '–'],
      ['winning key', rec.key],
      ['samples', 'launched ' + rec.launched + ', valid ' + rec.valid + ', flagged ' + rec.flagged + ', errors ' + rec.errors + ', cancelled ' + rec.cancelled],
      ['red flags', rec.flags ? Object.entries(rec.flags).map(([f, c]) => f + ' ' + c).join(', ') : 'none'],
      ['race', [rec.pending ? 'pending: its tool call had not returned' : '', rec.contested ? 'contested' : '', rec.escalated ? 'escalated' : '', rec.checked ? 'checked by the task' : ''].filter(Boolean).join(', ') || 'decided by the vote'],
      ['usage', (u.input_tokens || 0) + ' tokens in, ' + (u.output_tokens || 0) + ' out, model time ' + dur(u.latency_ns || 0)],
      ['step time', dur(rec.elapsed_ns || 0)],
      ['tool call', w.intent ? JSON.stringify(w.intent) : 'none'],
      ['observation', rec.observation ? JSON.stringify(rec.observation) : 'none'],
    ];
    if (rec.models) rec.models.forEach((m, i) => rows.push(['model ' + (i + 1), 'valid ' + m.valid + ', flagged ' + m.flagged + ', errors ' + m.errors + ', winner votes ' + m.winner_votes + ', ' + m.usage.input_tokens + '/' + m.usage.output_tokens + ' tokens']));
    tb.replaceChildren(...rows.map((x) => row(x)));
    const votes = Object.entries(rec.votes || {}).sort((a, b) => b[1] - a[1]);
    vb.replaceChildren(...votes.map(([key, v]) => row([key + (key === rec.key ? ' (winner)' : ''), v])));
    if (rec.samples) {
      sb.replaceChildren(...rec.samples.map((x, i) => {
        const tr = row([i + 1, x.index, x.class + (x.key ? ' (its own key ' + x.key + ')' : '') + (x.winner ? ' (winner)' : ''), x.flag || '', x.model, x.worker || '', fmt(x.input_tokens), fmt(x.output_tokens)]);
        if (x.winner) tr.className = 'winner';
        return tr;
      }));
      set('step-samples-note', rec.samples.length + ' samples' + (rec.more_samples ? ', and ' + rec.more_samples + ' more not kept' : '') + '; the winner is ' + rec.key + (w.intent ? ', its tool call and observation above' : ''));
    } else {
      set('step-samples-note', 'not recorded: this journal keeps each step\'s counts, not its samples (a journal of format version 4 or before, or of a run with samples turned off)');
    }
  }

  canvas.addEventListener('click', (e) => {
    const r = canvas.getBoundingClientRect();
    const x = Math.floor((e.clientX - r.left) / scale), y = Math.floor((e.clientY - r.top) / scale);
    if (x < 0 || x >= W || y < 0 || y >= H) return;
    step(y * W + x);
  });
  $('map-wrap').addEventListener('wheel', (e) => {
    if (!e.ctrlKey && !e.altKey) return;
    e.preventDefault();
    zoom(e.deltaY < 0 ? scale * 2 : scale / 2);
  }, { passive: false });
  $('zoom-in').addEventListener('click', () => zoom(scale * 2));
  $('zoom-out').addEventListener('click', () => zoom(scale / 2));
  $('zoom-fit').addEventListener('click', fit);
  $('goto-btn').addEventListener('click', () => step(parseInt($('goto').value, 10)));
  $('goto').addEventListener('keydown', (e) => { if (e.key === 'Enter') step(parseInt($('goto').value, 10)); });
  requestAnimationFrame(frame);
  load();
})();
