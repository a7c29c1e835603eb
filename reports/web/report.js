// report.html's filtering and candidate detail view, run after sortable_tables.js inside one function.
// Plain DOM code: no library is needed for tables.
  document.querySelectorAll('.filters').forEach(function (box) {
    var table = document.getElementById(box.getAttribute('data-table'));
    var text = box.querySelector('input');
    var selects = box.querySelectorAll('select');
    var count = box.querySelector('.count');
    function apply() {
      var q = text.value.toLowerCase(), shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var ok = row.textContent.toLowerCase().indexOf(q) >= 0;
        selects.forEach(function (s) { if (s.value && row.getAttribute('data-' + s.name) !== s.value) ok = false; });
        row.hidden = !ok;
        if (ok) shown++;
      });
      if (count) count.textContent = shown + ' shown';
    }
    text.addEventListener('input', apply);
    selects.forEach(function (s) { s.addEventListener('change', apply); });
    apply();
  });
  function highlight(details) {
    if (!window.hljs || details.getAttribute('data-highlighted')) return;
    details.querySelectorAll('pre code.language-cpp').forEach(function (el) { window.hljs.highlightElement(el); });
    details.setAttribute('data-highlighted', '1');
  }
  document.querySelectorAll('details.cand').forEach(function (d) {
    d.addEventListener('toggle', function () { if (d.open) highlight(d); });
  });
  function openFromHash() {
    var el = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (el && el.tagName === 'DETAILS') { el.open = true; highlight(el); el.scrollIntoView(); }
  }
  window.addEventListener('hashchange', openFromHash);
  openFromHash();
