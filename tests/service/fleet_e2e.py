#!/usr/bin/env python3
"""A fleet on loopback (docs/serve.md "A fleet"): Redis (append-only, as the docs ask), `cuset serve --queue
redis://... --jobs 0` and two `cuset worker` processes. KernelGYM's API answers through it; a worker killed
with SIGKILL while it runs a task has that task taken over and finished by the other; Redis stopped and
started again under load loses nothing (the server answers 503 meanwhile, the workers reconnect); every
task ends with exactly one result.

usage: fleet_e2e.py CUSET SOURCE_DIR WORK_DIR
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_support  # noqa: E402
import service_client  # noqa: E402

cuset, source, work = e2e_support.kernelbench_test_start(sys.argv)
if not shutil.which("redis-server") or not shutil.which("redis-cli"):
    print("SKIP: no redis-server or redis-cli on this machine (scripts/install-deps.sh installs them)")
    sys.exit(77)
reference = open(os.path.join(source, "tests/data/kernelbench_fixture/KernelBench/level1/1_Rectifier.py")).read()
fixtures = os.path.join(source, "tests/data/kernelbench_modelnew/level1/kb1_rectifier")
good = open(os.path.join(fixtures, "single_kernel.py")).read()
wrong = open(os.path.join(fixtures, "buggy_slope.py")).read()
checker = service_client.Checker()
need = checker.need


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


redis_port = free_port()
redis_dir = os.path.join(work, "redis")
os.makedirs(redis_dir)
queue = f"redis://127.0.0.1:{redis_port}"


def start_redis():
    proc = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--dir", redis_dir, "--appendonly", "yes",
                             "--appendfsync", "always", "--save", "", "--logfile", os.path.join(redis_dir, "redis.log")])
    for _ in range(100):
        if redis("PING") == "PONG":
            return proc
        time.sleep(0.1)
    sys.exit("FAIL: redis-server did not start")


def redis(*args):
    p = subprocess.run(["redis-cli", "-p", str(redis_port), *args], capture_output=True, text=True)
    return p.stdout.strip()


def worker(name):
    return service_client.Process(cuset, os.path.join(work, f"{name}.log"), "worker", "--queue", queue, "--jobs", "1", "--backend", "sim",
                                  "--state", os.path.join(work, name), "--reference-cache", os.path.join(work, "references"),
                                  "--reclaim-after", "3")


def call(*args, **kwargs):
    return checker.call(server.url, *args, **kwargs)


def task(task_id, code, **extra):
    return {"task_id": task_id, "kernel_code": code, "reference_code": reference, "backend": "sim", **extra}


def wait_all(ids, timeout=900):
    results = {}
    deadline = time.time() + timeout
    while time.time() < deadline and len(results) < len(ids):
        for i in ids:
            if i not in results:
                status, body, _ = call("GET", f"/results/{i}")
                if status == 200:
                    results[i] = body
        time.sleep(1)
    return results


def one_result_each(ids, what):
    written = {i: redis("HGET", f"cuset:task:{i}", "results_written") for i in ids}
    need(all(v == "1" for v in written.values()), f"{what}: exactly one result per task id: {written}")


redis_proc = start_redis()
server = service_client.Server(cuset, os.path.join(work, "serve.log"), "--port", "0", "--queue", queue, "--jobs", "0", "--backend", "sim",
                               "--state", os.path.join(work, "server"))
workers = {"a": worker("a"), "b": worker("b")}
for w in workers.values():
    w.wait_for("cuset worker:")
deadline = time.time() + 30
while time.time() < deadline and call("GET", "/health")[1].get("workers") != 2:
    time.sleep(0.5)
status, health, _ = call("GET", "/health")
need(health.get("workers") == 2, f"/health counts the fleet's two workers: {health}")

# KernelGYM's API through the fleet.
status, body, _ = call("POST", "/evaluate", task("good-1", good))
need(status == 200 and set(body) == service_client.KERNELGYM_FIELDS and body.get("correctness") is True, f"a correct solution: {status} {body}")
status, body, _ = call("POST", "/evaluate", task("wrong-1", wrong))
need(status == 200 and body.get("error_code") == "CORRECTNESS_ERROR", f"a wrong solution: {status} {body}")

# kill -9 of a worker while it runs a task: the other takes the task over after --reclaim-after.
ids = [f"kill-{i}" for i in range(4)]
for i in ids:
    call("POST", "/v1/tasks", task(i, good, num_correct_trials=20))
victim = f"{socket.gethostname()}-{workers['a'].proc.pid}-"
running = None
deadline = time.time() + 300
while time.time() < deadline and running is None:
    for i in ids:
        if redis("HGET", f"cuset:task:{i}", "state") == "processing" and redis("HGET", f"cuset:task:{i}", "worker").startswith(victim):
            running = i
    time.sleep(0.05)
need(running is not None, "worker a ran one of the tasks")
workers["a"].stop(signal.SIGKILL)
# Worker a may have finished that task between the look and the kill (a few ms): then nothing is reclaimed.
finished_before_kill = running is not None and redis("HGET", f"cuset:task:{running}", "results_written") == "1"
results = wait_all(ids)
need(len(results) == len(ids) and all(r.get("correctness") for r in results.values()),
     f"every task finishes though its worker was killed: {sorted(results)}")
if running and not finished_before_kill:
    need(int(redis("HGET", f"cuset:task:{running}", "deliveries") or 0) == 2, f"the killed worker's task ran twice: {running}")
one_result_each(ids, "after kill -9")
workers["a"] = worker("a2")
workers["a"].wait_for("cuset worker:")

# The server restarted: it holds nothing of its own, the results are the queue's.
server.stop()
server = service_client.Server(cuset, os.path.join(work, "serve2.log"), "--port", "0", "--queue", queue, "--jobs", "0", "--backend", "sim",
                               "--state", os.path.join(work, "server"))
status, body, _ = call("GET", f"/results/{ids[0]}")
need(status == 200 and body.get("correctness") is True, f"a result outlives the server that accepted it: {status} {body}")

# A queue address that is not Redis's is one clear error.
p = subprocess.run([cuset, "worker", "--queue", "http://127.0.0.1:1"], capture_output=True, text=True, timeout=60)
need(p.returncode != 0 and "redis://" in p.stderr + p.stdout, f"a bad --queue is named: {p.returncode} {p.stderr}")

# Redis stopped and started again with work queued and running: nothing is lost.
ids = [f"redis-{i}" for i in range(4)]
for i in ids:
    call("POST", "/v1/tasks", task(i, good))
time.sleep(1)
redis_proc.send_signal(signal.SIGTERM)
redis_proc.wait(timeout=60)
status, body, headers = call("GET", "/status/redis-0")
need(status == 503 and body.get("error_code") == "QUEUE_UNAVAILABLE" and "Retry-After" in headers, f"Redis away is 503: {status} {body}")
time.sleep(3)
redis_proc = start_redis()
results = wait_all(ids)
need(len(results) == len(ids) and all(r.get("correctness") for r in results.values()), f"every task finishes across a Redis restart: {sorted(results)}")
one_result_each(ids, "after a Redis restart")
runs = [redis("HGET", f"cuset:task:{i}", "deliveries") for i in ids]
print(f"runs per task across the Redis restart: {runs} (1: no live worker's task was reclaimed)")
need(all(w.proc.poll() is None for w in workers.values()), "the workers are still running")
need("queue is back" in workers["b"].output(), "worker b said it reconnected")

for w in workers.values():
    w.stop()
server.stop()
redis_proc.send_signal(signal.SIGTERM)
redis_proc.wait(timeout=60)
if checker.failures:
    sys.exit(f"{len(checker.failures)} failure(s)")
print(f"fleet e2e: ok ({checker.checked} responses conform to /openapi.json)")
