#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU, CUDA 13 and a Python `torch` 2.4+ with CUDA, and no
# network or apt (the device tool's H200). That machine cannot receive the project's .venv (5.5 GB; the
# carry limit is 64 MiB), so its own python3 and torch stand in for it: CUSET_PYTHON and Torch_DIR point
# at them, and the first lines of the output say which torch was found. It builds CuSeT against that torch's LibTorch, runs the GPU
# tests, evaluates the bundled suite's good solutions at `full` sizes with the cuda backend, and prints
#   problem | verdict | reference µs | candidate µs | speedup | relative spread
# plus the measured device-to-device bandwidth, and the agreement corpus judged on the GPU and on the
# simulator side by side (file | rule expects | GPU | sim | agree). Budget: under 8 minutes.
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
  # The machine's own libcurl (ABI-stable across 7.x/8.x) with Debian's headers: its TLS and LDAP
  # libraries are the ones that runtime was built against, which Debian's libcurl4 may not find there.
  system_curl="$(ldconfig -p | awk '/libcurl\.so\.4 .*x86-64/ {print $NF; exit}')"
  if [[ -n "$system_curl" ]]; then
    rm -f "$prefix"/usr/lib/x86_64-linux-gnu/libcurl.so*
    ln -s "$system_curl" "$prefix/usr/lib/x86_64-linux-gnu/libcurl.so"
  fi
fi
export CMAKE_PREFIX_PATH="$prefix/usr:${CMAKE_PREFIX_PATH:-}"
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export CPATH="$prefix/usr/include:${CPATH:-}"
# $TORCH_DIR overrides the pip torch (a dry run on a machine without a GPU: the checkout's .venv torch).
if [[ -n "${TORCH_DIR:-}" ]]; then
  torch_dir="$TORCH_DIR"
else
  torch_dir="$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "share/cmake/Torch"))')"
  torch_lib="$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
  # The torch wheel's own CUDA libraries (site-packages/nvidia/*/lib) before the toolkit's copies of the
  # same sonames, as the build's run path orders them (docs/dependencies.md).
  torch_cuda_libs="$(python3 -c 'import glob, os, torch; print(":".join(glob.glob(os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "*", "lib"))))')"
  export LD_LIBRARY_PATH="$torch_lib:${torch_cuda_libs:+$torch_cuda_libs:}$LD_LIBRARY_PATH"
  log "torch $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "(no GPU visible)")')"
fi
# The toolkit last: a torch wheel's own CUDA libraries (above) win over its copies of the same sonames.
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
# LibTorch's CMake config looks for nvcc and, without an architecture list, compiles and runs a probe.
export PATH="/usr/local/cuda/bin:$PATH" TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"
# A CMake 4 there would refuse package configs written for CMake < 3.5; this lets them through.
export CMAKE_POLICY_VERSION_MINIMUM=3.5
log "Torch_DIR=$torch_dir"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true

# 2. Build (Release, GPU pieces only need the toolkit headers; the driver is loaded at run time).
log "configure"
cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release -DTorch_DIR="$torch_dir" -DCUSET_PYTHON="$(command -v python3)" \
  -DCMAKE_PREFIX_PATH="$prefix/usr" -DCUDAToolkit_ROOT=/usr/local/cuda > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
log "build"
# Only what the check runs: the whole tree would spend the time budget on trainer tests and benchmarks.
cmake --build build/device -j "$(nproc)" --target cuset test_cuda_backend test_cuda_fake_driver cuset_fake_libcuda test_llama_model -- -k 0 \
  > "$out/build.log" 2>&1 || { grep -m 20 -A5 "error" "$out/build.log"; exit 1; }
cuset=build/device/cli/cuset
if ldd "$cuset" | grep "not found"; then log "cuset cannot start: libraries above not found"; exit 1; fi

# 3. GPU tests: the cuda label (driver, backend on the GPU, the fake-driver run) and the model on CUDA.
log "GPU tests"
ctest --test-dir build/device -L cuda --output-on-failure > "$out/ctest.log" 2>&1
ctest --test-dir build/device -R "CausalLm.OnCuda|CausalLm.ScaledDotProduct|CausalLm.PaddedRows|CausalLm.Bf16Autocast" --output-on-failure >> "$out/ctest.log" 2>&1
"$cuset" doctor > "$out/doctor.txt" 2>&1; sed 's/^/  /' "$out/doctor.txt"
grep -E "tests passed|Failed|Skipped|\*\*\*" "$out/ctest.log" | head -20

