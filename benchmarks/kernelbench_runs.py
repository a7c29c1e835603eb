#!/usr/bin/env python3
"""CuSeT's verdicts on real KernelBench run folders beside the verdicts KernelBench itself gave on a GPU
(../shared/kernelbench-runs: eval_results.json of each folder), per folder (issue #61):

  - of the samples the GPU judged correct: how many CuSeT calls `correct`, how many it gives a named
    defect (and which verdicts), how many it cannot judge here (`unsupported`);
  - of the GPU's build failures: how many are `compile_error` here;
  - `kernelbench_correct` (CuSeT's reproduction of KernelBench's check, for the folder's GPU class and
    KernelBench version) against the GPU's `correctness`: equal, and every disagreement by CuSeT's
    verdict and `kernelbench.disagreement`.

Each folder is judged with `cuset eval --candidates FOLDER --kernelbench KB --backend sim` and the GPU
class and tolerance of the machine and KernelBench release that judged it (FOLDERS below). The problems
are imported from KB on first use into --cache-dir and reused by later runs (and by another binary).

usage: kernelbench_runs.py CUSET RUNS_ROOT OUT [--folders a,b] [--cache-dir DIR] [--jobs N] [--before-61]
  RUNS_ROOT  ../shared/kernelbench-runs
  OUT        a work folder: OUT/<folder>/ is each cuset run (results.jsonl, report.html)
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

# The GPU and the KernelBench release behind each folder's verdicts (its README): A100s judged with
# KernelBench v0.1 (float32 tolerance 1e-2), an RTX 4090 (Ada) with today's KernelBench (1e-4).
FOLDERS = {
    "gemini_level2_run": ("kernelbench-v0.1", "ampere", "1e-2"),
    "gemini_level3_run": ("kernelbench-v0.1", "ampere", "1e-2"),
    "qwencoder_level1_run": ("kernelbench-v0.1", "ampere", "1e-2"),
    "qwen36_retime_l1": ("../kernelbench", "ada", "1e-4"),
    "qwen36_retime_l2": ("../kernelbench", "ada", "1e-4"),
    "qwen36_retime_l3": ("../kernelbench", "ada", "1e-4"),
}

ap = argparse.ArgumentParser()
ap.add_argument("cuset")
ap.add_argument("runs_root")
ap.add_argument("out")
ap.add_argument("--folders", default=",".join(FOLDERS))
ap.add_argument("--cache-dir", default=None)
ap.add_argument("--jobs", default="2")
ap.add_argument("--seed", default="7")
ap.add_argument("--before-61", action="store_true", help="a cuset from before issue #61 (no --kernelbench-gpu, --kernelbench-tolerance)")
args = ap.parse_args()


def gpu_verdicts(folder):
    """{(problem number, sample): (outcome, correct)} from KernelBench's eval_results.json; outcome is
    "correct", "build failed" (metadata has a compilation_error), "construction failed" (not compiled for
    another reason: ModelNew(...) raised) or "failed" (a runtime error or an output mismatch)."""
    with open(os.path.join(folder, "eval_results.json")) as f:
        data = json.load(f)
    out = {}
    for problem, samples in data.items():
        for s in samples if isinstance(samples, list) else [samples]:
            ok = bool(s["correctness"])
            outcome = ("correct" if ok else "environment" if environment_failure(s["metadata"]) else
                       "build failed" if "compilation_error" in s["metadata"] else
                       "construction failed" if not s["compiled"] else "failed")
            out[(int(problem), int(s.get("sample_id", 0)))] = (outcome, ok)
    return out


def environment_failure(metadata):
    """A failure of the GPU machine, not of the solution: the device out of memory because another
    process held it (qwencoder_level1_run's problems 19-38 found 7.56 MiB free of 39.49 GiB). No verdict
    about the solution to reproduce. (A `cuda_error` before the trials is not one: it is most often the
    sample's own out-of-bounds kernel, its fault surfacing at the next synchronisation.)"""
    return "CUDA out of memory" in " ".join(str(v) for v in metadata.values())


def judged(run):
    """{(problem number, sample): result} from a cuset run of a KernelBench run folder."""
    out = {}
    with open(os.path.join(run, "results.jsonl")) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            m = re.search(r"level_\d+_problem_(\d+)_sample_(\d+)_kernel\.py", r.get("origin", ""))
            if m:
                out[(int(m.group(1)), int(m.group(2)))] = r
    return out


summary_rows = []
for name in args.folders.split(","):
    kb_rel, gpu, tolerance = FOLDERS[name]
    folder = os.path.join(args.runs_root, "runs", name)
    kb = os.path.normpath(os.path.join(args.runs_root, kb_rel))
    run = os.path.join(args.out, name)
    command = [args.cuset, "eval", "--candidates", folder, "--kernelbench", kb, "--backend", "sim", "--out", run, "--seed", args.seed,
               "--jobs", args.jobs, "--quiet", "--max-rows", "0"]
    if not args.before_61:
        command += ["--kernelbench-gpu", gpu, "--kernelbench-tolerance", tolerance]
    if os.path.exists(os.path.join(run, "results.jsonl")):
        command.append("--resume")
    if args.cache_dir:
        command += ["--cache-dir", args.cache_dir]
    start = time.time()
    p = subprocess.run(command, capture_output=True, text=True, errors="replace")
    if not os.path.exists(os.path.join(run, "results.jsonl")):
        sys.exit(f"{name}: cuset eval failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    gpu_of = gpu_verdicts(folder)
    ours = judged(run)
    gpu_correct = [k for k, (o, ok) in gpu_of.items() if ok]
    build_failed = [k for k, (o, ok) in gpu_of.items() if o == "build failed"]
    here = collections.Counter(ours[k]["verdict"] for k in gpu_correct if k in ours)
    builds = collections.Counter(ours[k]["verdict"] for k in build_failed if k in ours)
    agree = disagree = unknown = environment = 0
    reasons = collections.Counter()
    for k, (outcome, ok) in gpu_of.items():
        r = ours.get(k)
        if r is None:
            continue
        if outcome == "environment":
            environment += 1
            continue
        predicted = r.get("kernelbench_correct")
        if r["verdict"] == "compile_error":
            predicted = False  # a build that fails fails there too (before #61 no check was recorded for it)
        if predicted is None:
            unknown += 1
        elif predicted == ok:
            agree += 1
        else:
            disagree += 1
            why = (r.get("kernelbench") or {}).get("disagreement") or "-"
            reasons[(f"GPU {outcome}", r["verdict"], why)] += 1
    print(f"\n## {name} ({gpu}, tolerance {tolerance}, {len(ours)} of {len(gpu_of)} samples judged in {time.time() - start:.0f} s)\n")
    print(f"GPU correct: {len(gpu_correct)}: here " + ", ".join(f"{v} {n}" for v, n in here.most_common()))
    print(f"GPU build failures: {len(build_failed)}: here " + ", ".join(f"{v} {n}" for v, n in builds.most_common()))
    print(f"kernelbench_correct = GPU: {agree} of {agree + disagree} reproduced ({unknown} not reproduced here; "
          f"{environment} GPU machine failures left out: the device out of memory)")
    if reasons:
        print("\n| GPU | CuSeT verdict | why | samples |\n|---|---|---|---|")
        for (side, verdict, why), n in sorted(reasons.items()):
            print(f"| {side} | {verdict} | {why} | {n} |")
    summary_rows.append((name, len(gpu_correct), here["correct"], len(build_failed), builds["compile_error"], agree, agree + disagree, unknown))

print("\n| folder | GPU correct | correct here | GPU build failures | compile_error here | kernelbench_correct = GPU | not reproduced |")
print("|---|---|---|---|---|---|---|")
for name, gc, c, bf, ce, a, t, u in summary_rows:
    print(f"| {name} | {gc} | {c} | {bf} | {ce} | {a} / {t} | {u} |")
