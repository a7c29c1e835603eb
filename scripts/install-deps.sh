#!/usr/bin/env bash
# Installs what CuSeT needs to build and test on Debian 12, and nothing that is already there.
# Idempotent and quick when everything is present. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config
  libtorch-dev            # LibTorch 1.13 (CPU); a CUDA LibTorch 2.x is used instead via -DTorch_DIR
  libgloo-dev             # headers that LibTorch's c10d ProcessGroupGloo.hpp includes (data-parallel cuset train)
  libopenblas0-pthread    # without it LibTorch's fp32 matmul falls back to reference BLAS (~24x slower)
  libyaml-cpp-dev libfmt-dev nlohmann-json3-dev libcli11-dev libxxhash-dev
  libboost-context-dev    # fibers for the CPU simulator
  libseccomp-dev          # system-call allow-list for sandboxed simulator workers
  libicu-dev              # Unicode regex and NFC for the tokenizer
  libcurl4-openssl-dev    # HTTP(S) client for OpenAI-compatible model endpoints
  zlib1g-dev              # gzip of the sources embedded in leaderboard.html
  openssl                 # the HTTPS endpoint test makes a self-signed certificate
  python3-torch           # an independent Python forward pass that the C++ model is tested against; `cuset import kernelbench`
  libgtest-dev libgmock-dev libbenchmark-dev
  chromium                # headless browser test of report.html
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

# The CUDA toolkit (NVRTC, headers) is not a Debian package here; it must be at /usr/local/cuda or
# wherever CUDAToolkit_ROOT / CUDA_PATH points.
cuda_root="${CUDAToolkit_ROOT:-${CUDA_PATH:-/usr/local/cuda}}"
if [[ ! -f "$cuda_root/include/nvrtc.h" ]]; then
  echo "install-deps: error: no CUDA toolkit at $cuda_root (need include/nvrtc.h and lib64/libnvrtc.so);" \
       "install CUDA 12 or 13 there or set CUDAToolkit_ROOT" >&2
  exit 1
fi

# Front-end assets inlined into report.html (pinned in reports/package.json and its lockfile).
# Without them reports still render, with a notice and unhighlighted source.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -f "$repo_root/reports/node_modules/@highlightjs/cdn-assets/highlight.min.js" ]]; then
  echo "install-deps: report assets present"
elif command -v npm >/dev/null 2>&1; then
  echo "install-deps: installing report assets (npm ci in reports/)"
  (cd "$repo_root/reports" && npm ci --no-audit --no-fund --loglevel=error) ||
    echo "install-deps: warning: npm ci failed; report.html will render without syntax highlighting" >&2
else
  echo "install-deps: warning: npm not found; report.html will render without syntax highlighting" >&2
fi
