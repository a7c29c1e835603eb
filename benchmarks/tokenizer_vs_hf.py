"""Tokenizer throughput: `cuset tokenize` against Hugging Face `tokenizers` (the reference, Rust, from the
project's Python environment), side by side on the same tokenizer and corpora, in one run, with ratios.

The tokenizer is the parity test's (tests/trainer/tokenizer_parity/hf_parity.py: a Qwen2-shaped
byte-level BPE trained by `tokenizers` itself). Corpora: the parity corpus repeated (few distinct words:
the piece caches decide) and the CUDA toolkit's headers in 60-line chunks (many distinct words: the
pre-tokenizer and BPE decide). Encode-only throughput after loading, as a training run sees it, on one
thread and on all cores (tokenizers' encode_batch, cuset's --threads).

With --real: real models' tokenizer.json files instead (Qwen2.5, Llama 3.1, DeepSeek-V3,
DeepSeek-Coder: the packages of requirements-data.txt, as the parity test
tests/trainer/tokenizer_parity/real_tokenizers.py finds them), on the CUDA headers (.h, .hpp, .cuh under
the toolkit's include/, every level) cut at --mb MB, one thread each side, the ratio printed per file.

Usage: .venv/bin/python benchmarks/tokenizer_vs_hf.py [--cuset build/default/cli/cuset] [--repeat 3000]
       .venv/bin/python benchmarks/tokenizer_vs_hf.py --real [--mb 9]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "trainer", "tokenizer_parity"))
from hf_parity import make_tokenizer  # noqa: E402
import real_tokenizers  # noqa: E402


def cuda_header_chunks():
    for path in sorted(glob.glob("/usr/local/cuda/include/*.h")) + sorted(glob.glob("/usr/local/cuda/include/*.hpp")):
        try:
            lines = open(path, encoding="utf-8").read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        for i in range(0, len(lines), 60):
            yield "\n".join(lines[i:i + 60])


def hf_rate(tok, texts, threads):
    # Read once, when tokenizers starts its pool at the first encode_batch; the one-thread case never uses it.
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    start = time.perf_counter()
    # The ids as Python lists and nothing more: cuset's --stats times encoding, not printing.
    if threads == 1:
        out = [tok.encode(t, add_special_tokens=False).ids for t in texts]
    else:
        out = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    seconds = time.perf_counter() - start
    assert len(out) == len(texts)
    return sum(len(t.encode()) for t in texts) / 1e6 / seconds


def cuset_rate(cuset, tokenizer, path, threads):
    args = [cuset, "tokenize", "--tokenizer", tokenizer, "--input", path, "--jsonl", "--stats"] + (["--threads", "1"] if threads == 1 else [])
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    return float(re.search(r"([0-9.]+) MB/s", p.stderr).group(1))


def real_files(cuset, megabytes):
    from tokenizers import Tokenizer
    texts = list(real_tokenizers.cuda_header_chunks(limit_bytes=int(megabytes * 1e6)))
    mb = sum(len(t.encode()) for t in texts) / 1e6
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "headers.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(t) + "\n" for t in texts)
        found = real_tokenizers.tokenizer_files(scratch)
        for name in ("qwen2.5", "llama3.1", "deepseek-v3", "deepseek-coder"):
            if name not in found:
                print(f"{name}: not installed (requirements-data.txt)")
                continue
            tok = Tokenizer.from_file(found[name])
            hf, ours = hf_rate(tok, texts, 1), cuset_rate(cuset, found[name], path, 1)
            print(f"{name:<15} CUDA headers {mb:5.1f} MB, 1 thread: tokenizers {hf:6.2f} MB/s  cuset {ours:6.2f} MB/s  ({ours / hf:.2f}x)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cuset", default="build/default/cli/cuset")
    ap.add_argument("--repeat", type=int, default=3000)
    ap.add_argument("--real", action="store_true", help="real models' tokenizer.json files, CUDA headers, one thread")
    ap.add_argument("--mb", type=float, default=9.0, help="--real: megabytes of CUDA headers")
    args = ap.parse_args()
    if args.real:
        real_files(args.cuset, args.mb)
        return
    corpus = os.path.join(here, "..", "tests", "trainer", "tokenizer_parity", "corpus.jsonl")
    parity = [json.loads(line) for line in open(corpus, encoding="utf-8") if line.strip()]
    with tempfile.TemporaryDirectory() as scratch:
        tok = make_tokenizer(parity)
        tokenizer = os.path.join(scratch, "tokenizer.json")
        tok.save(tokenizer)
        for name, texts in (("parity", parity * args.repeat), ("headers", list(cuda_header_chunks()))):
            path = os.path.join(scratch, name + ".jsonl")
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(json.dumps(t) + "\n" for t in texts)
            hf1, c1 = hf_rate(tok, texts, 1), cuset_rate(args.cuset, tokenizer, path, 1)
            hfn, cn = hf_rate(tok, texts, os.cpu_count()), cuset_rate(args.cuset, tokenizer, path, 0)
            mb = sum(len(t.encode()) for t in texts) / 1e6
            print(f"{name:<8} {mb:6.1f} MB  1 thread: tokenizers {hf1:6.2f} MB/s  cuset {c1:6.2f} MB/s ({c1 / hf1:.2f}x)   "
                  f"all cores: tokenizers {hfn:6.2f} MB/s  cuset {cn:6.2f} MB/s ({cn / hfn:.2f}x)")


if __name__ == "__main__":
    main()
