#!/usr/bin/env bash
# Downloads (here, where apt works) the Debian packages that the GPU machine lacks into .deps/, which
# is git-ignored and carried to the device machine (device tool: carry [".deps"]). check.sh unpacks
# them into a private prefix there. The .debs stay compressed: about 40 MiB, under the 64 MiB carry limit.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$root/.deps"
grep -qx '/.deps/' "$root/.git/info/exclude" 2>/dev/null || echo '/.deps/' >> "$root/.git/info/exclude"
packages=(
  libyaml-cpp-dev libyaml-cpp0.7 libfmt-dev libfmt9 nlohmann-json3-dev libcli11-dev libxxhash-dev libxxhash0
  libboost-context1.74-dev libboost-context1.74.0 libboost1.74-dev libseccomp-dev libseccomp2
  libicu-dev libicu72 libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian
  zlib1g-dev
  # libcurl (OpenAI-compatible endpoints). check.sh links the GPU machine's own libcurl.so.4 where it has
  # one; Debian's runtime and the libraries it needs that an Ubuntu image may lack are the fallback.
  libcurl4-openssl-dev libcurl4 libldap-2.5-0 libsasl2-2 librtmp1 libssh2-1 libpsl5 libnghttp2-14 libbrotli1 libidn2-0 libunistring2
)
apt-get update -qq
cd "$root/.deps"
apt-get download "${packages[@]}"
du -sh "$root/.deps"
# KernelBench-format fixtures imported here with the project's torch (.venv, 2.15), so that check.sh
# can confirm that the GPU machine's LibTorch loads and runs archives written by it (docs/kernelbench.md).
cuset="$root/build/default/cli/cuset"
if [[ -x "$cuset" ]]; then
  suite="$root/.deps/kernelbench-fixture-suite"
  "$cuset" import kernelbench "$root/tests/data/kernelbench_fixture" --out "$suite" --jobs 2 --quiet
  cp -rL "$root/tests/data/kernelbench_solutions/." "$suite/"
  du -sh "$suite"
  # The Triton fixtures, as candidates of the same problems (check.sh's `triton` stage).
  triton="$root/.deps/kernelbench-triton-candidates"
  rm -rf "$triton"
  for f in "$root"/tests/data/kernelbench_modelnew/level1/*/triton_*.py; do
    problem="$triton/level1/$(basename "$(dirname "$f")")"
    mkdir -p "$problem" && cp "$f" "$problem/"
  done
else
  echo "no $cuset: build first to carry the imported KernelBench fixtures (check.sh skips that step)"
fi

# 20 real KernelBench level-1 solutions that compile CUDA (CUDA-L1's, ../shared/kernelbench-solutions,
# GPL-3.0: carried to the device as test data in the ignored .deps, never committed) and the problems
# they answer, imported here from ../shared/kernelbench: check.sh's `kernelbench` stage judges and times
# them on the GPU.
shared="$root/../shared"
if [[ -x "$cuset" && -d "$shared/kernelbench-solutions/cuda-l1/level1" && -d "$shared/kernelbench/KernelBench" ]]; then
  solutions="$root/.deps/kernelbench-l1-solutions"
  rm -rf "$solutions" "$root/.deps/kernelbench-l1-suite"
  mkdir -p "$solutions"
  only=()
  for f in $(grep -l load_inline "$shared"/kernelbench-solutions/cuda-l1/level1/*.py | head -20); do
    n=$((10#$(basename "$f" .py)))
    cp "$f" "$solutions/level_1_problem_${n}_sample_0_kernel.py"
    only+=("level1/$n")
  done
  "$cuset" import kernelbench "$shared/kernelbench" --out "$root/.deps/kernelbench-l1-suite" --levels 1 --only "${only[@]}" --jobs 2 --quiet
  du -sh "$solutions" "$root/.deps/kernelbench-l1-suite"
else
  echo "no $cuset or ../shared: the kernelbench stage of check.sh runs the fixtures only"
fi
