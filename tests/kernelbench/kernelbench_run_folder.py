#!/usr/bin/env python3
"""CuSeT as a drop-in for KernelBench's eval_from_generations.py (docs/kernelbench.md), end to end:

a KernelBench run folder (level_1_problem_P_sample_S_kernel.py, prompts, generation_config.yaml) judged
with `cuset eval --kernelbench <checkout>` (our fixture checkout, imported on first use into the cache
and reused); eval_results.json, pass_at_k_results.json and analysis_results.json read as KernelBench's
scripts read them; KernelBench's own check beside CuSeT's (an input mutation and an over-read it
passes, CuSeT does not); and `cuset generate --layout kernelbench` writing a run folder `cuset eval`
reads back.

usage: kernelbench_run_folder.py CUSET SOURCE_DIR WORK_DIR
"""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = e2e_support.kernelbench_test_start(sys.argv)

checkout = os.path.join(source, "tests/data/kernelbench_fixture")
fixtures = os.path.join(source, "tests/data/kernelbench_modelnew/level1")
failures = []


def need(cond, what):
    if not cond:
        failures.append(what)


run = e2e_support.cuset_runner(cuset)

# A run folder as KernelBench's generate_samples.py leaves it.
runs = os.path.join(work, "runs", "my_run")
os.makedirs(runs)
samples = {(1, 0): "kb1_rectifier/single_kernel.py", (1, 1): "kb1_rectifier/kernel_writes_input.py",
           (1, 2): "kb1_rectifier/over_read_past_end.py", (1, 3): "kb1_rectifier/buggy_slope.py",
           (2, 0): "kb2_row_softmax/three_kernels.py", (9, 0): "kb1_rectifier/single_kernel.py"}
for (problem, sample), fixture in samples.items():
    shutil.copy(os.path.join(fixtures, fixture), os.path.join(runs, f"level_1_problem_{problem}_sample_{sample}_kernel.py"))
    with open(os.path.join(runs, f"level_1_problem_{problem}_sample_{sample}_prompt.txt"), "w") as f:
        f.write("You write custom CUDA kernels ...\n")
with open(os.path.join(runs, "generation_config.yaml"), "w") as f:
    f.write("run_name: my_run\nlevel: 1\n")
baseline = os.path.join(work, "baseline.json")
with open(baseline, "w") as f:
    json.dump({"level1": {"1_Rectifier.py": {"mean": 0.05}, "2_Row_softmax.py": {"mean": 0.1}}}, f)

cache = os.path.join(work, "cache")
out = os.path.join(work, "eval")
first = run("eval", "--candidates", runs, "--kernelbench", checkout, "--backend", "sim", "--cache-dir", cache, "--out", out,
            "--seed", "5", "--trials", "2", "--pass-at-k", "1,2", "--kernelbench-baseline", baseline, "--quiet")
need("importing 2 KernelBench problem(s)" in first.stderr + first.stdout, f"first use imports the two problems named: {first.stderr}")

results = {(r["problem"], r["sample"]): r for r in map(json.loads, open(os.path.join(out, "results.jsonl")))}
need(len(results) == 6, f"{len(results)} results for 6 kernel files (prompts and the config are no candidates)")
relu = "level1/kb1_rectifier"
need(results[(relu, 0)]["verdict"] == "correct" and results[(relu, 0)]["kernelbench_correct"] is True, f"honest kernel: {results[(relu, 0)]}")
for sample, verdict in ((1, "hack_suspected"), (2, "runtime_error")):
    r = results[(relu, sample)]
    need(r["verdict"] == verdict and r["kernelbench_correct"] is True,
         f"sample {sample}: KernelBench's check passes it ({r.get('kernelbench')}), CuSeT gives {verdict}: {r['verdict']} {r['reason']}")
    need(r["kernelbench"]["trials"] == 5 and r["kernelbench"]["passed"] == 5, f"KernelBench's five seeded trials: {r['kernelbench']}")
r = results[(relu, 3)]
need(r["verdict"] == "wrong_answer" and r["kernelbench_correct"] is False and len(r["kernelbench"]["max_difference"]) == 5,
     f"a wrong slope fails both checks: {r}")
orphan = results[("kernelbench/level1/9", 0)]
need(orphan["verdict"] == "invalid_submission" and "level 1 problem 9" in orphan["reason"], f"a problem the checkout lacks: {orphan}")

