#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU, CUDA 13 and a Python `torch` 2.4+ with CUDA, and no
# network or apt (the device tool's H100/H200). That machine cannot receive the project's .venv (5.5 GB;
# the carry limit is 64 MiB), so its own python3 and torch stand in for it: CUSET_PYTHON and Torch_DIR
# point at them, and the first lines of the output say which torch was found.
#
# Stages, each with its own time limit, each printing its table as soon as it is done; a stage that
# fails or runs out of time does not stop the next (a lent device has 15 minutes in all, the whole stays
# under 10):
#   build      (150 s) CuSeT against that torch's LibTorch, only the targets the stages need
#   gpu_tests  (60 s)  the `cuda` ctest label (driver, the backend on the GPU, the fake-driver runs),
#                      the model on CUDA, `cuset doctor`
#   suite      (150 s) the bundled suite's good solutions at `full` sizes on the GPU, timed:
#                      problem | verdict | reference us | candidate us | speedup | relative spread
#   agreement  (100 s) the agreement corpus judged on the GPU and on the simulator side by side
#   kernelbench (90 s) KernelBench fixtures (archives the project's torch wrote) and 20 KernelBench
#                      level-1 solutions (.deps, from fetch-deps.sh) judged and timed on the GPU, by
#                      CuSeT and by KernelBench's own cuda_event method side by side (--kernelbench-timing)
#   triton     (50 s)  the Triton fixtures (tests/data/kernelbench_modelnew/level1/*/triton_*.py, copied
#                      into .deps by fetch-deps.sh) judged and timed on the GPU: Triton's code for the
#                      GPU's own architecture (sm_90a on Hopper), compiled here as Triton compiles it there
#
# Here (once per session): bash benchmarks/device/fetch-deps.sh    (fills .deps/)
# Then, with the device tool: run  bash benchmarks/device/check.sh   carrying [".deps"]
# A dry run here (ctest `device_check_dry_run`): CUSET_CHECK_BUILD_DIR=build/default reuses a build,
# CUSET_CHECK_DRY=1 keeps the GPU-test stage to the driver's own tests; every stage runs its logic and
# stops where the GPU is missing, and every table prints.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-/tmp/cuset-device-check}"
mkdir -p "$out"
start=${CUSET_CHECK_START:-$(date +%s)}
export CUSET_CHECK_START=$start
log() { echo "[check $(( $(date +%s) - start ))s] $*"; }


self="$root/benchmarks/device/check.sh"
build="${CUSET_CHECK_BUILD_DIR:-build/device}"
cuset="$build/cli/cuset"
export OUT="$out"

stage_build() {
  if [[ -n "${CUSET_CHECK_BUILD_DIR:-}" ]]; then
    log "reusing the build in $build"
  else
    log "configure"
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTorch_DIR="$torch_dir" -DCUSET_PYTHON="$(command -v python3)" \
      -DCMAKE_PREFIX_PATH="$prefix/usr" -DCUDAToolkit_ROOT=/usr/local/cuda > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; return 1; }
    log "build"
    # Only what the stages run: the whole tree would spend the time budget on trainer tests and benchmarks.
    cmake --build "$build" -j "$(nproc)" --target cuset test_cuda_backend test_cuda_fake_driver cuset_fake_libcuda test_cupti_attribution \
      cuset_fake_libcupti test_llama_model -- -k 0 > "$out/build.log" 2>&1 || { grep -m 20 -A5 "error" "$out/build.log"; return 1; }
  fi
  if [[ ! -x "$cuset" ]]; then log "no $cuset"; return 1; fi
  if ldd "$cuset" | grep "not found"; then log "cuset cannot start: libraries above not found"; return 1; fi
}

stage_gpu_tests() {
  if [[ -n "${CUSET_CHECK_DRY:-}" ]]; then
    # The test binaries themselves: a dry run is itself a ctest test, and a nested ctest would share its log.
    { "$build/tests/test_cuda_backend" && "$build/tests/test_cupti_attribution"; } > "$out/ctest.log" 2>&1 \
      && echo "dry run: driver and CUPTI tests passed" || echo "dry run: driver or CUPTI tests FAILED (see $out/ctest.log)"
  else
    # The cuda label (driver, backend on the GPU, the fake-driver runs), the CUPTI double, the model on CUDA.
    ctest --test-dir "$build" -L cuda --output-on-failure > "$out/ctest.log" 2>&1
    ctest --test-dir "$build" -R "CuptiAttribution|CausalLm.OnCuda|CausalLm.ScaledDotProduct|CausalLm.PaddedRows|CausalLm.Bf16Autocast" \
      --output-on-failure >> "$out/ctest.log" 2>&1
  fi
  grep -E "tests passed|Failed|Skipped|\*\*\*" "$out/ctest.log" | head -20
  "$cuset" doctor > "$out/doctor.txt" 2>&1
  sed 's/^/  /' "$out/doctor.txt"
}