# 4. The suite's good solutions at full sizes, on the GPU, timed.
log "suite at full sizes"
mkdir -p "$out/cands"
for f in problems/level*/*/solutions/*.cu; do
  case "$(basename "$f")" in bad_*) continue ;; esac
  dest="$out/cands/$(dirname "${f#problems/}")"
  mkdir -p "$dest" && cp "$f" "$dest/"
done
# --jobs 4: each job holds a `full` region (up to ~4 GiB) several times over on the host (inputs,
# region, reference outputs); 16 at once could exhaust the machine's 128 GiB. Results are written as
# they finish, so a run cut by the timeout still gives its table.
timeout 240 "$cuset" eval --backend cuda --sizes full --trials 1 --max-timing-seconds 1 --jobs 4 --candidates "$out/cands" \
  --out "$out/run" --seed 1 -q > "$out/eval.log" 2>&1
log "eval exit $?"
tail -3 "$out/eval.log"

# 4b. An imported KernelBench suite whose archives the project's torch wrote (fetch-deps.sh), judged and timed
# with this LibTorch: correct/wrong_answer as expected shows that it loads and runs those archives.
kb_suite=.deps/kernelbench-fixture-suite
if [[ -d "$kb_suite" ]]; then
  log "imported KernelBench fixtures (archives written by the project's torch)"
  timeout 120 "$cuset" eval --backend cuda --sizes full --trials 1 --max-timing-seconds 1 --jobs 4 --problems "$kb_suite" \
    --candidates "$kb_suite" --out "$out/kb-run" --seed 1 -q > "$out/kb-eval.log" 2>&1
  log "kernelbench eval exit $?"
  tail -3 "$out/kb-eval.log"
fi

# 4c. The agreement corpus (tests/agreement: kernels whose GPU verdict follows from a CUDA rule),
# judged on this GPU and on the simulator side by side: the first run on a GPU measures agreement.
log "agreement corpus: cuda and sim"
for backend in cuda sim; do
  timeout 90 "$cuset" eval --backend "$backend" --sizes small --trials 2 --max-timing-seconds 0.2 --jobs 4 \
    --candidates tests/agreement --out "$out/agree-$backend" --seed 17 -q > "$out/agree-$backend.log" 2>&1
  log "agreement $backend exit $?"
done
python3 - "$out" <<'PY'
import json, os, re, sys
out = sys.argv[1]
def verdicts(backend):
    path = os.path.join(out, f"agree-{backend}", "results.jsonl")
    rows = [json.loads(l) for l in open(path) if l.strip()] if os.path.exists(path) else []
    return {os.path.basename(r.get("origin", "")): r for r in rows}
gpu, sim = verdicts("cuda"), verdicts("sim")
print(f"{'agreement file':48} {'rule expects':15} {'GPU':15} {'sim':15} agree")
agree = total = 0
for root, _, files in sorted(os.walk("tests/agreement")):
    for f in sorted(x for x in files if x.endswith(".cu")):
        m = re.search(r"// @expect: (\w+)", open(os.path.join(root, f)).read())
        want = m.group(1) if m else "?"
        g = gpu.get(f, {}).get("verdict", "-"); s = sim.get(f, {}).get("verdict", "-")
        total += 1; agree += g == s
        verdict = "no GPU result" if g == "-" else "yes" if g == s else "NO  " + gpu.get(f, {}).get("reason", "")[:50]
        print(f"{f:48} {want:15} {g:15} {s:15} {verdict}")
print(f"sim agrees with the GPU on {agree}/{total}")
PY

# 5. The tables.
for run_dir in "$out/run" "$out/kb-run"; do
[[ -d "$run_dir" ]] || continue
python3 - "$run_dir" <<'PY'
import json, sys, statistics, os
run = sys.argv[1]
if not os.path.exists(os.path.join(run, "run.json")):
    sys.exit("no evaluation results: see eval.log above")
results = os.path.join(run, "results.jsonl")
rows = [json.loads(l) for l in open(results) if l.strip()] if os.path.exists(results) else []
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
done
log "done"