# eval_results.json as eval_from_generations.py writes it and benchmark_eval_analysis.py reads it.
eval_results = json.load(open(os.path.join(out, "eval_results.json")))
need(list(eval_results) == ["1", "2"], f"problem ids as strings, numeric order: {list(eval_results)}")
for pid, entries in eval_results.items():
    for e in entries:
        need(set(e) == {"sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats"}, f"{pid}: keys {sorted(e)}")
        need(isinstance(e["compiled"], bool) and isinstance(e["correctness"], bool), f"{pid}: booleans")
        need(e["runtime"] == -1.0 and e["runtime_stats"] == {}, f"{pid}: nothing timed on the simulator: {e['runtime']}")
        need(e["metadata"]["hardware"] == "cpu_simulator" and "cuset_verdict" in e["metadata"], f"{pid}: metadata {e['metadata']}")
    sample0 = [e for e in entries if e["sample_id"] == 0]  # what the analysis keeps
    need(len(sample0) == 1, f"{pid}: one sample 0")
need([e["sample_id"] for e in eval_results["1"]] == [0, 1, 2, 3], "samples in order")
need(eval_results["1"][1]["metadata"]["kernelbench_correct"] is True and eval_results["1"][1]["correctness"] is False, "CuSeT's verdict decides correctness")

pass_at_k = json.load(open(os.path.join(out, "pass_at_k_results.json")))
need(set(pass_at_k) == {"averages", "metadata", "problems"}, f"pass@k keys {sorted(pass_at_k)}")
need(pass_at_k["problems"]["1"] == {"total_samples": 4, "correct_samples": 1, "pass@1": 0.25, "pass@2": 0.5}, f"{pass_at_k['problems']['1']}")
need(abs(pass_at_k["averages"]["avg_pass@1"] - (0.25 + 1.0) / 2) < 1e-12, f"{pass_at_k['averages']}")
need(pass_at_k["metadata"]["total_evaluated_samples"] == 5, f"{pass_at_k['metadata']}")
analysis = json.load(open(os.path.join(out, "analysis_results.json")))
need(set(analysis["speedup_metrics"]["fast_p"]) == {"0.0", "0.5", "0.8", "1.0", "1.5", "2.0"}, f"{analysis}")
need(analysis["summary"]["correct_count"] == 2 and "note" in analysis, f"analysis on the simulator: {analysis}")

# The 2 x 2 table and the list of what KernelBench passes and CuSeT does not.
summary = json.load(open(os.path.join(out, "summary.json")))
agreement = summary["kernelbench_agreement"]
need(agreement["table"] == {"both_correct": 2, "kernelbench_only": 2, "cuset_only": 0, "neither": 1}, f"table {agreement['table']}")
need(sorted(r["sample"] for r in agreement["kernelbench_only"]) == [1, 2], f"listed {agreement['kernelbench_only']}")
md = open(os.path.join(out, "summary.md")).read()
need("## KernelBench's check beside CuSeT's" in md and "### Passed by KernelBench, not by CuSeT" in md, "report section")
html = open(os.path.join(out, "report.html")).read()
need('<section id="kernelbench">' in html and "over_read" not in html.split('<section id="kernelbench">')[1].split("</section>")[0] and
     "out-of-bounds read" in html.split('<section id="kernelbench">')[1].split("</section>")[0], "report.html section")

# The second run reuses the imported problems.
again = run("eval", "--candidates", runs, "--kernelbench", checkout, "--backend", "sim", "--cache-dir", cache, "--out",
            os.path.join(work, "eval2"), "--seed", "5", "--trials", "1", "--kernelbench-check", "never", "--quiet")
need("importing" not in again.stderr + again.stdout, f"the cache is reused: {again.stderr}")
need(all("kernelbench_correct" not in json.loads(l) for l in open(os.path.join(work, "eval2", "results.jsonl"))), "--kernelbench-check never")

# --kernelbench-static strict: KernelBench's strict findings (here a try/except fallback) are invalid_submission.
strict_runs = os.path.join(work, "runs", "strict")
os.makedirs(strict_runs)
with open(os.path.join(fixtures, "kb1_rectifier/single_kernel.py")) as f:
    honest = f.read()
with open(os.path.join(strict_runs, "level_1_problem_1_sample_0_kernel.py"), "w") as f:
    f.write(honest + "\ntry:\n    import numpy\nexcept ImportError:\n    numpy = None\n")
strict_out = os.path.join(work, "strict")
run("eval", "--candidates", strict_runs, "--kernelbench", checkout, "--backend", "sim", "--cache-dir", cache, "--out", strict_out,
    "--seed", "5", "--trials", "1", "--kernelbench-static", "strict", "--quiet")
r = json.loads(open(os.path.join(strict_out, "results.jsonl")).readline())
need(r["verdict"] == "invalid_submission" and "code_bypass" in r["reason"], f"strict static check: {r['verdict']} {r['reason']}")
need(r["kernelbench_static"][0]["check"] == "code_bypass" and r["kernelbench_static"][0]["strict"], f"{r.get('kernelbench_static')}")

