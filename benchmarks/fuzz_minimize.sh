#!/usr/bin/env bash
# Shrinks the committed corpora to a set cover of their edge coverage (libFuzzer -set_cover_merge), keeping
# every named input (seeds and the inputs of fixed bugs; libFuzzer's own are named by their SHA-1).
# Needs the fuzz build: cmake --preset fuzz && cmake --build --preset fuzz. Usage: benchmarks/fuzz_minimize.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(problem_yaml manifest int_expr candidate_jsonl results safetensors tokenizer_json train_config inline_ptx)
for t in "${targets[@]}"; do
  corpus="tests/fuzz/corpus/$t" min="build/fuzz-min/$t"
  rm -rf "$min" && mkdir -p "$min"
  build/fuzz/tests/fuzz/"fuzz_$t" -set_cover_merge=1 -use_counters=0 -max_len=8192 "$min" "$corpus" > "build/fuzz-min/$t.log" 2>&1
  find "$corpus" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
  find "$min" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -exec cp {} "$corpus/" \;
  echo "$t: $(ls "$corpus" | wc -l) inputs, $(du -sh --apparent-size "$corpus" | cut -f1)"
done
