#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU, CUDA 13 and a Python `torch` 2.x with CUDA, and no
# network or apt (the device tool's H200). It builds CuSeT against that torch's LibTorch, runs the GPU
# tests, evaluates the bundled suite's good solutions at `full` sizes with the cuda backend, and prints
#   problem | verdict | reference µs | candidate µs | speedup | relative spread
# plus the measured device-to-device bandwidth. Budget: under 8 minutes.
#
# Here (once per session): bash benchmarks/device/fetch-deps.sh    (fills .deps/ with Debian .debs)
# Then, with the device tool: run  bash benchmarks/device/check.sh   carrying [".deps"]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/cuset-device-check}"
mkdir -p "$out"
start=$(date +%s)
log() { echo "[check $(( $(date +%s) - start ))s] $*"; }

# 1. Dependencies: Debian packages unpacked into a private prefix (never into /).
prefix=/tmp/cuset-deps
if [[ -d .deps ]]; then
  mkdir -p "$prefix"
  for deb in .deps/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
fi
export CMAKE_PREFIX_PATH="$prefix/usr:${CMAKE_PREFIX_PATH:-}"
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export CPATH="$prefix/usr/include:${CPATH:-}"
torch_dir="$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "share/cmake/Torch"))')"
torch_lib="$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
export LD_LIBRARY_PATH="$torch_lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH"
log "torch $(python3 -c 'import torch; print(torch.__version__, torch.cuda.get_device_name(0))'), Torch_DIR=$torch_dir"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true

# 2. Build (Release, GPU pieces only need the toolkit headers; the driver is loaded at run time).
log "configure"
cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release -DTorch_DIR="$torch_dir" \
  -DCMAKE_PREFIX_PATH="$prefix/usr" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
log "build"
cmake --build build/device -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -m 20 -A5 "error" "$out/build.log"; exit 1; }
cuset=build/device/cli/cuset

# 3. GPU tests (labels cuda, e2e for the CLI's cuda path).
log "GPU tests"
ctest --test-dir build/device -L cuda --output-on-failure > "$out/ctest.log" 2>&1
tail -5 "$out/ctest.log"

# 4. The suite's good solutions at full sizes, on the GPU, timed.
log "suite at full sizes"
mkdir -p "$out/cands"
for f in problems/level*/*/solutions/*.cu; do
  case "$(basename "$f")" in bad_*) continue ;; esac
  dest="$out/cands/$(dirname "${f#problems/}")"
  mkdir -p "$dest" && cp "$f" "$dest/"
done
timeout 300 "$cuset" eval --backend cuda --sizes full --trials 1 --max-timing-seconds 1 --candidates "$out/cands" \
  --out "$out/run" --seed 1 -q > "$out/eval.log" 2>&1
log "eval exit $?"
tail -3 "$out/eval.log"

# 5. The table.
python3 - "$out/run" <<'PY'
import json, sys, statistics, os
run = sys.argv[1]
rows = [json.loads(l) for l in open(os.path.join(run, "results.jsonl")) if l.strip()]
info = json.load(open(os.path.join(run, "run.json")))
dev = info.get("cuda", {}).get("device", {})
print(f"device: {dev.get('name')}  SMs {dev.get('sm_count')}  measured D2D bandwidth {dev.get('measured_bandwidth_gbs', 0):.0f} GB/s "
      f"(theoretical {dev.get('theoretical_bandwidth_gbs', 0):.0f})  references on {info.get('cuda', {}).get('references_on')}")
print(f"{'problem':34} {'verdict':15} {'ref us':>10} {'cand us':>10} {'speedup':>8} {'spread':>7}")
for r in rows:
    t = r.get("timing", {})
    cand = t.get("median_ms"); ref = t.get("reference_median_ms")
    s = t.get("samples_ms") or []
    spread = statistics.pstdev(s) / statistics.mean(s) if len(s) > 1 and statistics.mean(s) > 0 else float("nan")
    f = lambda v: f"{v * 1000:10.1f}" if v else f"{'-':>10}"
    sp = f"{t['speedup']:8.2f}" if "speedup" in t else f"{'-':>8}"
    print(f"{r['problem']:34} {r['verdict']:15} {f(ref)} {f(cand)} {sp} {spread:7.2%}  {r.get('reason', '')[:60]}")
PY
log "done"