# Which GPU: PyTorch's cuDNN computes float32 convolutions in TF32 by default from Ampere on, so an
# exact convolution kernel misses KernelBench's 1e-4 there (CuSeT's own verdict, against the exact
# reference, is correct); on a GPU class without TF32 KernelBench passes it too.
conv = os.path.join(work, "conv.jsonl")
with open(os.path.join(source, "problems/level1/conv2d/solutions/smem_tile.cu")) as f:
    conv_source = f.read()
with open(conv, "w") as f:
    f.write(json.dumps({"problem": "level1/conv2d", "sample": 0, "model": "exact", "source": conv_source}) + "\n")
for gpu, expect_kb, expect_why in (("hopper", False, "tf32_reference"), ("ampere", False, "tf32_reference"), ("none", True, None)):
    gpu_out = os.path.join(work, f"conv-{gpu}")
    run("eval", "--candidates", conv, "--problems", os.path.join(source, "problems"), "--backend", "sim", "--cache-dir", cache, "--out",
        gpu_out, "--seed", "5", "--trials", "1", "--kernelbench-check", "always", "--kernelbench-gpu", gpu, "--quiet")
    r = json.loads(open(os.path.join(gpu_out, "results.jsonl")).readline())
    kb = r.get("kernelbench", {})
    need(r["verdict"] == "correct" and r.get("kernelbench_correct") is expect_kb and kb.get("gpu") == gpu and
         kb.get("disagreement") == expect_why, f"exact conv on {gpu}: {r['verdict']} {r.get('kernelbench_correct')} {kb}")
    if gpu != "none":
        need(kb.get("correct_against_exact") is True and len(kb.get("max_difference", [])) == 5, f"TF32 trials on {gpu}: {kb}")
        summary = json.load(open(os.path.join(gpu_out, "summary.json")))
        need(summary["kernelbench_agreement"]["disagreements"] == {"tf32_reference": 1}, f"{summary['kernelbench_agreement']}")
# KernelBench v0/v0.1's float32 tolerance (1e-2) passes the same kernel on a TF32 GPU.
loose = os.path.join(work, "conv-loose")
run("eval", "--candidates", conv, "--problems", os.path.join(source, "problems"), "--backend", "sim", "--cache-dir", cache, "--out", loose,
    "--seed", "5", "--trials", "1", "--kernelbench-check", "always", "--kernelbench-gpu", "ampere", "--kernelbench-tolerance", "1e-2", "--quiet")
r = json.loads(open(os.path.join(loose, "results.jsonl")).readline())
need(r.get("kernelbench_correct") is True, f"1e-2 tolerance on ampere: {r.get('kernelbench')}")

# `cuset generate --layout kernelbench` from a served model: KernelBench's file names, read back by `cuset eval`.
suite = glob.glob(os.path.join(cache, "kernelbench-suites", "*"))[0]
answer = "Here is my solution.\n\n```python\n" + honest + "```\n"
server, url = e2e_support.serve_script(work, "kb", {"api_key": "sk-kb", "models": {"coder": {"rules": [{"contains": [""], "content": answer}]}}})
try:
    gen_dir = os.path.join(work, "runs", "generated")
    env = dict(os.environ, CUSET_E2E_KEY="sk-kb")
    p = subprocess.run([cuset, "generate", "--quiet", "--endpoint", url, "--model", "coder", "--api-key-env", "CUSET_E2E_KEY", "--problems", suite,
                        "-k", "2", "--layout", "kernelbench", "--out", gen_dir], capture_output=True, text=True, env=env)
    need(p.returncode == 0, f"generate: {p.stdout} {p.stderr}")
finally:
    server.kill()
files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(gen_dir, "*_kernel.py")))
need(files == [f"level_1_problem_{p}_sample_{s}_kernel.py" for p in (1, 2) for s in (0, 1)], f"generated files {files}")
gen_out = os.path.join(work, "generated-eval")
run("eval", "--candidates", gen_dir, "--problems", suite, "--backend", "sim", "--out", gen_out, "--seed", "5", "--trials", "1", "--quiet")
verdicts = sorted((r["problem"], r["sample"], r["verdict"]) for r in map(json.loads, open(os.path.join(gen_out, "results.jsonl"))))
need(verdicts[:2] == [("level1/kb1_rectifier", 0, "correct"), ("level1/kb1_rectifier", 1, "correct")], f"generated and judged: {verdicts}")

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("KernelBench run folder: judged, its files written, its check beside CuSeT's")