stage_suite() {
  rm -rf "$out/cands" "$out/run"
  mkdir -p "$out/cands"
  for f in problems/level*/*/solutions/*.cu; do
    case "$(basename "$f")" in bad_*) continue ;; esac
    dest="$out/cands/$(dirname "${f#problems/}")"
    mkdir -p "$dest" && cp "$f" "$dest/"
  done
  # --jobs 4: each job holds a `full` region (up to ~4 GiB) several times over on the host (inputs,
  # region, reference outputs); 16 at once could exhaust the machine's 128 GiB. Results are written as
  # they finish, and the table is printed even when the stage's limit cuts the run.
  trap 'python3 benchmarks/device/check_tables.py suite "$out/run"' EXIT
  "$cuset" eval --backend cuda --sizes full --trials 1 --max-timing-seconds 1 --jobs 4 --candidates "$out/cands" \
    --out "$out/run" --seed 1 -q > "$out/eval.log" 2>&1
  log "eval exit $?"
  tail -3 "$out/eval.log"
}

stage_agreement() {
  # tests/agreement: kernels whose GPU verdict follows from a CUDA rule, judged on this GPU and on the
  # simulator side by side: the first run on a GPU measures agreement.
  rm -rf "$out/agree-cuda" "$out/agree-sim"
  trap 'python3 benchmarks/device/check_tables.py agreement "$out"' EXIT
  for backend in cuda sim; do
    timeout 45 "$cuset" eval --backend "$backend" --sizes small --trials 2 --max-timing-seconds 0.2 --jobs 4 \
      --candidates tests/agreement --out "$out/agree-$backend" --seed 17 -q > "$out/agree-$backend.log" 2>&1
    log "agreement $backend exit $?"
  done
}

# judge_deps NAME SUITE CANDIDATES: the candidates of .deps/CANDIDATES judged and timed on the GPU against
# .deps/SUITE (KernelBench's cuda_event timing beside CuSeT's), the run in $out/NAME, its table printed
# (or the table script's line saying why not); 1 only when fetch-deps.sh did not make them.
judge_deps() {
  local name="$1" suite=".deps/$2" cands=".deps/$3"
  [[ -d "$suite" && -d "$cands" ]] || { log "no $suite or $cands (fetch-deps.sh makes them)"; return 1; }
  rm -rf "$out/$name"
  timeout 40 "$cuset" eval --backend cuda --sizes full --trials 1 --max-timing-seconds 1 --jobs 4 --problems "$suite" \
    --candidates "$cands" --out "$out/$name" --seed 1 --kernelbench-timing -q > "$out/$name.log" 2>&1
  log "$name exit $?"
  tail -3 "$out/$name.log"
  python3 benchmarks/device/check_tables.py suite "$out/$name" || true
}

stage_kernelbench() {
  # KernelBench fixtures imported with the project's torch (archives written by 2.15): correct and
  # wrong_answer as expected show that this LibTorch loads and runs them. Then 20 real level-1
  # solutions (CUDA-L1's, copied into .deps by fetch-deps.sh with the problems they answer).
  local ran=0
  for pair in "kernelbench-fixture-suite:kernelbench-fixture-suite" "kernelbench-l1-suite:kernelbench-l1-solutions"; do
    judge_deps "${pair%%:*}" "${pair%%:*}" "${pair##*:}" && ran=1
  done
  [[ $ran == 1 ]]
}

stage_triton() {
  # Expected as on the simulator (the fixtures' `# expect:` lines) except where only the simulator can
  # see it: a 1-byte overread (triton_unmasked_tail) and a race between programs (triton_programs_race)
  # may pass on a GPU. The verdicts and timings are the table, then each autotuned launch's configurations
  # as the GPU worker timed them (triton_autotuned); the reasons are in the run folder.
  python3 -c "import triton; print('triton', triton.__version__)" || { log "this torch has no Triton"; return 1; }
  judge_deps triton kernelbench-fixture-suite kernelbench-triton-candidates
}

if [[ "${1:-}" == --stage ]]; then
  "stage_$2"
  exit $?
fi

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
export torch_dir prefix
log "Torch_DIR=$torch_dir"
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
else
  log "no nvidia-smi on this machine"
fi


# 2. The stages, each in its own process under its own limit.
run_stage() {
  local name="$1" limit="$2"
  log "stage $name (limit ${limit} s)"
  timeout --kill-after=10 "$limit" bash "$self" --stage "$name"
  local rc=$?
  if [[ $rc == 124 || $rc == 137 ]]; then log "stage $name: out of time after ${limit} s"; else log "stage $name: exit $rc"; fi
  return $rc
}
if run_stage build 150; then
  run_stage gpu_tests 60
  run_stage suite 150
  run_stage agreement 100
  run_stage kernelbench 90
  run_stage triton 50
else
  log "no usable build: the other stages need cuset"
fi
log "done"
