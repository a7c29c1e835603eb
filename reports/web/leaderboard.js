// leaderboard.html's grid, cells and head-to-head (embedded by reports/web/embed_web_assets.cmake).
// Plain DOM code; every text a model or server chose goes in through textContent.
  var data = JSON.parse(document.getElementById('leaderboard-data').textContent);
  var byId = {};
  data.problems.forEach(function (p) { byId[p.id] = p; });
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function link(text, hash) { var a = el('a', '', text); a.href = '#' + hash; return a; }
  function enc(s) { return encodeURIComponent(s); }
  function decode(s) { try { return decodeURIComponent(s); } catch (e) { return s; } }
  function cellHash(problem, model) { return 'cell=' + enc(problem) + '|' + enc(model); }

  // The sources (most of the page's bytes) are gzip'd per problem and inflated by the browser when one
  // of that problem's cells is first opened.
  var packed = null, inflated = {};
  function loadSources(problem) {
    if (inflated[problem]) return inflated[problem];
    if (typeof DecompressionStream === 'undefined') {
      return Promise.reject(new Error('this browser cannot inflate the embedded sources (it lacks DecompressionStream); each model\'s report has them'));
    }
    if (!packed) packed = JSON.parse(document.getElementById('leaderboard-sources').textContent);
    var text = atob(packed[problem] || '');
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    inflated[problem] = new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text().then(function (json) {
      var list = JSON.parse(json), byKey = {};
      data.source_chunks[problem].forEach(function (key, i) { byKey[key] = list[i]; });
      return byKey;
    });
    return inflated[problem];
  }

  var filters = document.getElementById('grid-filters');
  var grid = document.getElementById('grid-table');
  function applyFilters() {
    var q = filters.querySelector('input').value.toLowerCase();
    var level = filters.querySelector('[name=level]').value;
    var tag = filters.querySelector('[name=tag]').value;
    var solvers = filters.querySelector('[name=solvers]').value;
    var shown = 0;
    Array.prototype.forEach.call(grid.tBodies[0].rows, function (row) {
      var n = parseInt(row.getAttribute('data-solvers'), 10);
      var ok = row.getAttribute('data-id').toLowerCase().indexOf(q) >= 0 &&
               (!level || row.getAttribute('data-level') === level) &&
               (!tag || row.getAttribute('data-tags').indexOf('|' + tag + '|') >= 0) &&
               (!solvers || (solvers === 'none' && n === 0) || (solvers === 'one' && n === 1) ||
                (solvers === 'all' && n === data.models.length) || (solvers === 'some' && n > 0 && n < data.models.length));
      row.hidden = !ok;
      if (ok) shown++;
    });
    filters.querySelector('.count').textContent = shown + ' of ' + grid.tBodies[0].rows.length + ' problems shown';
  }
  filters.querySelectorAll('input, select').forEach(function (c) { c.addEventListener('input', applyFilters); c.addEventListener('change', applyFilters); });

  var detail = document.getElementById('detail');
  function showDetail(title) {
    detail.textContent = '';
    detail.hidden = false;
    var close = el('button', 'close', 'close');
    close.type = 'button';
    close.addEventListener('click', function () { detail.hidden = true; });
    detail.appendChild(close);
    detail.appendChild(el('h3', '', title));
    return detail;
  }
  function showProblem(id) {
    var p = byId[id];
    if (!p) return;
    var d = showDetail(id);
    d.setAttribute('data-view', 'problem');
    if (p.name) d.appendChild(el('p', '', p.name + (p.tags.length ? ' · ' + p.tags.join(', ') : '')));
    if (p.description) d.appendChild(el('p', 'description', p.description));
    if (p.origin) d.appendChild(el('p', 'origin', 'from ' + p.origin));
    if (p.excluded) d.appendChild(el('p', 'flag', p.excluded));
    var text = data.statements[id];
    if (text) { var pre = el('pre', 'statement'); pre.appendChild(el('code', '', text)); d.appendChild(pre); }
    else d.appendChild(el('p', '', 'No statement was recorded for this problem.'));
    d.scrollIntoView();
  }
  function showCell(id, model) {
    var p = byId[id], cell = p && p.cells[model];
    if (!cell) return;
    var d = showDetail(model + ' on ' + id);
    d.setAttribute('data-view', 'cell');
    var head = el('p', 'cell-summary', cell.c + ' of ' + cell.n + ' judged candidate(s) correct');
    if (cell.best_speedup !== undefined) head.textContent += '; best speedup ' + cell.best_speedup.toFixed(2) + 'x';
    d.appendChild(head);
    var statement = link('the problem\'s statement', 'problem=' + enc(id));
    var line = el('p', '', 'See ');
    line.appendChild(statement);
    if (data.reports[model]) { line.appendChild(document.createTextNode(' or ' + model + '\'s ')); var r = el('a', '', 'full report'); r.href = data.reports[model]; line.appendChild(r); }
    d.appendChild(line);
    var opened = false;
    cell.candidates.forEach(function (index) {
      var c = data.candidates[index];
      var box = el('details', 'cand');
      box.setAttribute('data-candidate', index);
      var summary = el('summary');
      summary.appendChild(document.createTextNode('sample ' + c.sample + ' · '));
      summary.appendChild(el('span', 'v-' + c.verdict, c.verdict));
      if (c.speedup !== undefined) summary.appendChild(document.createTextNode(' · ' + c.speedup.toFixed(2) + 'x'));
      box.appendChild(summary);
      var body = el('div');
      if (c.reason) body.appendChild(el('p', 'reason', c.reason));
      if (c.library_ops) body.appendChild(el('p', 'flag', 'runs LibTorch ops: ' + c.library_ops.join(', ')));
      var pre = el('pre', 'source');
      var code = el('code', '', 'loading the source…');
      pre.appendChild(code);
      loadSources(id).then(function (byKey) { code.textContent = byKey[c.source]; pre.setAttribute('data-loaded', '1'); },
                         function (e) { code.textContent = e.message; });
      body.appendChild(pre);
      box.appendChild(body);
      // The first correct candidate (else the first) opens by itself.
      if (!opened && (c.verdict === 'correct' || cell.c === 0)) { box.open = true; opened = true; }
      d.appendChild(box);
    });
    d.scrollIntoView();
  }

  var h2h = document.getElementById('h2h-view');
  var pickA = document.getElementById('h2h-a'), pickB = document.getElementById('h2h-b');
  function problemList(ids, model) {
    var ul = el('ul');
    ids.forEach(function (id) { var li = el('li'); li.appendChild(link(id, cellHash(id, model))); ul.appendChild(li); });
    if (!ids.length) ul.appendChild(el('li', '', 'none'));
    return ul;
  }
  function showPair(a, b) {
    pickA.value = a;
    pickB.value = b;
    h2h.textContent = '';
    if (a === b) { h2h.appendChild(el('p', '', 'Pick two different models.')); return; }
    var pair = null, flip = false;
    data.head_to_head.forEach(function (x) {
      if (x.a === a && x.b === b) pair = x;
      if (x.a === b && x.b === a) { pair = x; flip = true; }
    });
    if (!pair) return;
    var aOnly = flip ? pair.b_only : pair.a_only, bOnly = flip ? pair.a_only : pair.b_only;
    h2h.setAttribute('data-a', a);
    h2h.setAttribute('data-b', b);
    h2h.appendChild(el('p', 'h2h-counts', a + ' solves ' + aOnly.length + ' problem(s) that ' + b + ' does not; ' + b + ' solves ' + bOnly.length +
                       ' that ' + a + ' does not; both solve ' + pair.both + '; neither solves ' + pair.neither + '.'));
    h2h.appendChild(el('h3', '', 'Only ' + a + ' solves'));
    var l1 = problemList(aOnly, a); l1.id = 'h2h-a-only'; h2h.appendChild(l1);
    h2h.appendChild(el('h3', '', 'Only ' + b + ' solves'));
    var l2 = problemList(bOnly, b); l2.id = 'h2h-b-only'; h2h.appendChild(l2);
    if (pair.speedup_ratio) {
      var g = flip ? 1 / pair.speedup_ratio.geomean : pair.speedup_ratio.geomean;
      h2h.appendChild(el('p', 'h2h-ratio', 'On the ' + pair.speedup_ratio.problems + ' problem(s) both solve with GPU timing, ' + a +
                         '\'s best kernels are ' + g.toFixed(2) + 'x as fast as ' + b + '\'s (geometric mean of the per-problem ratios).'));
      var table = el('table', 'sortable');
      var head = el('tr');
      head.appendChild(el('th', '', 'problem'));
      head.appendChild(el('th', 'num', a + ' speedup / ' + b + ' speedup'));
      var thead = el('thead'); thead.appendChild(head); table.appendChild(thead);
      var tbody = el('tbody');
      Object.keys(pair.speedup_ratio.per_problem).forEach(function (id) {
        var r = pair.speedup_ratio.per_problem[id];
        var tr = el('tr');
        tr.appendChild(el('td', '', id));
        tr.appendChild(el('td', 'num', (flip ? 1 / r : r).toFixed(2) + 'x'));
        tbody.appendChild(tr);
      });
      table.appendChild(tbody);
      h2h.appendChild(table);
    } else if (data.timed) {
      h2h.appendChild(el('p', '', 'No problem both solve with GPU timing.'));
    }
  }
  function pickPair() { location.hash = 'h2h=' + enc(pickA.value) + '|' + enc(pickB.value); }
  if (h2h) {
    pickA.addEventListener('change', pickPair);
    pickB.addEventListener('change', pickPair);
  }

  // The hash names what is open, so a view can be linked: #cell=P|M, #problem=P, #h2h=A|B, and the
  // grid's filters (#solvers=one&level=2), joined with '&'.
  function route() {
    var shownPair = false;
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var eq = part.indexOf('=');
      if (eq < 0) return;
      // Names never hold '|' (model names are [A-Za-z0-9._-]), so an encoded one is a separator too.
      var key = part.slice(0, eq), args = part.slice(eq + 1).replace(/%7C/gi, '|').split('|').map(decode);
      if (key === 'cell') showCell(args[0], args[1]);
      else if (key === 'problem') showProblem(args[0]);
      else if (key === 'h2h' && args.length === 2 && h2h) { showPair(args[0], args[1]); shownPair = true; }
      else if (/^[a-z]+$/.test(key)) { var s = filters.querySelector('[name="' + key + '"]'); if (s) s.value = args[0]; }
    });
    if (h2h && !shownPair && !h2h.hasAttribute('data-a')) showPair(data.models[0], data.models[1]);
    applyFilters();
  }
  window.addEventListener('hashchange', route);
  route();
