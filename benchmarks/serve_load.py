#!/usr/bin/env python3
"""`cuset serve` under load on loopback (docs/serve.md, issue #50): C concurrent KernelGYM clients send N
real KernelBench level-1 solutions (CUDA-L1's, with KernelBench's references) to `POST /evaluate` on the
`sim` backend, first with empty caches (every reference imported, every solution translated and built),
then the same solutions again under new task ids (caches warm). Prints evaluations per hour, p50/p99
latency, the verdicts, and lost and duplicated results, which must be 0: every task id answered exactly
once, and GET /results agreeing with the answer.

With --fleet W the same load goes through a fleet on loopback instead: redis-server, `cuset serve --queue
redis://... --jobs 0` and W `cuset worker` processes sharing the --jobs between them (docs/serve.md "A
fleet"): the queue's cost beside the embedded one's on the same machine.

With --triton DIR (../shared/triton-solutions/llmkernel) the same two phases follow with Triton solutions
(`"backend": "triton"`, one GPU-correct level-1 solution per problem, as many as --requests): Triton's
throughput beside CUDA's, on the same server.

usage: serve_load.py CUSET [--clients 4] [--requests 24] [--jobs 2] [--fleet W] [--kernelbench ../shared/kernelbench]
                           [--solutions ../shared/kernelbench-solutions/cuda-l1] [--triton ../shared/triton-solutions/llmkernel]
                           [--work /tmp/serve-load]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("cuset")
ap.add_argument("--clients", type=int, default=4)
ap.add_argument("--requests", type=int, default=24)
ap.add_argument("--jobs", type=int, default=2)
ap.add_argument("--fleet", type=int, default=0, help="workers of a Redis fleet (0: the embedded queue)")
here = os.path.dirname(os.path.abspath(__file__))
ap.add_argument("--kernelbench", default=os.path.join(here, "../../shared/kernelbench"))
ap.add_argument("--solutions", default=os.path.join(here, "../../shared/kernelbench-solutions/cuda-l1"))
ap.add_argument("--triton", default=None, help="llmkernel's folder of Triton solutions: their phases follow CUDA's")
ap.add_argument("--work", default="/tmp/serve-load")
args = ap.parse_args()

references = {}
for name in os.listdir(os.path.join(args.kernelbench, "KernelBench/level1")):
    if name.endswith(".py") and name.split("_")[0].isdigit():
        references[int(name.split("_")[0])] = open(os.path.join(args.kernelbench, "KernelBench/level1", name)).read()
pairs = []
for name in sorted(os.listdir(os.path.join(args.solutions, "level1"))):
    number = int(name.split(".")[0])
    if number in references:
        pairs.append((number, open(os.path.join(args.solutions, "level1", name)).read(), references[number]))
pairs = pairs[: args.requests]
if not pairs:
    sys.exit(f"no level-1 solutions with references under {args.solutions} and {args.kernelbench}")
triton_pairs = []
if args.triton:
    seen = set()
    for line in open(os.path.join(args.triton, "labels_derived.jsonl")):
        label = json.loads(line)
        parts = label["kernel"].split("/")
        if parts[1] != "level1" or not label["correct"] or not label.get("is_triton_modelnew"):
            continue
        number = int(parts[2].split("_")[0])
        if number in references and number not in seen:
            seen.add(number)
            triton_pairs.append((number, open(os.path.join(args.triton, label["kernel"])).read(), references[number]))
    triton_pairs = triton_pairs[: args.requests]

shutil.rmtree(args.work, ignore_errors=True)
os.makedirs(args.work)
env = dict(os.environ, XDG_CACHE_HOME=os.path.join(args.work, "cache"))  # empty caches: the cold phase is cold
helpers = []  # redis-server and the fleet's workers
serve_args = ["--jobs", str(args.jobs)]
if args.fleet:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        redis_port = sock.getsockname()[1]
    os.makedirs(os.path.join(args.work, "redis"))
    helpers.append(subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--dir", os.path.join(args.work, "redis"),
                                     "--appendonly", "yes", "--save", ""], stdout=subprocess.DEVNULL))
    time.sleep(0.5)
    queue = f"redis://127.0.0.1:{redis_port}"
    serve_args = ["--jobs", "0", "--queue", queue]
    for w in range(args.fleet):
        helpers.append(subprocess.Popen([args.cuset, "worker", "--queue", queue, "--backend", "sim", "--jobs", str(max(1, args.jobs // args.fleet)),
                                         "--state", os.path.join(args.work, f"worker-{w}"),
                                         "--reference-cache", os.path.join(args.work, "references")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
server = subprocess.Popen([args.cuset, "serve", "--port", "0", "--backend", "sim", "--rate", "0", *serve_args, "--state", os.path.join(args.work, "state"),
                           "--reference-cache", os.path.join(args.work, "references")],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
first = server.stdout.readline()
if "listening on http://" not in first:
    sys.exit(f"cuset serve did not start: {first}")
url = first.split("listening on ")[1].split()[0]


def call(method, path, body=None):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=3600) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def phase(name, pairs, backend="sim"):
    def one(item):
        i, (number, solution, reference) = item
        task_id = f"{name.replace(' ', '-')}-{i}-{number}"
        start = time.time()
        status, body = call("POST", "/evaluate", {"task_id": task_id, "kernel_code": solution, "reference_code": reference, "backend": backend,
                                                  "timeout": 1800})
        return task_id, status, body, time.time() - start

    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
        answers = list(pool.map(one, enumerate(pairs)))
    wall = time.time() - start
    latencies = sorted(a[3] for a in answers)
    lost = sum(1 for _, status, body, _ in answers if status != 200 or body.get("task_id") is None)
    duplicated = len(answers) - len({a[0] for a in answers})
    disagree = 0
    for task_id, status, body, _ in answers:
        s, stored = call("GET", f"/results/{task_id}")
        if s != 200 or stored != body:
            disagree += 1
    verdicts = collections.Counter(body.get("metadata", {}).get("verdict", body.get("error_code")) for _, _, body, _ in answers)
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]  # noqa: E731
    print(f"| {name} | {len(answers)} | {wall:.0f} s | {3600 * len(answers) / wall:.0f} | {p(0.5):.1f} s | {p(0.99):.1f} s | "
          f"{lost} | {duplicated + disagree} | {dict(verdicts)} |")


queue_kind = f"a Redis fleet of {args.fleet} worker process(es)" if args.fleet else "the embedded queue"
print(f"cuset serve on {url}: {len(pairs)} CUDA-L1 level-1 solutions, {args.clients} clients, {args.jobs} worker(s) on {queue_kind}, sim backend")
print("| phase | requests | wall | evaluations/hour | p50 | p99 | lost | duplicated | verdicts |")
print("|---|---|---|---|---|---|---|---|---|")
phase("uncached", pairs)
phase("repeated", pairs)
if triton_pairs:
    # Their references are mostly imported by now (the same level-1 problems): the Triton kernels are new.
    phase("triton uncached", triton_pairs, "triton")
    phase("triton repeated", triton_pairs, "triton")
for p in [server, *reversed(helpers)]:
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
