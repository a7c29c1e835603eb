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
else
  echo "no $cuset: build first to carry the imported KernelBench fixtures (check.sh skips that step)"
fi

