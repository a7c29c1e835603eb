#!/usr/bin/env python3
"""Judges a corpus of real KernelBench solutions against an imported suite and prints the verdicts per
level (the measurement of issue #46: a solution a GPU judged correct should be `correct` here unless
its kernel is wrong).

The corpus is a folder `levelN/NNN.py` (NNN: the KernelBench problem number, the number before the
first `_` of the problem's file name), as ../shared/kernelbench-solutions/cuda-l1 is. Each file is laid
out as a candidate of the imported problem it answers, judged with `cuset eval`, and counted.

usage: kernelbench_corpus.py CUSET SUITE CORPUS OUT [--backend sim] [--compare OTHER_RESULTS.jsonl] [--kernelbench-gpu ampere]
  SUITE  a suite imported with `cuset import kernelbench` (levels 1-3)
  OUT    a work folder: OUT/candidates, OUT/run (results.jsonl, report)
  --compare  an earlier results.jsonl of the same corpus: prints what changed, per solution
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("cuset")
ap.add_argument("suite")
ap.add_argument("corpus")
ap.add_argument("out")
ap.add_argument("--backend", default="sim")
ap.add_argument("--seed", default="7")
ap.add_argument("--compare", default=None)
ap.add_argument("--kernelbench-gpu", default="ampere", help="the GPU class kernelbench_correct predicts (CUDA-L1's were judged on an A100)")
args = ap.parse_args()

candidates = os.path.join(args.out, "candidates")
shutil.rmtree(candidates, ignore_errors=True)
missing = []
for level in sorted(os.listdir(args.corpus)):
    if not re.fullmatch(r"level\d+", level) or not os.path.isdir(os.path.join(args.suite, level)):
        continue
    problems = {int(m.group(1)): d for d in os.listdir(os.path.join(args.suite, level)) if (m := re.match(r"kb(\d+)_", d))}
    for f in sorted(os.listdir(os.path.join(args.corpus, level))):
        if not f.endswith(".py"):
            continue
        number = int(f[:-3])
        if number not in problems:
            missing.append(f"{level}/{f}")
            continue
        folder = os.path.join(candidates, level, problems[number])
        os.makedirs(folder, exist_ok=True)
        shutil.copy(os.path.join(args.corpus, level, f), os.path.join(folder, f))
if missing:
    print(f"{len(missing)} solution(s) answer no problem of the suite: {', '.join(missing[:10])}")

run = os.path.join(args.out, "run")
shutil.rmtree(run, ignore_errors=True)
p = subprocess.run([args.cuset, "eval", "--candidates", candidates, "--problems", args.suite, "--backend", args.backend, "--out", run,
                    "--seed", args.seed, "--kernelbench-gpu", args.kernelbench_gpu, "--quiet", "--max-rows", "0"], capture_output=True, text=True, errors="replace")
if not os.path.exists(os.path.join(run, "results.jsonl")):
    sys.exit(f"cuset eval failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
rows = [json.loads(line) for line in open(os.path.join(run, "results.jsonl")) if line.strip()]


def table(rows, title):
    verdicts = sorted({r["verdict"] for r in rows}, key=lambda v: (v != "correct", v))
    by = collections.defaultdict(collections.Counter)
    for r in rows:
        by[r["problem"].split("/")[0]][r["verdict"]] += 1
    print(f"\n{title}\n")
    print("| level | solutions | " + " | ".join(verdicts) + " |")
    print("|---|---|" + "---|" * len(verdicts))
    for level in sorted(by):
        print(f"| {level} | {sum(by[level].values())} | " + " | ".join(str(by[level][v]) for v in verdicts) + " |")
    total = collections.Counter(r["verdict"] for r in rows)
    print(f"| all | {len(rows)} | " + " | ".join(str(total[v]) for v in verdicts) + " |")


table(rows, f"{args.corpus} on {args.backend} ({os.path.join(run, 'results.jsonl')})")


def predicted_table(rows):
    """CuSeT's verdict x KernelBench's predicted verdict (kernelbench_correct, for --kernelbench-gpu) x why they differ."""
    cross = collections.Counter()
    for r in rows:
        kb = r.get("kernelbench_correct")
        predicted = "not reproduced" if kb is None else "correct" if kb else "not correct"
        cross[(r["verdict"], predicted, (r.get("kernelbench") or {}).get("disagreement") or "")] += 1
    print(f"\nCuSeT's verdict x KernelBench's predicted verdict ({args.kernelbench_gpu})\n")
    print("| CuSeT verdict | KernelBench predicted | why they differ | solutions |\n|---|---|---|---|")
    for (verdict, predicted, why), n in sorted(cross.items(), key=lambda kv: (kv[0][0] != "correct", kv[0])):
        print(f"| {verdict} | {predicted} | {why} | {n} |")


predicted_table(rows)
if args.compare:
    before = {r["problem"]: r for r in (json.loads(line) for line in open(args.compare) if line.strip())}
    table(list(before.values()), f"before ({args.compare})")
    print("\nchanged verdicts:")
    for r in sorted(rows, key=lambda r: r["problem"]):
        b = before.get(r["problem"])
        if b and b["verdict"] != r["verdict"]:
            print(f"  {r['problem']}: {b['verdict']} -> {r['verdict']}  {r['reason'][:160]}")
print("\nnot correct:")
for r in sorted(rows, key=lambda r: r["problem"]):
    if r["verdict"] != "correct":
        print(f"  {r['problem']}: {r['verdict']}: {r['reason'][:200]}")
