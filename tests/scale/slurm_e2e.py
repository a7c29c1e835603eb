#!/usr/bin/env python3
"""`cuset slurm eval` on a real Slurm cluster (CI: a single-node one on localhost, started by
scripts/start-local-slurm.sh): a 3-shard job array over a sim run plus the merge-and-report job; the
merged verdicts equal the unsharded run's; a rerun submits nothing, and after a shard is undone only
that shard. Exits 77 (skipped) when no cluster answers `sinfo`.

usage: slurm_e2e.py CUSET SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = sys.argv[1:4]
e2e_support.require_slurm()

shutil.rmtree(work, ignore_errors=True)
cands = os.path.join(work, "cands")
e2e_support.copy_solutions(["level1/relu", "level1/elu", "level1/row_max", "level1/layernorm"], cands)
problems = os.path.join(source, "problems")
eval_args = ["--backend", "sim", "--problems", problems, "--candidates", cands, "--trials", "1"]


def run(*args, expect=0):
    r = subprocess.run([cuset] + list(args), cwd=work, capture_output=True, text=True)
    assert r.returncode == expect, " ".join(args) + "\n" + r.stdout + r.stderr
    return r.stdout + r.stderr


def wait_for_merge(out, seconds=900):
    report = os.path.join(work, out, "merged", "report.html")
    deadline = time.time() + seconds
    while time.time() < deadline:
        if os.path.exists(report):
            return
        time.sleep(1)
    logs = os.path.join(work, out, "slurm")
    raise AssertionError("no merged report; logs: " + " | ".join(open(os.path.join(logs, f)).read()[-500:] for f in sorted(os.listdir(logs)) if f.endswith(".log")))


run("eval", "--quiet", *eval_args, "--seed", "11", "--out", "full")
full = e2e_support.verdicts(os.path.join(work, "full"))

# Dry run: the scripts and commands, nothing written.
out = run("slurm", "eval", *eval_args, "--out", "array", "--shards", "3", "--seed", "11", "--dry-run")
assert "--shard \"${SLURM_ARRAY_TASK_ID}/3\"" in out and "--dependency=afterany:" in out and "merge" in out, out
assert not os.path.exists(os.path.join(work, "array")), "--dry-run wrote files"

out = run("slurm", "eval", *eval_args, "--out", "array", "--shards", "3", "--seed", "11")
assert "submitted shards 1,2,3 as array job" in out and "merge-and-report job" in out, out
wait_for_merge("array")
assert e2e_support.verdicts(os.path.join(work, "array", "merged")) == full
assert "nothing to submit" in run("slurm", "eval", *eval_args, "--out", "array", "--shards", "3")

# Shard 2 undone (a preempted task): only it is resubmitted, then merged again.
run_json = os.path.join(work, "array", "shards", "2", "run.json")
record = json.load(open(run_json))
record["status"] = "running"
json.dump(record, open(run_json, "w"))
shutil.rmtree(os.path.join(work, "array", "merged"))
out = run("slurm", "eval", *eval_args, "--out", "array", "--shards", "3")
assert "submitted shards 2 as array job" in out, out
wait_for_merge("array")
assert e2e_support.verdicts(os.path.join(work, "array", "merged")) == full

# Other arguments for the same run folder are refused.
assert "other arguments" in run("slurm", "eval", *eval_args[:-1], "2", "--out", "array", "--shards", "3", expect=2)
print("slurm e2e: ok")
