#!/usr/bin/env python3
"""benchmarks/device/check.sh without a GPU (issue #62): every stage runs its logic against this build
and stops where the GPU is missing, and the script still reaches its end with every stage's table, so
a bash or Python error in the check is found here, not in a lent device's 15 minutes.

usage: check_dry_run.py SOURCE_DIR BUILD_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

source, build, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ)
env.update({"CUSET_CHECK_BUILD_DIR": build, "CUSET_CHECK_DRY": "1", "OUT": work,
            # The check runs `python3`: the one with the project's torch stands in for the device's.
            "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")})
env.pop("CUSET_CHECK_START", None)
run = subprocess.run(["bash", os.path.join(source, "benchmarks/device/check.sh")], cwd=source, env=env,
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
out = run.stdout
failures = []
for stage in ("build", "gpu_tests", "suite", "agreement", "kernelbench", "triton"):
    if not re.search(rf"stage {stage} \(limit \d+ s\)", out):
        failures.append(f"stage {stage} did not start")
    if not re.search(rf"stage {stage}: (exit \d+|out of time)", out):
        failures.append(f"stage {stage} did not report its end")
for needed in ("stage build: exit 0", "dry run: driver and CUPTI tests passed", "sim agrees with the GPU on", "] done"):
    if needed not in out:
        failures.append(f"no '{needed}' in the output")
# The suite stage's table or its one line saying the GPU run left nothing.
if "no evaluation results in" not in out and "problem " not in out:
    failures.append("the suite stage printed no table")
for bad in ("syntax error", "command not found", "Traceback", "unbound variable"):
    if bad in out:
        failures.append(f"'{bad}' in the output")
if failures:
    print(out)
    print("\n".join(failures))
    sys.exit(1)
print(out[-3000:])
print("device check dry run: every stage ran and reported")
