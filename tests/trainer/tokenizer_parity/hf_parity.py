"""Token-for-token parity of `cuset tokenize` with Hugging Face `tokenizers` (the reference
implementation, from the project's pinned Python environment).

The reference library itself makes the tokenizer: a byte-level BPE in Qwen2's shape (NFC normaliser,
Qwen2's split regex, byte-level pre-tokenizer and decoder, ChatML special tokens), trained on the parity
corpus plus the CUDA toolkit's headers so that its merges cover code, whitespace runs, digits and CJK.
No weights or vocabularies are downloaded. Then every corpus line is encoded by both, and the ids must
be identical; so must the decoded text.

Usage: hf_parity.py CUSET CORPUS WORK_DIR [--repeat N]   (writes WORK_DIR/tokenizer.json)
Exit 77 (skipped) only when the interpreter has no `tokenizers`.
"""
import glob
import json
import os
import subprocess
import sys

try:
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
except ImportError:
    print(f"SKIP: {sys.executable} has no Hugging Face tokenizers (scripts/install-deps.sh installs it)")
    sys.exit(77)

QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def training_texts(corpus_lines):
    yield from corpus_lines
    headers = sorted(glob.glob("/usr/local/cuda/include/*.h"))[:40]
    for path in headers:
        try:
            with open(path, encoding="utf-8") as f:
                yield f.read()
        except (UnicodeDecodeError, OSError):
            continue


def make_tokenizer(corpus_lines, vocab_size=4000):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(training_texts(corpus_lines), trainer=trainer)
    return tok


def main():
    cuset, corpus, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    with open(corpus, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    tok = make_tokenizer(lines)
    path = os.path.join(work, "tokenizer.json")
    tok.save(path)
    want = [tok.encode(text, add_special_tokens=False).ids for text in lines]
    # Special tokens inside text are matched as added tokens by both.
    chat = "<|im_start|>user\nWrite a CUDA kernel.<|im_end|>\n<|im_start|>assistant\n__global__ void k() {}<|im_end|>"
    lines.append(chat)
    want.append(tok.encode(chat, add_special_tokens=False).ids)
    inputs = os.path.join(work, "inputs.jsonl")
    with open(inputs, "w", encoding="utf-8") as f:
        for text in lines:
            f.write(json.dumps(text, ensure_ascii=False) + "\n")
    p = subprocess.run([cuset, "tokenize", "--tokenizer", path, "--input", inputs, "--jsonl"], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        return 1
    got = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    failures = 0
    if len(got) != len(want):
        print(f"cuset wrote {len(got)} lines for {len(want)} inputs")
        return 1
    for i, (text, w, g) in enumerate(zip(lines, want, got)):
        if w != g:
            failures += 1
            print(f"line {i + 1} {text[:60]!r}:\n  tokenizers {w[:40]}\n  cuset      {g[:40]}")
        elif tok.decode(g, skip_special_tokens=False) != text and tok.normalizer.normalize_str(text) == text:
            failures += 1
            print(f"line {i + 1}: the ids do not decode back to the text")
    if failures:
        print(f"{failures} of {len(lines)} lines differ from Hugging Face tokenizers")
        return 1
    special = [tok.token_to_id(s) for s in SPECIAL]
    if not all(s in sum(got, []) for s in special[1:]):
        print("the chat line's special tokens were not matched as single ids")
        return 1
    print(f"{len(lines)} lines encoded identically to Hugging Face tokenizers (vocabulary {tok.get_vocab_size()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
