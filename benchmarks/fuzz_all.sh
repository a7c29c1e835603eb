#!/usr/bin/env bash
# Fuzzes every target in tests/fuzz for MINUTES each (default 10), two at a time, then merges the
# inputs that add coverage into the committed corpora, minimized (benchmarks/fuzz_minimize.sh). Crashes are left as crash-* files in
# build/fuzz-findings/<target>/ and listed at the end. Usage: benchmarks/fuzz_all.sh [MINUTES]
set -euo pipefail
minutes="${1:-10}"
cd "$(dirname "$0")/.."
targets=(problem_yaml manifest int_expr candidate_jsonl results safetensors tokenizer_json train_config inline_ptx)
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]/#/fuzz_}"
run() {
  local t="$1"
  mkdir -p "build/fuzz-corpus/$t" "build/fuzz-findings/$t"
  (cd "build/fuzz-findings/$t" &&
   ../../fuzz/tests/fuzz/"fuzz_$t" -max_total_time=$((minutes * 60)) -timeout=5 -max_len=8192 -rss_limit_mb=4096 \
     ../../fuzz-corpus/"$t" ../../../tests/fuzz/corpus/"$t" > log.txt 2>&1 || true)
  echo "$t: $(grep -E '^#[0-9]+.*DONE|^Done' "build/fuzz-findings/$t/log.txt" | tail -1)"
}
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  run "${targets[i]}" &
  if ((i + 1 < ${#targets[@]})); then run "${targets[i + 1]}" & fi
  wait
done
for t in "${targets[@]}"; do
  build/fuzz/tests/fuzz/"fuzz_$t" -merge=1 -max_len=8192 "tests/fuzz/corpus/$t" "build/fuzz-corpus/$t" > /dev/null 2>&1 || true
done
benchmarks/fuzz_minimize.sh "${targets[@]}"  # back to a set cover of the edges, so the committed corpora stay small
echo "crashes:"; ls build/fuzz-findings/*/crash-* build/fuzz-findings/*/timeout-* build/fuzz-findings/*/oom-* 2>/dev/null || echo "  none"
