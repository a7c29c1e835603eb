#!/usr/bin/env bash
# Imports KernelBench-format files with `cuset import kernelbench`, adds hand-written solutions to the
# imported problems and requires `cuset problems check --solutions` to pass on the sim backend: every
# reference loads and runs from C++, no problem is degenerate, each good kernel is `correct` and each
# bad_* kernel gets its expected verdict. Then checks the import report.
#   import_and_judge.sh CUSET KB_ROOT SOLUTIONS OUT EXPECTED_IMPORTED REIMPORT_ID [--only ...]
set -euo pipefail
cuset=$1 root=$2 solutions=$3 out=$4 expected=$5 reimport=$6
shift 6
if [ ! -d "$root/KernelBench" ]; then
  echo "SKIP: $root/KernelBench is absent"
  exit 77
fi
rm -rf "$out"
"$cuset" import kernelbench "$root" --out "$out" --jobs 2 --quiet "$@"
imported=$(grep -c '"status": "imported"' "$out/import-report.json" || true)
if [ "$imported" != "$expected" ]; then
  echo "FAIL: imported $imported problems, expected $expected"; cat "$out/import-report.md"; exit 1
fi
# Idempotent: re-importing one problem (--only) leaves the suite and the report's totals as they were.
first=$(cd "$out" && find . -name problem.yaml | sort | xargs sha256sum)
total=$(grep '"total"' "$out/import-report.json")
"$cuset" import kernelbench "$root" --out "$out" --jobs 1 --quiet --only "$reimport"
second=$(cd "$out" && find . -name problem.yaml | sort | xargs sha256sum)
[ "$first" = "$second" ] || { echo "FAIL: re-import with --only changed the suite"; exit 1; }
[ "$total" = "$(grep '"total"' "$out/import-report.json")" ] || { echo "FAIL: --only dropped report entries"; exit 1; }
# Every skip has a reason; the suite tables and shows from C++ (roofline of `full` from the imported cost).
if grep -A1 '"status": "skipped"' "$out/import-report.json" | grep -q '"reason": ""'; then echo "FAIL: a skip without a reason"; exit 1; fi
table=$("$cuset" problems table --problems "$out")
first_id=$(sed -n 's/.*"id": "\(level[0-9]*\/[a-z0-9_]*\)".*/\1/p' "$out/import-report.json" | head -1)
echo "$table" | grep -q "\`$first_id\`" || { echo "FAIL: problems table lacks $first_id"; echo "$table"; exit 1; }
echo "$table" | grep "\`$first_id\`" | grep -qE '\| [0-9]+\.[0-9]+ \|$' || { echo "FAIL: no roofline for $first_id"; echo "$table"; exit 1; }
"$cuset" problems show "$first_id" --problems "$out" | grep -q "origin: kernelbench" || { echo "FAIL: problems show has no origin"; exit 1; }
cp -rL "$solutions"/. "$out"/  # -L: shared solutions link to the fixtures' kernels
"$cuset" problems check --problems "$out" --solutions --backend sim --out "$out/.solutions-run"
