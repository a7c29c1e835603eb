#!/usr/bin/env python3
"""Data-parallel `cuset train` over c10d Gloo on this machine's cores:

- 2 ranks x 2 rows of the global batch follow the loss curve of 1 process x 4 rows (20 steps, the
  tiny model), to 1e-4 relative, and end with the same weights;
- checkpoints are interchangeable: a 1-process checkpoint resumed by 2 ranks and a 2-rank checkpoint
  resumed by 1 process both continue the single-process curve;
- with optimizer.shard_state the 2-rank run ends with the replicated run's weights, and its sharded
  checkpoint resumes on 2 ranks (and is refused on 1);
- ranks that read different data are refused before the first step;
- a rank killed mid-run ends the job within seconds with an error that names the rank, and a rank that
  stops answering ends it after --dist-timeout; the run folder stays resumable.

usage: train_dp_e2e.py CUSET SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from array import array

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

# The tiny model, 20 steps, a checkpoint at 10.
config, text = e2e_support.tiny_train_config(work, 20, 10)


def train(out, *extra, ranks=1, check=True):
    args = ["train", "--config", config, "--out", out, "-q", *extra]
    if ranks > 1:
        args = ["launch", "--nproc", str(ranks), "--master-port", str(free_port()), "--", *args]
    r = subprocess.run([cuset, *args], capture_output=True, text=True, timeout=900)
    if check:
        assert r.returncode == 0, (args, r.returncode, r.stderr[-3000:])
    return r


free_port, losses, assert_same_curve = e2e_support.free_port, e2e_support.metrics_by_step, e2e_support.assert_same_curve


def safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", t
        begin, end = t["data_offsets"]
        out[name] = array("f", data[begin:end])
    return out


started = time.time()
single = os.path.join(work, "single")
train(single)
want = losses(single)
assert sorted(want) == list(range(1, 21)), sorted(want)
assert "ranks" not in want[1]
t_single = time.time() - started

started = time.time()
dp = os.path.join(work, "dp")
r = train(dp, ranks=2)
t_dp = time.time() - started
got = losses(dp)
assert sorted(got) == list(range(1, 21)), sorted(got)
assert_same_curve(got, want, range(1, 21), "2 ranks x 2 vs 1 x 4")
assert got[20]["ranks"] == 2 and got[20]["allreduce_s_per_step"] > 0, got[20]
assert "trained steps 0..20" in r.stdout and r.stdout.count("trained steps") == 1, r.stdout  # rank 0 alone reports
# The same weights at the end (Adam's normalisation magnifies rounding in tiny gradients, hence not 1e-6).
a, b = safetensors(os.path.join(single, "final", "model.safetensors")), safetensors(os.path.join(dp, "final", "model.safetensors"))
assert a.keys() == b.keys()
worst = max(max(abs(x - y) for x, y in zip(a[k], b[k])) for k in a)
assert worst < 1e-3, f"final weights differ by up to {worst}"
print(f"1 process: {t_single:.1f} s, 2 ranks: {t_dp:.1f} s; loss curves agree; weights within {worst:.2e}")

# Sharded optimizer state (ZeRO-1): each rank keeps AdamW's moments for its share of the parameters,
# updates that share and broadcasts it. The run equals the replicated one; its checkpoint holds one
# state file per rank and resumes on as many ranks, and is refused by name on another number.
sharded_config = os.path.join(work, "sharded.yaml")
assert "\noptimizer:\n" in text, text
with open(sharded_config, "w") as f:
    f.write(text.replace("\noptimizer:\n", "\noptimizer:\n  shard_state: true\n", 1))
sharded = os.path.join(work, "sharded")
r = subprocess.run([cuset, "launch", "--nproc", "2", "--master-port", str(free_port()), "--", "train", "--config", sharded_config, "--out",
                    sharded, "-q"], capture_output=True, text=True, timeout=900)
assert r.returncode == 0, r.stderr[-3000:]
assert_same_curve(losses(sharded), got, range(1, 21), "2 ranks with sharded optimizer state vs replicated")
c = safetensors(os.path.join(sharded, "final", "model.safetensors"))
worst_sharded = max(max(abs(x - y) for x, y in zip(b[k], c[k])) for k in b)
assert worst_sharded == 0.0, f"sharded and replicated final weights differ by up to {worst_sharded}"
step10 = os.path.join(sharded, "checkpoints", "step-10")
assert sorted(f for f in os.listdir(step10) if f.startswith("optimizer")) == ["optimizer-rank-0.pt", "optimizer-rank-1.pt",
                                                                                "optimizer_shards.json"], os.listdir(step10)
assert not [f for f in os.listdir(os.path.join(sharded, "checkpoints")) if f.startswith(".")], "stray optimizer shards"
shard_bytes = os.path.getsize(os.path.join(step10, "optimizer-rank-0.pt")) + os.path.getsize(os.path.join(step10, "optimizer-rank-1.pt"))
whole_bytes = os.path.getsize(os.path.join(dp, "checkpoints", "step-10", "optimizer.pt")) if os.path.exists(os.path.join(dp, "checkpoints", "step-10")) else 0
print(f"sharded optimizer state: rank files {os.path.getsize(os.path.join(step10, 'optimizer-rank-0.pt'))} + "
      f"{os.path.getsize(os.path.join(step10, 'optimizer-rank-1.pt'))} bytes (whole: {whole_bytes}); weights equal to the replicated run")
resumed = os.path.join(work, "sharded-resumed")
shutil.copytree(sharded, resumed)
shutil.rmtree(os.path.join(resumed, "final"))
with open(os.path.join(resumed, "checkpoints", "latest"), "w") as f:
    f.write("step-10")
r = subprocess.run([cuset, "train", "--config", sharded_config, "--out", resumed, "-q", "--resume"], capture_output=True, text=True, timeout=300)
assert r.returncode != 0 and "sharded over 2 ranks" in r.stderr and "same optimizer.shard_state and number of ranks" in r.stderr, r.stderr
r = subprocess.run([cuset, "launch", "--nproc", "2", "--master-port", str(free_port()), "--", "train", "--config", sharded_config, "--out",
                    resumed, "-q", "--resume"], capture_output=True, text=True, timeout=900)
assert r.returncode == 0, r.stderr[-3000:]
assert_same_curve(losses(resumed), got, range(1, 21), "sharded run resumed at step 10 on 2 ranks")

# Checkpoints are interchangeable between world sizes.
for first, then in ((1, 2), (2, 1)):
    out = os.path.join(work, f"switch-{first}-{then}")
    train(out, "--max-steps", "10", ranks=first)
    train(out, "--resume", ranks=then)
    curve = losses(out)
    assert sorted(curve) == list(range(1, 21)), sorted(curve)
    assert_same_curve(curve, want, range(1, 21), f"{first} process(es) then {then}")

# A global batch that does not split evenly is refused before anything starts.
odd = os.path.join(work, "odd.yaml")
with open(odd, "w") as f:
    f.write(text.replace("size: 4", "size: 3"))
r = subprocess.run([cuset, "launch", "--nproc", "2", "--master-port", str(free_port()), "--", "train", "--config", odd, "--out",
                    os.path.join(work, "odd"), "-q"], capture_output=True, text=True, timeout=300)
assert r.returncode != 0 and "batch.size 3" in r.stderr and "WORLD_SIZE=2" in r.stderr, r.stderr


def rank_env(rank, port):
    return dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                MASTER_PORT=str(port))


# Ranks that read different data (a file not on shared storage) are refused before the first step.
data = os.path.join(e2e_support.SOURCE, "data", "sft-tiny.jsonl")
assert data in text, text
other_data = os.path.join(work, "other.jsonl")
with open(data) as f, open(other_data, "w") as g:
    g.writelines(f.readlines()[1:])
other = os.path.join(work, "other.yaml")
with open(other, "w") as f:
    f.write(text.replace(data, other_data))
port = free_port()
procs = [subprocess.Popen([cuset, "train", "--config", c, "--out", os.path.join(work, "mixed"), "-q", "--dist-timeout", "60"], env=rank_env(rank, port),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for rank, c in enumerate((config, other))]
for p in procs:
    assert p.wait(timeout=300) != 0
    err = p.stderr.read()
    assert "the ranks' training inputs differ" in err, err
assert not os.path.exists(os.path.join(work, "mixed", "metrics.jsonl")), "a mixed run started training"


def start_ranks(out, port, timeout_s):
    procs = []
    for rank in range(2):
        procs.append(subprocess.Popen([cuset, "train", "--config", config, "--out", out, "-q", "--max-steps", "200", "--dist-timeout",
                                       str(timeout_s)], env=rank_env(rank, port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    metrics = os.path.join(out, "metrics.jsonl")
    deadline = time.time() + 300
    while time.time() < deadline:
        if os.path.exists(metrics) and len(open(metrics).read().splitlines()) >= 2:
            return procs
        assert all(p.poll() is None for p in procs), [p.stderr.read() for p in procs]
        time.sleep(0.1)
    raise AssertionError("the ranks made no progress")


def stop_rank_1(out, timeout_s, how):
    """Starts two ranks, sends rank 1 `how` once they are training; returns rank 0's status, the
    seconds it took to end, and its stderr."""
    procs = start_ranks(out, free_port(), timeout_s)
    procs[1].send_signal(how)
    sent = time.time()
    rc = procs[0].wait(timeout=120)
    waited = time.time() - sent
    err = procs[0].stderr.read()
    procs[1].kill()
    procs[1].wait()
    return rc, waited, err


# A rank killed mid-run: the survivor stops at its next collective with an error naming itself.
dead = os.path.join(work, "dead")
rc, waited, err = stop_rank_1(dead, 120, signal.SIGKILL)
assert rc != 0 and waited < 30, (rc, waited, err)
assert "rank 0 of 2" in err and "Another rank has stopped" in err and "--resume" in err, err
# Whatever was written is whole, and the run resumes (no checkpoint yet: it starts over, as one process).
for line in open(os.path.join(dead, "metrics.jsonl")):
    json.loads(line)
train(dead, "--resume", "--max-steps", "3")
assert_same_curve(losses(dead), want, range(1, 4), "resumed after a dead rank")

# A rank that stops answering (SIGSTOP): the other gives up after --dist-timeout.
rc, waited, err = stop_rank_1(os.path.join(work, "hung"), 5, signal.SIGSTOP)
assert rc != 0 and waited < 60, (rc, waited, err)
assert "did not answer within 5 s" in err, err
print(f"hung rank: the job ended {waited:.1f} s after a rank went quiet (timeout 5 s)")
print("ok")
