#!/usr/bin/env python3
"""Time to a verdict for real KernelBench solutions, side by side in one run (issue #47):

  cold   `cuset eval` with every recorder run its own process (CUSET_KB_WARM=0), empty caches
  warm   `cuset eval` with the warm recorder (a fork server with torch imported), empty caches
  load_inline   torch's own torch.utils.cpp_extension.load_inline (nvcc and g++ with the torch headers)
         building the same solutions' extensions, each into an empty build folder

It prints per-stage medians and p90 (translate, compile, run, total to a verdict) for cold and warm,
the median build time of load_inline, and the ratios warm/cold and load_inline/warm.

usage: kernelbench_translate_speed.py CUSET SUITE CORPUS OUT [--count 24] [--load-inline-count 6] [--jobs 2]
  SUITE   a suite imported with `cuset import kernelbench`
  CORPUS  solutions laid out levelN/NNN.py (../shared/kernelbench-solutions/cuda-l1)
The sample is every k-th solution of the corpus (the same files every run), levels 1-2, whose problem
has a size set the simulator runs.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("cuset")
ap.add_argument("suite")
ap.add_argument("corpus")
ap.add_argument("out")
ap.add_argument("--count", type=int, default=24)
ap.add_argument("--load-inline-count", type=int, default=6)
ap.add_argument("--jobs", default="2")
args = ap.parse_args()

# The sample: every k-th solution of levels 1-2, laid out as candidates of their problems.
pool = []
for level in ("level1", "level2"):
    suite_level = os.path.join(args.suite, level)
    corpus_level = os.path.join(args.corpus, level)
    if not os.path.isdir(suite_level) or not os.path.isdir(corpus_level):
        continue
    problems = {int(m.group(1)): d for d in os.listdir(suite_level) if (m := re.match(r"kb(\d+)_", d))}
    for f in sorted(os.listdir(corpus_level)):
        if f.endswith(".py") and int(f[:-3]) in problems:
            pool.append((level, problems[int(f[:-3])], os.path.join(corpus_level, f)))
if not pool:
    sys.exit(f"no solution of {args.corpus} answers a problem of {args.suite}")
step = max(1, len(pool) // args.count)
sample = pool[::step][: args.count]
candidates = os.path.join(args.out, "candidates")
shutil.rmtree(candidates, ignore_errors=True)
for level, problem, path in sample:
    folder = os.path.join(candidates, level, problem)
    os.makedirs(folder, exist_ok=True)
    shutil.copy(path, folder)


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def evaluate(name, warm):
    run = os.path.join(args.out, name)
    shutil.rmtree(run, ignore_errors=True)
    cache = tempfile.mkdtemp(prefix=f"cuset-speed-{name}-")  # nothing translated or compiled before
    env = dict(os.environ, XDG_CACHE_HOME=cache, CUSET_KB_WARM="1" if warm else "0")
    start = time.monotonic()
    p = subprocess.run([args.cuset, "eval", "--candidates", candidates, "--problems", args.suite, "--backend", "sim", "--out", run,
                        "--seed", "7", "--quiet", "--jobs", args.jobs, "--max-rows", "0"], capture_output=True, text=True, env=env, errors="replace")
    wall = time.monotonic() - start
    shutil.rmtree(cache, ignore_errors=True)
    results = os.path.join(run, "results.jsonl")
    if not os.path.exists(results):
        sys.exit(f"cuset eval ({name}) failed ({p.returncode}):\n{p.stderr[-2000:]}")
    rows = [json.loads(line) for line in open(results) if line.strip()]
    stages = {}
    for r in rows:
        for stage, ms in (r.get("timings_ms") or {}).items():
            stages.setdefault(stage, []).append(ms / 1000.0)
    verdicts = {}
    for r in rows:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    return {"stages": stages, "wall": wall, "verdicts": verdicts, "rows": {os.path.basename(r["origin"]) + r["problem"]: r["verdict"] for r in rows}}


# torch's own build of each extension the solution makes, into an empty folder; the solution's module
# is run only until its extensions are built (a CUDA tensor it makes afterwards fails here: no GPU).
LOAD_INLINE = r"""
import os, sys, time, runpy
os.environ["TORCH_EXTENSIONS_DIR"] = sys.argv[2]
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
os.chdir(sys.argv[2])
from torch.utils import cpp_extension
spent = [0.0, 0]
for name in ("load_inline", "load"):
    real = getattr(cpp_extension, name)
    def timed(*a, _real=real, **k):
        t = time.monotonic()
        try:
            return _real(*a, **k)
        finally:
            spent[0] += time.monotonic() - t
            spent[1] += 1
    setattr(cpp_extension, name, timed)
