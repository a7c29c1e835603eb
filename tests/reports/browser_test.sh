#!/usr/bin/env bash
# Renders a real report.html in headless Chromium and checks the live DOM: no console messages (errors
# or otherwise), the key sections, a known problem's row, highlighted source, nothing loaded from the
# network. Saves screenshots at desktop and phone widths.
# usage: browser_test.sh CUSET_BINARY OUT_DIR      (run from the repository root; exit 77 = skipped)
set -euo pipefail
cuset="$1"
out="$2"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$browser" ]]; then
  echo "browser test: chromium is not installed (scripts/install-deps.sh installs it); skipping"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out"
"$cuset" eval --backend sim --candidates problems/level1/leaky_relu --out "$out/run" --seed 5 -q > "$out/eval.log"
html="$out/run/report.html"

fail() { echo "browser test FAILED: $*" >&2; exit 1; }
browse() {
  timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$out/profile" \
    --enable-logging=stderr --v=0 "$@"
}

# The page as the browser built it, with the first candidate's detail opened through the URL hash.
browse --dump-dom "file://$html#cand-0" > "$out/dom.html" 2> "$out/browser.log"
if grep -q ":CONSOLE" "$out/browser.log"; then
  grep ":CONSOLE" "$out/browser.log" >&2
  fail "the page logged to the console"
fi
for needle in 'id="pass-at-k"' 'id="fast-p"' 'id="verdicts"' 'id="problems"' 'id="candidates"' 'level1/leaky_relu' \
              'class="v-runtime_error"' 'CPU simulator' '>1 shown<' '>2 shown<'; do
  grep -q -- "$needle" "$out/dom.html" || fail "the rendered page lacks '$needle'"
done
if grep -q 'id="assets-notice"' "$out/dom.html"; then
  # The build found highlight.js (CUSET_EXPECT_HIGHLIGHT=1 from ctest): the report must have inlined it.
  [[ "${CUSET_EXPECT_HIGHLIGHT:-0}" != 1 ]] || fail "the build bundled highlight.js, but the report did not inline it"
  echo "browser test: note: report assets were not inlined (no highlighting to check)"
else
  grep -q 'class="hljs-' "$out/dom.html" || fail "the opened candidate's source is not highlighted"
  grep -q '<details class="cand" id="cand-0" open' "$out/dom.html" || fail "the URL hash did not open the candidate"
fi
# Self-contained: nothing is fetched (the only URL is the SVG namespace).
if grep -Eo '(src|href)="(https?:)?//[^"]*"' "$html"; then fail "the report references the network"; fi

browse --window-size=1400,1800 --screenshot="$out/report-1400px.png" "file://$html" 2> /dev/null
browse --window-size=390,1800 --screenshot="$out/report-phone.png" "file://$html" 2> /dev/null
[[ -s "$out/report-1400px.png" && -s "$out/report-phone.png" ]] || fail "no screenshot written"
echo "browser test passed; DOM and screenshots in $out"
