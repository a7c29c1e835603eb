#!/usr/bin/env python3
"""The fleet's kill test in a loop (issue #65, not in CI: a run takes a minute or two). Each run: Redis,
`cuset serve --queue redis://... --jobs 0`, two `cuset worker` processes; 8 tasks, each with a reference
new to the reference cache (so a kill often lands while a worker imports it, the case that used to be
remembered as the reference's failure), half correct solutions and half wrong ones; at a random moment one
worker is killed with SIGKILL and a new one started. Every task must end exactly once (Redis's
`results_written` is 1) with its kernel's own verdict (correct, or CORRECTNESS_ERROR), never as the
reference's or the machine's failure.

usage: fleet_kill_loop.py CUSET [--runs 20] [--tasks 8] [--seed 1] [--work /tmp/kill-loop]
Exit status 0 only when every run lost and duplicated nothing.
"""
import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "../tests/service"))
import service_client  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("cuset")
ap.add_argument("--runs", type=int, default=20)
ap.add_argument("--tasks", type=int, default=8)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--work", default="/tmp/kill-loop")
args = ap.parse_args()
cuset = os.path.abspath(args.cuset)
source = os.path.join(here, "..")
reference = open(os.path.join(source, "tests/data/kernelbench_fixture/KernelBench/level1/1_Rectifier.py")).read()
fixtures = os.path.join(source, "tests/data/kernelbench_modelnew/level1/kb1_rectifier")
good = open(os.path.join(fixtures, "single_kernel.py")).read()
wrong = open(os.path.join(fixtures, "buggy_slope.py")).read()
rng = random.Random(args.seed)
checker = service_client.Checker()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_run(index):
    work = os.path.join(args.work, f"run-{index}")
    os.makedirs(os.path.join(work, "redis"))
    port = free_port()
    redis_proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", os.path.join(work, "redis"), "--appendonly",
                                   "yes", "--save", "", "--logfile", os.path.join(work, "redis.log")])

    def redis(*a):
        return subprocess.run(["redis-cli", "-p", str(port), *a], capture_output=True, text=True).stdout.strip()

    for _ in range(100):
        if redis("PING") == "PONG":
            break
        time.sleep(0.1)
    queue = f"redis://127.0.0.1:{port}"

    def worker(name):
        w = service_client.Process(cuset, os.path.join(work, f"{name}.log"), "worker", "--queue", queue, "--jobs", "1", "--backend", "sim", "--state",
                                   os.path.join(work, name), "--reference-cache", os.path.join(work, "references"), "--reclaim-after", "3")
        w.wait_for("cuset worker:")
        return w

    server = service_client.Server(cuset, os.path.join(work, "serve.log"), "--port", "0", "--queue", queue, "--jobs", "0", "--backend", "sim",
                                   "--state", os.path.join(work, "server"))
    workers = [worker("a"), worker("b")]
    expected = {}
    for t in range(args.tasks):
        task_id = f"run{index}-task{t}"
        code = good if t % 2 == 0 else wrong
        expected[task_id] = t % 2 == 0
        checker.call(server.url, "POST", "/v1/tasks", {"task_id": task_id, "kernel_code": code, "backend": "sim",
                                                       "reference_code": reference + f"\n# kill loop: run {index}, task {t}\n"})
    delay = rng.uniform(0.5, 12.0)
    time.sleep(delay)
    victim = rng.randrange(2)
    victim_prefix = f"{socket.gethostname()}-{workers[victim].proc.pid}-"
    held = [i for i in expected if redis("HGET", f"cuset:task:{i}", "state") == "processing"
            and redis("HGET", f"cuset:task:{i}", "worker").startswith(victim_prefix)]
    workers[victim].stop(signal.SIGKILL)
    workers[victim] = worker(f"replacement-{victim}")
    results = {}
    deadline = time.time() + 1200
    while time.time() < deadline and len(results) < len(expected):
        for i in expected:
            if i not in results:
                status, body, _ = checker.call(server.url, "GET", f"/results/{i}")
                if status == 200:
                    results[i] = body
        time.sleep(1)
    lost = [i for i in expected if i not in results]
    wrong_answers = [f"{i}: {results[i].get('error_code')} {str(results[i].get('error_message'))[:160]}" for i in results
                     if (results[i].get("correctness") is True) != expected[i]
                     or (not expected[i] and results[i].get("error_code") != "CORRECTNESS_ERROR")]
    written = {i: redis("HGET", f"cuset:task:{i}", "results_written") for i in expected}
    duplicated = [i for i, v in written.items() if v not in ("1", "")]
    retried = sum(1 for i in expected if int(redis("HGET", f"cuset:task:{i}", "deliveries") or 0) > 1)
    for w in workers:
        w.stop()
    server.stop()
    redis_proc.send_signal(signal.SIGTERM)
    redis_proc.wait(timeout=60)
    ok = not lost and not duplicated and not wrong_answers
    print(f"run {index + 1:2d}: killed worker {'ab'[victim]} after {delay:4.1f} s holding {held or 'nothing'}; {len(results)}/{len(expected)} answered, "
          f"lost {len(lost)}, duplicated {len(duplicated)}, retried {retried}, not the kernel's verdict {len(wrong_answers)} "
          f"{'ok' if ok else 'FAILED ' + str(lost + duplicated + wrong_answers)}", flush=True)
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    return ok, len(lost), len(duplicated), len(wrong_answers)


if not shutil.which("redis-server"):
    sys.exit("no redis-server (scripts/install-deps.sh installs it)")
shutil.rmtree(args.work, ignore_errors=True)
os.makedirs(args.work)
start = time.time()
totals = [one_run(i) for i in range(args.runs)]
failed = sum(1 for t in totals if not t[0])
print(f"{args.runs} runs of {args.tasks} tasks in {time.time() - start:.0f} s: {args.runs - failed} clean; lost {sum(t[1] for t in totals)}, "
      f"duplicated {sum(t[2] for t in totals)}, answered other than by the kernel's verdict {sum(t[3] for t in totals)}")
sys.exit(1 if failed else 0)
