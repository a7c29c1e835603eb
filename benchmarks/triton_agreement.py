#!/usr/bin/env python3
"""Triton solutions judged here against the GPU verdicts they came with (issue #64's measurement).

The corpus is ../shared/triton-solutions/llmkernel: model-written KernelBench solutions whose ModelNew
launches @triton.jit kernels, each labelled with that project's own GPU verdict (RTX 4090,
torch.allclose(atol=1e-3, rtol=1e-2)) in labels_derived.jsonl. Per problem, up to N GPU-correct and N
GPU-failed files are taken (in file order, so runs compare), laid out as candidates of the imported
problem, judged with `cuset eval --backend-lang triton`, and counted per level in both directions.
Every disagreement is classified:

  harness        CuSeT could not judge it (unsupported, harness_error, a timeout on the simulator)
  tolerance      GPU-correct, wrong here, but within the corpus's own tolerance (atol 1e-3 + rtol 1e-2),
                 which is looser than KernelBench's 1e-4 for float32: the corpus's verdict, not a defect
  drift          the solution does not fit the problem as ../shared/kernelbench has it now (shapes,
                 dtypes, signatures, init arguments changed since the corpus was made; its own asserts)
  sizes          the simulator's scaled sizes break an assumption the kernel makes at KernelBench's
                 (a block size that must be a power of two, tl.dot's K >= 16): Triton refuses to compile
  label          GPU-failed, correct here, and the corpus paired that label with the file by sort order
                 (its README: "a few labels may be off")
  defect         none of these: a defect of CuSeT or a true GPU-only failure; listed one by one

With --gpu-compile ARCH (sm_90) the same solutions are not judged: each is translated as the cuda backend
translates it on a GPU of that architecture (`cuset translate --gpu-arch ARCH --compile`: Triton's kernels
compiled as Triton compiles them there, wrapped, NVRTC to a cubin for the architecture-specific target),
beside the simulator's form (Triton's sm_80 code) compiled for ARCH as a simulator run compiles it, and
the table counts what records, what compiles, what uses Hopper's wgmma, the kernels' registers and
spills, the autotuned launches (each carries every configuration the GPU worker will time, all of them
compiled) and what translating took. No GPU is needed; what the GPU computes and how fast is
benchmarks/device/check.sh's.

usage: triton_agreement.py CUSET SUITE TRITON_ROOT OUT [--levels 1,2] [--per-problem 1] [--first-problems N] [--kernelbench-gpu ada]
                           [--gpu-compile sm_90] [--autotuned]
  SUITE        `cuset import kernelbench ../shared/kernelbench/KernelBench --levels 1,2`
  TRITON_ROOT  ../shared/triton-solutions
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("cuset")
ap.add_argument("suite")
ap.add_argument("root")
ap.add_argument("out")
ap.add_argument("--levels", default="1,2")
ap.add_argument("--per-problem", type=int, default=1, help="GPU-correct and GPU-failed files per problem, each")
ap.add_argument("--kernelbench-gpu", default="ada", help="the GPU class kernelbench_correct predicts (the corpus ran on an RTX 4090)")
ap.add_argument("--jobs", default="2")
ap.add_argument("--first-problems", type=int, default=0, help="only the first N problems of each level by number (0: all)")
ap.add_argument("--reuse", action="store_true", help="judge only what the run folder lacks (cuset eval resumes)")
ap.add_argument("--gpu-compile", default="", metavar="ARCH", help="translate and compile for a GPU of this architecture instead of judging")
ap.add_argument("--autotuned", action="store_true", help="only solutions that use @triton.autotune")
args = ap.parse_args()

levels = [int(x) for x in args.levels.split(",")]
llm = os.path.join(args.root, "llmkernel")
labels = [json.loads(line) for line in open(os.path.join(llm, "labels_derived.jsonl"))]
chosen = collections.OrderedDict()  # candidate path -> label
counts = collections.Counter()
for label in labels:
    m = re.match(r"results/level(\d+)/(\d+)_[^/]+/code/", label["kernel"])
    if not m or int(m.group(1)) not in levels or not label.get("is_triton_modelnew") or label["correct"] is None:
        continue
    if args.first_problems and int(m.group(2)) > args.first_problems:
        continue
    if args.autotuned and "triton.autotune" not in open(os.path.join(llm, label["kernel"]), errors="replace").read():
        continue
    key = (label["kernel"].split("/code/")[0], label["correct"])
    if counts[key] >= args.per_problem:
        continue
    counts[key] += 1
    chosen[label["kernel"]] = label

candidates = os.path.join(args.out, "candidates")
if not args.reuse:
    shutil.rmtree(candidates, ignore_errors=True)
unmatched = []
origin_of = {}
for path, label in chosen.items():
    level, stem = path.split("/")[1], path.split("/")[2]
    number = int(stem.split("_")[0])
    problems = {int(mm.group(1)): d for d in os.listdir(os.path.join(args.suite, level)) if (mm := re.match(r"kb(\d+)_", d))}
    if number not in problems:
        unmatched.append(path)
        continue
    folder = os.path.join(candidates, level, problems[number])
    os.makedirs(folder, exist_ok=True)
    name = f"{'gpu_correct' if label['correct'] else 'gpu_failed'}_{os.path.basename(path)}"
    shutil.copy(os.path.join(llm, path), os.path.join(folder, name))
    origin_of[name] = label
if unmatched:
    print(f"{len(unmatched)} solution(s) answer no problem of the suite (not imported or not simulable): {', '.join(unmatched[:5])}")



def translated(path, problem, gpu_arch):
    cmd = [args.cuset, "translate", path, "--problem", problem, "--problems", args.suite, "--compile", "--json"]
    p = subprocess.run(cmd + (["--gpu-arch", gpu_arch] if gpu_arch else []), capture_output=True, text=True, errors="replace")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"verdict": "harness_error", "reason": (p.stderr or p.stdout)[-300:]}


def gpu_compile_table():
    """Per level: the GPU's form (--gpu-compile) beside the simulator's, both through NVRTC."""
    import concurrent.futures
    jobs = []
    for level in sorted(os.listdir(candidates)):
        for problem in sorted(os.listdir(os.path.join(candidates, level))):
            for name in sorted(os.listdir(os.path.join(candidates, level, problem))):
                jobs.append((level, f"{level}/{problem}", os.path.join(candidates, level, problem, name)))
    start = time.time()
    done = [0]

    def one(job, gpu_arch):
        r = translated(job[2], job[1], gpu_arch)
        done[0] += 1
        if done[0] % 10 == 0 or done[0] == 2 * len(jobs):
            rate = done[0] / (time.time() - start)
            print(f"translated {done[0]}/{2 * len(jobs)}, {rate:.2f}/s, ETA {(2 * len(jobs) - done[0]) / rate:.0f} s", file=sys.stderr, flush=True)
        return r

    with concurrent.futures.ThreadPoolExecutor(int(args.jobs)) as pool:
        gpu = list(pool.map(lambda j: one(j, args.gpu_compile), jobs))
        sim = list(pool.map(lambda j: one(j, ""), jobs))
    print(f"{len(jobs)} Triton solutions translated twice and compiled in {time.time() - start:.0f} s (--gpu-compile {args.gpu_compile})")
    for level in sorted({j[0] for j in jobs}):
        rows = [(g, m) for j, g, m in zip(jobs, gpu, sim) if j[0] == level]
        print(f"\n{level}\n")
        print("| form | solutions | a plan | compiled | kernels | target | wgmma | registers (median, max) | spilling kernels | autotuned launches "
              "(configurations each: median, max) | translated in (median) | not compiled, first reasons |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for label, pick in ((f"GPU ({args.gpu_compile})", 0), ("simulator's (sm_80 code)", 1)):
            results = [r[pick] for r in rows]
            plans = [r for r in results if r.get("verdict") == "plan"]
            built = [r for r in plans if r.get("compiled", {}).get("ok")]
            kernels = [k for r in built for k in r["compiled"]["kernels"].values()]
            registers = sorted(k["registers"] for k in kernels)
            wgmma = sum("wgmma.mma_async" in r["device_source"] for r in built)
            targets = ", ".join(sorted({r["compiled"]["arch"] for r in built})) or "-"
            failed = collections.Counter(re.sub(r"\s+", " ", next((line for line in r["compiled"]["log"].splitlines() if "error" in line), "?"))[:90]
                                         for r in plans if not r.get("compiled", {}).get("ok"))
            median = f"{registers[len(registers) // 2]}, {registers[-1]}" if registers else "-"
            # Autotuned launches, for a GPU: each carries every configuration its worker will time (one size set: the first).
            tuned = sorted(len(s["kernel"]["autotune"]["configs"]) for r in plans for s in next(iter(r.get("plans", {}).values()), {}).get("steps", [])
                           if "autotune" in s.get("kernel", {}))
            configurations = f"{len(tuned)} ({tuned[len(tuned) // 2]}, {tuned[-1]})" if tuned else "0"
            ms = sorted(r.get("milliseconds", 0) for r in plans if not r.get("cache_hit"))
            took = f"{ms[len(ms) // 2] / 1000:.1f} s" if ms else "-"
            print(f"| {label} | {len(results)} | {len(plans)} | {len(built)} | {len(kernels)} | {targets} | {wgmma} | {median} | "
                  f"{sum(k['local_bytes'] > 0 for k in kernels)} | {configurations} | {took} | "
                  f"{'; '.join(f'{v}x {k}' for k, v in failed.most_common(2)) or '-'} |")
        verdicts = collections.Counter(g.get("verdict") for g, _ in rows if g.get("verdict") != "plan")
        if verdicts:
            print(f"\nno plan for the GPU: {', '.join(f'{k} {v}' for k, v in verdicts.most_common())}")
            reasons = collections.Counter(re.sub(r"[\d_]+", "#", g.get("reason", ""))[:100] for g, _ in rows if g.get("verdict") != "plan")
            for reason, n in reasons.most_common(6):
                print(f"  {n}x {reason}")
        differ = [(j[2], g.get("reason", "")) for j, g, m in zip(jobs, gpu, sim) if j[0] == level and (g.get("verdict") == "plan") != (m.get("verdict") == "plan")]
        for path, reason in differ:
            print(f"  a plan in one form only: {os.path.basename(path)}: {reason[:160]}")


if args.gpu_compile:
    gpu_compile_table()
    sys.exit(0)

run = os.path.join(args.out, "run")
if not args.reuse:
    shutil.rmtree(run, ignore_errors=True)
start = time.time()
p = subprocess.run([args.cuset, "eval", "--candidates", candidates, "--problems", args.suite, "--backend", "sim", "--backend-lang", "triton",
                    "--out", run, "--seed", "7", "--kernelbench-gpu", args.kernelbench_gpu, "--jobs", args.jobs, "--quiet", "--max-rows", "0"],
                   capture_output=True, text=True, errors="replace")
wall = time.time() - start
if not os.path.exists(os.path.join(run, "results.jsonl")):
    sys.exit(f"cuset eval failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
results = [json.loads(line) for line in open(os.path.join(run, "results.jsonl")) if line.strip()]

DRIFT = re.compile(r"has shape|the problem's is|takes \d+ positional|unexpected keyword|missing \d+ required|size mismatch|"
                   r"shape '\[|must match the size|forward returns \d+ output|mat1 and mat2 shapes|Expected .*size|AssertionError", re.I)
SIZES = re.compile(r"CompilationError: .*(must be a power of 2|M >= \d+|N >= \d+|K >= \d+|numel .* exceeds)", re.I)


def within_corpus_tolerance(r):
    """allclose(atol=1e-3, rtol=1e-2), as far as the largest errors tell (an element whose absolute error is
    a little over 1e-3 at a value of 0.1 passes there and is left to a reader here); NaN never passes."""
    cs = r.get("comparisons", [])
    return bool(cs) and all(c.get("non_finite_mismatches", 0) == 0 and (c.get("max_abs_error", 1e9) <= 1e-3 or c.get("max_rel_error", 1e9) <= 1e-2)
                            for c in cs)


def classify(r, label):
    v = r["verdict"]
    if v in ("unsupported", "harness_error", "timeout"):
        return "harness"
    if SIZES.search(r.get("reason", "")):
        return "sizes"
    if DRIFT.search(r.get("reason", "")):
        return "drift"
    if label["correct"] and v == "wrong_answer" and within_corpus_tolerance(r):
        return "tolerance"
    if not label["correct"] and label.get("match") == "order":
        return "label"
    return "defect"


rows = collections.defaultdict(lambda: collections.Counter())
disagreements = collections.defaultdict(lambda: collections.Counter())
defects = []
seconds = []
for r in results:
    label = origin_of.get(os.path.basename(r["origin"]))
    if label is None:
        continue
    level = r["problem"].split("/")[0]
    gpu = "GPU-correct" if label["correct"] else "GPU-failed"
    rows[(level, gpu)][r["verdict"]] += 1
    seconds.append(r.get("timings_ms", {}).get("total", 0) / 1000)
    agrees = (r["verdict"] == "correct") == bool(label["correct"])
    if not agrees:
        why = classify(r, label)
        disagreements[(level, gpu)][why] += 1
        if why == "defect":
            defects.append(f"{r['problem']} {os.path.basename(r['origin'])} ({gpu}): {r['verdict']}: {r.get('reason', '')[:220]}")

print(f"{len(results)} Triton solutions judged in {wall:.0f} s (--per-problem {args.per_problem}, levels {args.levels})")
for level in sorted({k[0] for k in rows}):
    print(f"\n{level}\n")
    print("| GPU verdict (corpus) | judged | agree | correct | wrong_answer | runtime_error | compile_error | unsupported | timeout | other | disagreements |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for gpu in ("GPU-correct", "GPU-failed"):
        c = rows[(level, gpu)]
        n = sum(c.values())
        if n == 0:
            continue
        agree = c["correct"] if gpu == "GPU-correct" else n - c["correct"]
        named = ("correct", "wrong_answer", "runtime_error", "compile_error", "unsupported", "timeout")
        other = n - sum(c[k] for k in named)
        why = ", ".join(f"{k} {v}" for k, v in sorted(disagreements[(level, gpu)].items())) or "-"
        print(f"| {gpu} | {n} | {agree} ({100 * agree / n:.0f}%) | " + " | ".join(str(c[k]) for k in named) + f" | {other} | {why} |")
if seconds:
    seconds.sort()
    print(f"\nper verdict (total, cold caches included): median {seconds[len(seconds) // 2]:.1f} s, p90 {seconds[int(0.9 * (len(seconds) - 1))]:.1f} s")
if defects:
    print("\nunclassified disagreements (defect: ours, or a failure only a GPU has):")
    for d in defects:
        print("  " + d)