import torch
torch.cuda.is_available = lambda: True  # many solutions build only where they see a GPU
try:
    ns = runpy.run_path(sys.argv[1], run_name="solution")
    if spent[1] == 0 and "ModelNew" in ns:  # built in __init__
        ns["ModelNew"](*ns["get_init_inputs"]())
except BaseException as e:
    pass
print(f"BUILT {spent[0]:.3f} {spent[1]}")
"""


def load_inline_seconds(path):
    build = tempfile.mkdtemp(prefix="cuset-speed-load-inline-")
    env = dict(os.environ, CUDA_HOME=os.environ.get("CUDA_HOME", "/usr/local/cuda"), MAX_JOBS=args.jobs)
    env["PATH"] = os.path.join(env["CUDA_HOME"], "bin") + os.pathsep + env.get("PATH", "")
    p = subprocess.run([sys.executable, "-c", LOAD_INLINE, os.path.abspath(path), build], capture_output=True, text=True, env=env, timeout=900)
    shutil.rmtree(build, ignore_errors=True)
    m = re.search(r"BUILT ([\d.]+) (\d+)", p.stdout)
    return (float(m.group(1)), int(m.group(2))) if m else (None, 0)


cold = evaluate("cold", warm=False)
warm = evaluate("warm", warm=True)
changed = [k for k in cold["rows"] if warm["rows"].get(k) != cold["rows"][k]]

print(f"{len(sample)} solutions (every {step}th of {len(pool)} in levels 1-2), --jobs {args.jobs}, sim backend, empty caches")
print(f"{'stage':12} {'cold median':>12} {'cold p90':>9} {'warm median':>12} {'warm p90':>9} {'warm/cold':>9}")
for stage in ("translate", "compile", "sim_compile", "run", "total"):
    c, w = cold["stages"].get(stage, []), warm["stages"].get(stage, [])
    if not c and not w:
        continue
    cm, wm = statistics.median(c) if c else float("nan"), statistics.median(w) if w else float("nan")
    ratio = wm / cm if cm else float("nan")
    print(f"{stage:12} {cm:11.3f}s {percentile(c, 0.9):8.3f}s {wm:11.3f}s {percentile(w, 0.9):8.3f}s {ratio:9.3f}")
print(f"wall: cold {cold['wall']:.1f}s, warm {warm['wall']:.1f}s; verdicts cold {cold['verdicts']}, warm {warm['verdicts']}")
print(f"verdicts that differ between cold and warm: {len(changed)} {changed[:5]}")

if args.load_inline_count > 0:
    built = []
    for level, problem, path in sample:
        if len(built) >= args.load_inline_count:
            break
        if "load_inline(" not in open(path).read():
            continue
        seconds, extensions = load_inline_seconds(path)
        print(f"load_inline {level}/{os.path.basename(path)} ({problem}): "
              + (f"{seconds:.1f}s for {extensions} extension(s)" if seconds is not None and extensions else "did not build"))
        if seconds is not None and extensions:
            built.append(seconds)
    if built:
        ours = statistics.median(warm["stages"]["total"])
        theirs = statistics.median(built)
        print(f"load_inline median build {theirs:.2f}s over {len(built)} solutions; cuset warm median total to a verdict {ours:.3f}s; "
              f"ratio {theirs / ours:.1f}x")
