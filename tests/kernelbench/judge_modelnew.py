#!/usr/bin/env python3
"""KernelBench-format solutions (ModelNew + load_inline) judged end to end (docs/kernelbench.md).

Imports the fixture problems with `cuset import kernelbench`, evaluates tests/data/kernelbench_modelnew
on the sim backend and checks, for every file, the verdict its first line expects, the library ops it
must be marked with (or that it is a pure kernel), and that the summary gives pure-kernel metrics
beside all-candidate ones; `cuset data verify` keeps exactly the pairs whose solution is correct.
Where ../shared/kernelbench exists, KernelBench's own example solutions (model_new_ex_*.py) are judged
against their problems (model_ex_*.py) imported the same way, and `--prompt kernelbench-native` is
checked against KernelBench's own prompt constructor.

usage: judge_modelnew.py CUSET SOURCE_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = e2e_support.kernelbench_test_start(sys.argv)
run = e2e_support.cuset_runner(cuset)


def results_of(run_dir):
    with open(os.path.join(run_dir, "results.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


# 1. Our fixtures against the fixture problems.
suite = os.path.join(work, "suite")
run("import", "kernelbench", os.path.join(source, "tests/data/kernelbench_fixture"), "--out", suite, "--levels", "1,2", "--jobs", "2", "--quiet")
solutions = os.path.join(source, "tests/data/kernelbench_modelnew")
out = os.path.join(work, "run")
run("eval", "--backend", "sim", "--problems", suite, "--candidates", solutions, "--out", out, "--seed", "7", "--trials", "2",
    "--model", "fixtures", "--quiet", check=False)
failures = []
results = results_of(out)
expected_files = sum(len([f for f in files if f.endswith(".py")]) for _, _, files in os.walk(solutions))
if len(results) != expected_files:
    failures.append(f"{len(results)} results for {expected_files} solution files")
for r in results:
    first = r["source"].splitlines()[0]
    m = re.match(r"# expect: (\w+)(?: library: ([\w:,]+))?( pure)?", first)
    name = os.path.relpath(r["origin"], solutions)
    if not m:
        failures.append(f"{name}: no '# expect:' line")
        continue
    verdict, library, pure = m.group(1), m.group(2), m.group(3)
    got_ops = r.get("library_ops", [])
    if r["verdict"] != verdict:
        failures.append(f"{name}: {r['verdict']} ({r['reason'][:200]}), expected {verdict}")
    # `# form: F` among the next lines: the frontend that must read it (default: KernelBench's CUDA form).
    form = next((line[len("# form: "):].strip() for line in r["source"].splitlines()[1:4] if line.startswith("# form: ")), "kernelbench")
    if r.get("form") != form:
        failures.append(f"{name}: read as form {r.get('form')!r}, not {form!r}")
    if library and sorted(got_ops) != sorted(library.split(",")):
        failures.append(f"{name}: library ops {got_ops}, expected {library.split(',')}")
    if pure and got_ops:
        failures.append(f"{name}: marked with library ops {got_ops}, expected a pure kernel")
    # Optional lines after it: `# reason: TEXT` (the verdict's reason contains TEXT), `# flags: F1 F2` (the
    # result's flags are exactly these; `# flags:` alone: none), `# kernelbench: true|false [WHY]` (the
    # predicted KernelBench verdict, and why it differs from CuSeT's), `# error_at_least: X` / `# error_below: X`
    # (the largest relative error of the trials' comparisons: a kernel's numerics, as TF32 against IEEE).
    max_rel = max((c.get("max_rel_error", 0.0) for c in r.get("comparisons", [])), default=None)
    for line in r["source"].splitlines()[1:6]:
        for key, holds in (("# error_at_least: ", lambda x, y: x >= y), ("# error_below: ", lambda x, y: x < y)):
            if line.startswith(key) and (max_rel is None or not holds(max_rel, float(line[len(key):]))):
                failures.append(f"{name}: largest relative error {max_rel}, expected {line}")
        if line.startswith("# kernelbench: "):
            want = line[len("# kernelbench: "):].split()
            got = [str(r.get("kernelbench_correct")).lower()] + ([r["kernelbench"]["disagreement"]] if r.get("kernelbench", {}).get("disagreement") else [])
            if got != want:
                failures.append(f"{name}: kernelbench {got} ({r.get('kernelbench', {}).get('issue', '')[:200]}), expected {want}")
        if line.startswith("# reason: ") and line[len("# reason: "):] not in r["reason"]:
            failures.append(f"{name}: reason {r['reason'][:300]!r} does not contain {line[len('# reason: '):]!r}")
        if line.startswith("# flags:") and sorted(line[len("# flags:"):].split()) != sorted(r.get("flags", [])):
            failures.append(f"{name}: flags {r.get('flags', [])}, expected {line[len('# flags:'):].split()}")
with open(os.path.join(out, "summary.json")) as f:
    summary = json.load(f)
model = summary["models"]["fixtures"]
if "pure_kernel" not in model:
    failures.append("summary.json has no pure_kernel metrics although candidates use library ops")
elif not model["pure_kernel"]["correct"] < model["overall"]["correct"]:
    failures.append(f"pure-kernel correct {model['pure_kernel']['correct']} is not below all-candidate {model['overall']['correct']}")
with open(os.path.join(out, "summary.md")) as f:
    if "pure kernels" not in f.read():
        failures.append("summary.md has no pure-kernel row")

# 2. `cuset data verify` admits pairs whose KernelBench solution is correct, and only those.
def fixture(name):
    with open(os.path.join(solutions, "level1", "kb1_rectifier", name)) as f:
        return f.read()


pairs = os.path.join(work, "pairs.jsonl")
with open(pairs, "w") as f:
    f.write(json.dumps({"problem": "level1/kb1_rectifier", "instruction": "Write ModelNew.", "response": "```python\n" + fixture("single_kernel.py") + "```"}) + "\n")
    f.write(json.dumps({"problem": "level1/kb1_rectifier", "instruction": "Write ModelNew.", "response": "```python\n" + fixture("buggy_slope.py") + "```"}) + "\n")
    f.write(json.dumps({"problem": "level1/kb1_rectifier", "messages": [{"role": "user", "content": "Write ModelNew."},
                                                                         {"role": "assistant", "content": fixture("per_batch.py")}]}) + "\n")
run("data", "verify", pairs, "--problems", suite, "--out", os.path.join(work, "verified.jsonl"), "--trials", "2", "--quiet")
with open(os.path.join(work, "verified.jsonl")) as f:
    kept = [json.loads(line) for line in f if line.strip()]
with open(os.path.join(work, "verified.verify.json")) as f:
    verify = json.load(f)
if len(kept) != 2 or verify["rejected"] != 1 or verify["rejects"][0]["verdict"] != "wrong_answer" or verify["rejects"][0]["line"] != 2:
    failures.append(f"data verify kept {len(kept)} pairs, rejects {verify['rejects']}")

# 3. KernelBench's own examples, each solution against its own problem (a KernelBench root built here).
prompts = os.path.join(source, "..", "shared", "kernelbench", "src", "kernelbench", "prompts")
if os.path.isdir(prompts):
    root = os.path.join(work, "kb-examples")
    level = os.path.join(root, "KernelBench", "level1")
    os.makedirs(level)
    pairs = []
    for folder in (prompts, os.path.join(prompts, "few_shot")):
        for f in sorted(os.listdir(folder)):
            m = re.match(r"model_new_ex_(\w+)\.py$", f)
            problem = os.path.join(folder, f"model_ex_{m.group(1)}.py") if m else None
            if problem and os.path.exists(problem) and not re.search(r"(cute|hip|thunderkittens|tilelang|triton)", f):
                number = len(pairs) + 1
                shutil.copy(problem, os.path.join(level, f"{number}_ex_{m.group(1)}.py"))
                pairs.append((number, m.group(1), os.path.join(folder, f)))
    run("import", "kernelbench", root, "--out", os.path.join(work, "kb-suite"), "--levels", "1", "--jobs", "2", "--quiet", check=False)
    cands = os.path.join(work, "kb-cands")
    imported = {}
    for number, name, solution in pairs:
        ids = [d for d in os.listdir(os.path.join(work, "kb-suite", "level1")) if d.startswith(f"kb{number}_")] if os.path.isdir(
            os.path.join(work, "kb-suite", "level1")) else []
        if ids:
            os.makedirs(os.path.join(cands, "level1", ids[0]))
            shutil.copy(solution, os.path.join(cands, "level1", ids[0], f"model_new_ex_{name}.py"))
            imported[ids[0]] = name
    if imported:
        out2 = os.path.join(work, "kb-run")
        run("eval", "--backend", "sim", "--problems", os.path.join(work, "kb-suite"), "--candidates", cands, "--out", out2, "--seed", "3",
            "--trials", "2", "--quiet", check=False)
        for r in results_of(out2):
            print(f"KernelBench example {os.path.basename(r['origin'])}: {r['verdict']} {r.get('library_ops', '')} {r['reason'][:160]}")
            if r["verdict"] not in ("correct", "wrong_answer", "unsupported"):
                failures.append(f"KernelBench's {os.path.basename(r['origin'])}: {r['verdict']}: {r['reason'][:200]}")
        correct = sum(r["verdict"] == "correct" for r in results_of(out2))
        print(f"KernelBench's own examples: {correct} of {len(imported)} correct")
        if correct == 0:
            failures.append("none of KernelBench's own example solutions is correct")

# 4. --prompt kernelbench-native is KernelBench's own request: `cuset problems prompt` against
# KernelBench's prompt_constructor_toml run on the same templates (its package helpers stubbed here).
kb_root = os.path.join(source, "..", "shared", "kernelbench")
constructor = os.path.join(kb_root, "src", "kernelbench", "prompt_constructor_toml.py")
if os.path.exists(constructor):
    import importlib.util
    import tomllib
    import types
    sys.modules["tomli"] = tomllib
    package = types.ModuleType("kernelbench")
    package.__path__ = []
    utils = types.ModuleType("kernelbench.utils")
    top = os.path.abspath(kb_root)
    utils.REPO_TOP_PATH = top
    utils.read_file = lambda path: open(path).read()
    utils.resolve_path = lambda rel: rel if os.path.isabs(rel) else os.path.join(top, rel)
    utils.get_package_resource_path = lambda rel: os.path.join(top, "src", "kernelbench", rel)
    sys.modules["kernelbench"], sys.modules["kernelbench.utils"] = package, utils
    spec = importlib.util.spec_from_file_location("kernelbench.prompt_constructor_toml", constructor)
    theirs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(theirs)
    for problem in ("level1/kb1_rectifier", "level2/kb1_linear_relu_scale"):
        with open(os.path.join(suite, problem, "kernelbench_source.py")) as f:
            want = theirs.get_prompt_for_backend(f.read(), backend="cuda", option="one_shot", precision="fp32")
        got = run("problems", "prompt", problem, "--style", "kernelbench-native", "--kernelbench", kb_root, "--problems", suite).stdout
        expected = f"=== user ===\n{want}\n"
        if got != expected:
            failures.append(f"kernelbench-native prompt of {problem} differs from KernelBench's own "
                            f"(first difference at character {next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))})")
    print("kernelbench-native prompts checked against KernelBench's prompt_constructor_toml")

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"PASS: {len(results)} fixture solutions judged as expected")
