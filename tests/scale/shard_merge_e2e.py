#!/usr/bin/env python3
"""`cuset eval --shard I/N` + `cuset merge` equal one unsharded `cuset eval` (sim backend), and merge
refuses what is not one evaluation, naming the difference.

usage: shard_merge_e2e.py CUSET SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
problems_dir = os.path.join(source, "problems")
cands = os.path.join(work, "cands")
chosen = ["level1/relu", "level1/elu", "level1/row_max", "level1/softmax_rows", "level1/layernorm", "level2/swiglu_act"]
e2e_support.copy_solutions(chosen, cands)


def run(*args, expect=0):
    r = subprocess.run([cuset] + list(args), cwd=work, capture_output=True, text=True)
    ok = r.returncode != 0 if expect is None else r.returncode == expect  # None: any failure
    assert ok, " ".join(args) + "\n" + r.stdout + r.stderr
    return r.stdout + r.stderr


def evaluate(out, *extra, expect=0):
    return run("eval", "--quiet", "--backend", "sim", "--problems", problems_dir, "--candidates", cands, "--trials", "1", "--out", out,
               *extra, expect=expect)


def results(run_dir):
    return e2e_support.verdicts(os.path.join(work, run_dir))


evaluate("full", "--seed", "11")
for i in (1, 2, 3):
    evaluate(f"shard-{i}", "--seed", "11", "--shard", f"{i}/3")
run("merge", "shard-1", "shard-2", "shard-3", "--out", "merged")

full, merged = results("full"), results("merged")
assert full == merged, {k: (full.get(k), merged.get(k)) for k in set(full) | set(merged) if full.get(k) != merged.get(k)}
# Every problem's samples are in one shard, and every shard has work.
owners = {}
for i in (1, 2, 3):
    shard = json.load(open(os.path.join(work, f"shard-{i}", "run.json")))["shard"]
    assert shard["problems"], f"shard {i} is empty"
    for p in shard["problems"]:
        assert p not in owners, p
        owners[p] = i
assert sorted(owners) == sorted(chosen), owners
sf, sm = (json.load(open(os.path.join(work, d, "summary.json"))) for d in ("full", "merged"))
assert sf["models"] == sm["models"], "the merged run's metrics differ from the unsharded run's"
merged_run = json.load(open(os.path.join(work, "merged", "run.json")))
assert [s["index"] for s in merged_run["shards"]] == [1, 2, 3] and merged_run["candidates_total"] == len(full)
assert os.path.exists(os.path.join(work, "merged", "report.html"))
# Merging again rewrites the same verdicts.
run("merge", "shard-1", "shard-2", "shard-3", "--out", "merged")
assert results("merged") == full

# A resumed shard judges nothing again.
out = evaluate("shard-2", "--seed", "11", "--shard", "2/3", "--resume")
assert "resuming: " in out and "already done" in out, out

# Refusals, each naming the difference.
assert "missing" in run("merge", "shard-1", "shard-2", "--out", "m2", expect=2)
assert "both shard 1/3" in run("merge", "shard-1", "shard-1", "shard-2", "shard-3", "--out", "m3", expect=2)
evaluate("other-seed", "--seed", "12", "--shard", "3/3")
assert "seed" in run("merge", "shard-1", "shard-2", "other-seed", "--out", "m4", expect=2)
run("eval", "--quiet", "--backend", "sim", "--problems", problems_dir, "--candidates", cands, "--trials", "2", "--out", "other-trials",
    "--seed", "11", "--shard", "3/3")
assert "trials" in run("merge", "shard-1", "shard-2", "other-trials", "--out", "m5", expect=2)
run_json = os.path.join(work, "shard-3", "run.json")
record = json.load(open(run_json))
record["status"] = "running"
json.dump(record, open(run_json, "w"))
assert "not finished" in run("merge", "shard-1", "shard-2", "shard-3", "--out", "m6", expect=2)
assert "--seed" in evaluate("no-seed", "--shard", "1/3", expect=2)
assert "I/N" in evaluate("bad", "--seed", "1", "--shard", "4/3", expect=None)
print("shard/merge e2e: ok")
