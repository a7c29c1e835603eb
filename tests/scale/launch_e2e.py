#!/usr/bin/env python3
"""`cuset launch`: torchrun's environment per rank, the first failure ends the others, signals are
passed on. The ranks run /bin/sh (CUSET_LAUNCH_BINARY) so the test sees exactly what they receive.

usage: launch_e2e.py CUSET WORK_DIR
"""
import os
import shutil
import signal
import subprocess
import sys
import time

cuset, work = sys.argv[1:3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
sh = dict(os.environ, CUSET_LAUNCH_BINARY="/bin/sh")


def launch(*args, env=sh, **kw):
    return subprocess.run([cuset, "launch", *args], env=env, capture_output=True, text=True, **kw)


# Ranks 3..5 of a 2-node job: each writes what it was given.
r = launch("--nproc", "3", "--nnodes", "2", "--node-rank", "1", "--master-addr", "10.0.0.7", "--master-port", "29999", "--",
           "-c", 'echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR $MASTER_PORT" > "$0/rank-$RANK"', work)
assert r.returncode == 0, r.stderr
for local in range(3):
    rank = 3 + local
    got = open(os.path.join(work, f"rank-{rank}")).read().split()
    assert got == [str(rank), str(local), "6", "3", "1", "10.0.0.7", "29999"], got

# The first failure ends the others and is the launch's status.
start = time.time()
r = launch("--nproc", "3", "--", "-c", 'if [ "$RANK" = 1 ]; then exit 3; fi; exec sleep 60')
assert r.returncode == 3, (r.returncode, r.stderr)
assert time.time() - start < 20, "the other ranks were not stopped"
assert "rank 1 failed" in r.stderr, r.stderr

# SIGTERM to the launcher reaches every rank.
pids = os.path.join(work, "pids")
os.makedirs(pids)
proc = subprocess.Popen([cuset, "launch", "--nproc", "2", "--", "-c", 'echo $$ > "$0/$RANK"; exec sleep 60', pids], env=sh,
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
for _ in range(500):
    if len(os.listdir(pids)) == 2:
        break
    time.sleep(0.01)
time.sleep(0.2)
proc.send_signal(signal.SIGTERM)
assert proc.wait(timeout=30) == 128 + signal.SIGTERM
for f in os.listdir(pids):
    pid = int(open(os.path.join(pids, f)).read())
    try:
        os.kill(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive, f"rank {f} (pid {pid}) outlived the launcher"

# A real subcommand, and a missing one.
r = launch("--nproc", "2", "--", "problems", "list", env=dict(os.environ), cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
assert r.returncode == 0 and r.stdout.count("level1/relu") == 2, r.stdout[-300:] + r.stderr
assert "only `train` is data-parallel" in r.stderr, r.stderr  # a subcommand that ignores ranks runs whole in each: said
assert launch("--nproc", "0", "--", "x").returncode != 0
print("launch e2e: ok")
