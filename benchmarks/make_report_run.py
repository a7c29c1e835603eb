#!/usr/bin/env python3
"""Writes a synthetic run folder (results.jsonl + run.json) shaped like a GPU leaderboard run, for
measuring `cuset report` at scale without a GPU:
    .venv/bin/python benchmarks/make_report_run.py OUT_DIR [--models 5] [--problems 100] [--samples 10]
    time ./build/default/cli/cuset report OUT_DIR
Verdicts, timings and sources are synthetic; only their shape matters."""
import argparse, json, os, random

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("--models", type=int, default=5)
parser.add_argument("--problems", type=int, default=100)
parser.add_argument("--samples", type=int, default=10)
args = parser.parse_args()
random.seed(2)
here = os.path.dirname(os.path.abspath(__file__))
source = open(os.path.join(here, "..", "problems", "level1", "matmul_rect", "solutions", "register_tiled.cu")).read()
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, "results.jsonl"), "w") as f:
    for m in range(args.models):
        for p in range(args.problems):
            for s in range(args.samples):
                ok = random.random() < 0.6
                r = {"problem": f"level{1 + p % 3}/p{p}", "sample": s, "model": f"m{m}", "backend": "cuda",
                     "verdict": "correct" if ok else "wrong_answer", "source_hash": f"{m}-{p}-{s}", "source": source,
                     "reason": "" if ok else "trial 2 of 5: y: 3 of 100 elements differ (3%); first at [1]: got 1, want 2"}
                if ok:
                    c = random.lognormvariate(0, 0.6)
                    r["timing"] = {"kind": "cuda_cupti", "samples_ms": [c * (1 + random.gauss(0, 0.01)) for _ in range(30)],
                                   "reference_samples_ms": [1.0] * 30}
                f.write(json.dumps(r) + "\n")
json.dump({"backend": "cuda", "seed": "5", "started": "2026-11-29T00:00:00Z", "environment": {"gpu": "synthetic"}},
          open(os.path.join(args.out, "run.json"), "w"))
