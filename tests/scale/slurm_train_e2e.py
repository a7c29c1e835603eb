#!/usr/bin/env python3
"""Data-parallel `cuset train` started the way docs/scale-out.md tells Slurm users to: one batch job of 2
tasks, `srun` exporting Slurm's task numbers under torchrun's names. The 2-rank run follows the
single-process loss curve, and a resubmitted job (`--resume`) continues it. Exits 77 (skipped) when no
cluster answers `sinfo`.

usage: slurm_train_e2e.py CUSET SOURCE_DIR WORK_DIR
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = sys.argv[1:4]
e2e_support.require_slurm()
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

config, _ = e2e_support.tiny_train_config(work, 8, 4)

single = os.path.join(work, "single")
r = subprocess.run([cuset, "train", "--config", config, "--out", single, "-q"], capture_output=True, text=True, timeout=600)
assert r.returncode == 0, r.stderr


losses = e2e_support.metrics_by_step
port = e2e_support.free_port()
out = os.path.join(work, "srun")
script = os.path.join(work, "train.sbatch")
with open(script, "w") as f:
    f.write(f"""#!/bin/bash
#SBATCH --job-name=cuset-train-dp
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=1
#SBATCH --output={work}/train-%j.log
#SBATCH --chdir={work}
set -euo pipefail
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT={port}
srun --kill-on-bad-exit=1 bash -c 'RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID WORLD_SIZE=$SLURM_NTASKS \\
  LOCAL_WORLD_SIZE=$SLURM_NTASKS_PER_NODE exec {cuset} train --config {config} --out {out} --resume --quiet "$@"' bash "$@"
""")


def submit(*args):
    r = subprocess.run(["sbatch", "--wait", script, *args], capture_output=True, text=True, timeout=900)
    logs = " | ".join(open(os.path.join(work, f)).read()[-1500:] for f in sorted(os.listdir(work)) if f.startswith("train-"))
    assert r.returncode == 0, r.stdout + r.stderr + logs
    return logs


# First job: 4 of the 8 steps; the second, resubmitted, continues from the step-4 checkpoint.
submit("--max-steps", "4")
assert sorted(losses(out)) == [1, 2, 3, 4]
logs = submit()
assert "resuming from" in logs and "step 4" in logs, logs
want, got = losses(single), losses(out)
assert sorted(got) == list(range(1, 9)), sorted(got)
assert all(got[step]["ranks"] == 2 for step in got), got
e2e_support.assert_same_curve(got, want, range(1, 9), "2 srun tasks")
print("ok")
