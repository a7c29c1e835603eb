#!/usr/bin/env bash
# Imports KernelBench-format files with `cuset import kernelbench`, adds hand-written solutions to the
# imported problems and requires `cuset problems check --solutions` to pass on the sim backend: every
# reference loads and runs from C++, no problem is degenerate, each good kernel is `correct` and each
# bad_* kernel gets its expected verdict. Then checks the import report.
#   import_and_judge.sh CUSET KB_ROOT SOLUTIONS OUT EXPECTED_IMPORTED REIMPORT_ID [--only ...]
set -euo pipefail
cuset=$1 root=$2 solutions=$3 out=$4 expected=$5 reimport=$6
shift 6
python="${CUSET_PYTHON:-python3}"  # the project's interpreter (ctest sets it)
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
# A Model without a docstring has no description, not the one it inherits from nn.Module.
if grep -l "Base class for all neural network modules" "$out"/level*/*/problem.yaml; then echo "FAIL: nn.Module's docstring as a description"; exit 1; fi
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
# Level-3 and defect handling (#32), where the fixtures have them: a network no simulator-sized set fits
# is imported with `full` only and gets `unsupported` on sim; KernelBench's defective problems are
# imported flagged and left out of the headline metrics unless asked; the report says what it covered.
resnet="$out/level3/kb2_tiny_resnet/problem.yaml"
[ -f "$resnet" ] || exit 0
grep -q '^  full:' "$resnet" && ! grep -q '^  small:' "$resnet" || { echo "FAIL: the network has a small set"; cat "$resnet"; exit 1; }
grep -q 'h0_input:' "$out/level3/kb3_gru_with_h0/problem.yaml" || { echo "FAIL: the GRU's h0 argument was not renamed"; exit 1; }
grep -q 'kind: stochastic' "$out/level1/kb5_noisy_identity/problem.yaml" || { echo "FAIL: dropout not flagged stochastic"; exit 1; }
grep -q 'kind: degenerate' "$out/level2/kb3_clamped_constant/problem.yaml" || { echo "FAIL: the clamped constant not flagged degenerate"; exit 1; }
grep -q 'einops by its definition' "$out/import-report.md" || "$python" -c 'import einops' 2>/dev/null || { echo "FAIL: no einops note"; exit 1; }
grep -q '| level3 | 7 | 7 | 100.0% | 0 | 1 | 0 |' "$out/import-report.md" || { echo "FAIL: level-3 row"; cat "$out/import-report.md"; exit 1; }
cands="$out/.coverage-candidates"
rm -rf "$cands" && mkdir -p "$cands/level3/kb6_einops_blocks" "$cands/level3/kb2_tiny_resnet" "$cands/level2/kb3_clamped_constant"
cp "$out/level3/kb6_einops_blocks/solutions/block_cumsum.cu" "$cands/level3/kb6_einops_blocks/"
sed 's/batch_size \* out_features/batch_size * num_classes/' > "$cands/level3/kb2_tiny_resnet/zeros.cu" <<'CU'
/*@cuset
launches:
  - kernel: fill
    grid: [ceil_div(batch_size * out_features, 128)]
    block: [128]
    args: [out, batch_size * out_features]
*/
extern "C" __global__ void fill(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.0f;
}
CU
cat > "$cands/level2/kb3_clamped_constant/constant.cu" <<'CU'
/*@cuset
launches:
  - kernel: fill
    grid: [ceil_div(batch_size * out_features, 128)]
    block: [128]
    args: [out, batch_size * out_features]
*/
extern "C" __global__ void fill(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.5f;
}
CU
"$cuset" eval --backend sim --problems "$out" --candidates "$cands" --out "$out/.coverage-run" --seed 5 --trials 2 --quiet --model m >/dev/null
"$python" - "$out/.coverage-run" <<'PY'
import json, sys
run = sys.argv[1]
results = {r["problem"]: r for r in map(json.loads, open(f"{run}/results.jsonl"))}
def need(cond, what):
    if not cond:
        print("FAIL:", what); sys.exit(1)
need(results["level3/kb6_einops_blocks"]["verdict"] == "correct", f"einops blocks: {results['level3/kb6_einops_blocks']}")
r = results["level3/kb2_tiny_resnet"]
need(r["verdict"] == "unsupported" and "no size set small enough to simulate" in r["reason"], f"resnet on sim: {r['verdict']} {r['reason']}")
need(results["level2/kb3_clamped_constant"]["verdict"] == "correct", "the constant kernel passes the degenerate problem (why it is flagged)")
s = json.load(open(f"{run}/summary.json"))
cov, overall = s["coverage"], s["models"]["m"]["overall"]
need(cov["levels"]["all"] == {"problems": 3, "flagged": 1, "unsupported": 1}, f"coverage {cov['levels']}")
need("level2/kb3_clamped_constant" in cov["flagged"] and not cov["include_defective"], f"flagged {cov}")
need(overall["problems"] == 2, f"the flagged problem counted: {overall}")
need("kernelbench" in cov["suites"], f"suites {cov['suites']}")
md = open(f"{run}/summary.md").read()
need("1 flagged defective" in md and "left out of the metrics" in md and "1 unsupported on this backend" in md, md[:800])
PY
"$cuset" report "$out/.coverage-run" --include-defective >/dev/null
"$python" -c "
import json, sys
s = json.load(open('$out/.coverage-run/summary.json'))
o = s['models']['m']['overall']
sys.exit(0 if o['problems'] == 3 and s['coverage']['include_defective'] else print('FAIL: --include-defective', o) or 1)"
# A larger bound gives the network a scaled-down `medium` set the CPU verifies it on.
"$cuset" import kernelbench "$root" --out "$out" --jobs 1 --quiet --only level3/2 --medium-max-gflop 1
grep -q '^  medium:' "$resnet" || { echo "FAIL: no medium set under a 1 GFLOP medium bound"; cat "$resnet"; exit 1; }
echo "level-3 and defect checks passed"
