#!/usr/bin/env python3
"""`cuset loop --slurm` on a real Slurm cluster (CI: the single-node one of scripts/start-local-slurm.sh):
a micro loop (data + warm start, then 8 runs, then the comparison) as a shared job, a job array and a
report job gives the comparison of the same loop run locally; a rerun submits nothing; after one run's
evaluation is undone, only that run is resubmitted. `--dry-run` and `--only` are checked first, with or
without a cluster; the rest exits 77 (skipped) when no cluster answers `sinfo`.

usage: slurm_loop_e2e.py CUSET WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, work = sys.argv[1:3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
config = os.path.join(work, "loop.yaml")
with open(os.path.join(e2e_support.SOURCE, "tests", "loop", "micro-loop.yaml")) as f:
    micro = f.read()
with open(config, "w") as f:
    f.write(micro + "base: {steps: 2}\n")
RUNS = ["untrained-s1", "untrained-s2", "base-s1", "base-s2", "sft-s1", "sft-s2", "cuset-q3-s1", "cuset-q3-s2"]


def run(*args, expect=0):
    r = subprocess.run([cuset, *args], cwd=work, capture_output=True, text=True, timeout=900)
    assert r.returncode == expect, " ".join(args) + "\n" + r.stdout + r.stderr
    return r.stdout + r.stderr


def loop(out, *args, expect=0):
    return run("loop", "--config", config, "--out", os.path.join(work, out), "-q", *args, expect=expect)


# The reference: the same loop in one process.
loop("local")
local = json.load(open(os.path.join(work, "local", "comparison.json")))

# --dry-run: three scripts and three sbatch commands, nothing written.
out = loop("array", "--slurm", "--dry-run", "--partition", "debug", "--time", "00:30:00")
assert "--only shared" in out and "--report-only" in out and "#SBATCH --partition=debug" in out and "#SBATCH --time=00:30:00" in out, out
assert "RUNS=(" + " ".join(f"'{r}'" for r in RUNS) + ")" in out, out
assert "--array=1,2,3,4,5,6,7,8 --dependency=afterok:<shared job> --kill-on-invalid-dep=yes" in out, out
assert "--dependency=afterany:<array job>" in out, out
assert not os.path.exists(os.path.join(work, "array")), "--dry-run wrote files"
# --only: a run before the shared part is refused; an unknown part lists the parts.
err = loop("parts", "--only", "sft-s1", expect=2)
assert "stage data has not finished" in err and "--only shared" in err, err
err = loop("parts", "--only", "sft-s9", expect=2)
assert "no such part" in err and "cuset-q3-s2" in err, err
assert loop("parts", "--only", "shared").startswith("shared: 2 stages run"), "the shared part is data + the warm start"
assert not os.path.exists(os.path.join(work, "parts", "comparison.json")), "--only wrote a comparison"

e2e_support.require_slurm()

array = os.path.join(work, "array")


def wait_for_report(since):
    report = os.path.join(array, "comparison.json")
    deadline = time.time() + 900
    while time.time() < deadline:
        if os.path.exists(report) and os.path.getmtime(report) >= since and not subprocess.run(
                ["squeue", "-h", "-n", "cuset-loop-report,cuset-loop-run,cuset-loop-shared"], capture_output=True, text=True).stdout.strip():
            return json.load(open(report))
        time.sleep(1)
    logs = os.path.join(array, "slurm")
    raise AssertionError("no comparison; logs: " + " | ".join(open(os.path.join(logs, f)).read()[-500:] for f in sorted(os.listdir(logs)) if f.endswith(".log")))


started = time.time()
out = loop("array", "--slurm")
assert "shared job" in out and "run array" in out and "report job" in out, out
got = wait_for_report(started)
assert got["objectives"] == local["objectives"], "the Slurm loop's comparison differs from the local loop's"
for r in RUNS:
    assert os.path.exists(os.path.join(array, "state", f"{r}.eval.done")), r

# Everything finished: nothing to submit.
out = loop("array", "--slurm")
assert "nothing to submit" in out and "job" not in out.replace("nothing to submit", ""), out

# One run's evaluation undone: only that run is submitted again (the shared part is done).
os.remove(os.path.join(array, "state", "sft-s2.eval.done"))
started = time.time()
out = loop("array", "--slurm")
assert "shared job" not in out and "run array" in out and out.split("run array")[1].split("\n")[0].split(":")[1].split() == ["sft-s2"], out
got = wait_for_report(started)
assert got["objectives"] == local["objectives"]
print("ok")
