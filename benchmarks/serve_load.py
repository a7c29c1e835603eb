#!/usr/bin/env python3
"""`cuset serve` under load on loopback (docs/serve.md, issues #50 and #65): concurrent KernelGYM clients send
real KernelBench solutions (CUDA-L1's, with KernelBench's references) to `POST /evaluate` on the `sim`
backend. Prints, per phase, evaluations per hour, p50/p99 latency, the median of each stage (queue, import,
engine start, translate, compile, run, harness: GET /v1/tasks' `stages`), the verdicts, and lost and
duplicated results, which must be 0: every task id answered exactly once, and GET /results agreeing.

Default (issue #50's): one server; a phase with empty caches (every reference imported, every solution
translated and built), then the same solutions again under new task ids (caches warm).

--compare (issue #65's): the references are imported first (their own phase, not measured), then for each
of --clients (e.g. 2,32) and each way of judging (`--per-task-processes`: a `cuset eval` process per task;
warm: a `cuset engine` per worker) a server of its own with caches of its own, so that every kernel is new
to the caches in every phase (the simulator's precompiled prelude and the torch stand-in's, toolchain state, are copied in warm).

With --fleet W the load goes through a fleet on loopback instead: redis-server, `cuset serve --queue
redis://... --jobs 0` and W `cuset worker` processes sharing the --jobs between them (docs/serve.md "A
fleet"). With --triton DIR (../shared/triton-solutions/llmkernel), two more phases with Triton solutions
(`"backend": "triton"`, one GPU-correct level-1 solution per problem, as many as --requests).

usage: serve_load.py CUSET [--clients 4 | 2,32] [--requests 24] [--levels 1,2] [--jobs 2] [--compare] [--fleet W]
                           [--kernelbench ../shared/kernelbench] [--solutions ../shared/kernelbench-solutions/cuda-l1]
                           [--triton ../shared/triton-solutions/llmkernel] [--work /tmp/serve-load]
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("cuset")
ap.add_argument("--clients", default="4", help="concurrent clients; with --compare a list, one set of phases each (2,32)")
ap.add_argument("--requests", type=int, default=24, help="solutions per level")
ap.add_argument("--levels", default="1")
ap.add_argument("--jobs", type=int, default=2)
ap.add_argument("--compare", action="store_true", help="per-task processes against warm engines, every kernel new to the caches")
ap.add_argument("--modes", default="per-task,warm", help="--compare: which ways of judging (per-task, warm)")
ap.add_argument("--fleet", type=int, default=0, help="workers of a Redis fleet (0: the embedded queue)")
here = os.path.dirname(os.path.abspath(__file__))
ap.add_argument("--kernelbench", default=os.path.join(here, "../../shared/kernelbench"))
ap.add_argument("--solutions", default=os.path.join(here, "../../shared/kernelbench-solutions/cuda-l1"))
ap.add_argument("--triton", default=None, help="llmkernel's folder of Triton solutions: their phases follow CUDA's")
ap.add_argument("--work", default="/tmp/serve-load")
args = ap.parse_args()
levels = [int(x) for x in args.levels.split(",")]
client_counts = [int(x) for x in args.clients.split(",")]

pairs = []  # (level, number, solution, reference)
for level in levels:
    references = {}
    for path in glob.glob(os.path.join(args.kernelbench, f"KernelBench/level{level}/*.py")):
        name = os.path.basename(path)
        if name.split("_")[0].isdigit():
            references[int(name.split("_")[0])] = open(path).read()
    chosen = []
    for name in sorted(os.listdir(os.path.join(args.solutions, f"level{level}"))):
        number = int(name.split(".")[0])
        if number in references:
            chosen.append((level, number, open(os.path.join(args.solutions, f"level{level}", name)).read(), references[number]))
    pairs += chosen[: args.requests]
if not pairs:
    sys.exit(f"no solutions with references under {args.solutions} and {args.kernelbench}")
triton_pairs = []
if args.triton:
    level1 = {n: r for lv, n, _, r in pairs if lv == 1}
    seen = set()
    for line in open(os.path.join(args.triton, "labels_derived.jsonl")):
        label = json.loads(line)
        parts = label["kernel"].split("/")
        if parts[1] != "level1" or not label["correct"] or not label.get("is_triton_modelnew"):
            continue
        number = int(parts[2].split("_")[0])
        if number in level1 and number not in seen:
            seen.add(number)
            triton_pairs.append((1, number, open(os.path.join(args.triton, label["kernel"])).read(), level1[number]))
    triton_pairs = triton_pairs[: args.requests]

shutil.rmtree(args.work, ignore_errors=True)
os.makedirs(args.work)
reference_cache = os.path.join(args.work, "references")  # shared by every server of the run


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server (or a fleet) with caches of its own under WORK/NAME; `extra` are serve's (and workers') flags."""

    def __init__(self, name, extra=(), seed_cache=None):
        self.dir = os.path.join(args.work, name)
        os.makedirs(self.dir, exist_ok=True)
        cache = os.path.join(self.dir, "cache")
        # Toolchain state, not any kernel's: the simulator's precompiled prelude and the torch stand-in's.
        for state in glob.glob(os.path.join(seed_cache or "/nonexistent", "cuset/sim-pch")) + glob.glob(
                os.path.join(seed_cache or "/nonexistent", "cuset/kernelbench/host-pch-*")):
            shutil.copytree(state, os.path.join(cache, os.path.relpath(state, seed_cache)))
        self.cache = cache
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        self.helpers = []  # redis-server and the fleet's workers
        serve_args = ["--jobs", str(args.jobs)]
        if args.fleet:
            port = free_port()
            os.makedirs(os.path.join(self.dir, "redis"))
            self.helpers.append(subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", os.path.join(self.dir, "redis"),
                                                  "--appendonly", "yes", "--save", ""], stdout=subprocess.DEVNULL))
            time.sleep(0.5)
            queue = f"redis://127.0.0.1:{port}"
            serve_args = ["--jobs", "0", "--queue", queue]
            for w in range(args.fleet):
                self.helpers.append(subprocess.Popen([args.cuset, "worker", "--queue", queue, "--backend", "sim", "--jobs", str(max(1, args.jobs // args.fleet)),
                                                      "--state", os.path.join(self.dir, f"worker-{w}"), "--reference-cache", reference_cache, *extra],
                                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        self.proc = subprocess.Popen([args.cuset, "serve", "--port", "0", "--backend", "sim", "--rate", "0", *serve_args, "--state",
                                      os.path.join(self.dir, "state"), "--reference-cache", reference_cache, *([] if args.fleet else extra)],
                                     stdout=subprocess.PIPE, stderr=open(os.path.join(self.dir, "serve.log"), "w"), text=True, env=env)
        first = self.proc.stdout.readline()
        if "listening on http://" not in first:
            sys.exit(f"cuset serve did not start: {first}")
        self.url = first.split("listening on ")[1].split()[0]

    def call(self, method, path, body=None):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"}, method=method)
        try:
            with urllib.request.urlopen(req, timeout=3600) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def stop(self):
        for p in [self.proc, *reversed(self.helpers)]:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=60)


STAGES = ["queue", "import", "engine_start", "translate", "compile", "run", "harness"]


def header():
    print("| phase | clients | requests | wall | evaluations/hour | p50 | p99 | " + " | ".join(STAGES) + " | lost | duplicated | verdicts |")
    print("|---|---|---|---|---|---|---|" + "---|" * len(STAGES) + "---|---|---|")


def phase(server, name, pairs, clients, backend="sim"):
    def one(item):
        i, (level, number, solution, reference) = item
        task_id = "-".join("".join(c for c in name if c.isalnum() or c == " ").split()) + f"-{i}-l{level}-{number}"
        start = time.time()
        try:
            status, body = server.call("POST", "/evaluate", {"task_id": task_id, "kernel_code": solution, "reference_code": reference,
                                                             "backend": backend, "timeout": 1800})
        except OSError as e:  # a reset connection: lost, as far as this client knows
            status, body = 0, {"error_code": f"connection: {e}"}
        return task_id, status, body, time.time() - start

    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        answers = list(pool.map(one, enumerate(pairs)))
    wall = time.time() - start
    latencies = sorted(a[3] for a in answers)
    lost = sum(1 for _, status, body, _ in answers if status != 200 or body.get("task_id") is None)
    duplicated = len(answers) - len({a[0] for a in answers})
    disagree = 0
    stages = collections.defaultdict(list)
    for task_id, status, body, _ in answers:
        s, stored = server.call("GET", f"/results/{task_id}")
        if s != 200 or stored != body:
            disagree += 1
        s, native = server.call("GET", f"/v1/tasks/{task_id}")
        for k, v in (native or {}).get("stages", {}).items():
            stages[k.removesuffix("_ms")].append(v / 1000)
    verdicts = collections.Counter(body.get("metadata", {}).get("verdict", body.get("error_code")) for _, _, body, _ in answers)
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]  # noqa: E731
    med = [f"{statistics.median(stages[s]):.2f} s" if stages[s] else "-" for s in STAGES]
    print(f"| {name} | {clients} | {len(answers)} | {wall:.0f} s | {3600 * len(answers) / wall:.0f} | {p(0.5):.2f} s | {p(0.99):.2f} s | "
          + " | ".join(med) + f" | {lost} | {duplicated + disagree} | {dict(verdicts)} |", flush=True)


queue_kind = f"a Redis fleet of {args.fleet} worker process(es)" if args.fleet else "the embedded queue"
print(f"{len(pairs)} CUDA-L1 solutions (levels {args.levels}), {args.jobs} worker(s) on {queue_kind}, sim backend")
running = []  # stopped whatever happens: a server left behind would load the next phases


def start(*a, **k):
    running.append(Server(*a, **k))
    return running[-1]


def stop(server):
    running.remove(server)
    server.stop()


try:
    header()
    if not args.compare:
        server = start("serve")
        phase(server, "uncached", pairs, client_counts[0])
        phase(server, "repeated", pairs, client_counts[0])
        if triton_pairs:
            # Their references are mostly imported by now (the same level-1 problems): the Triton kernels are new.
            phase(server, "triton uncached", triton_pairs, client_counts[0], "triton")
            phase(server, "triton repeated", triton_pairs, client_counts[0], "triton")
        stop(server)
    else:
        # References first, under caches of their own: the phases after it find every reference imported
        # and every kernel new. (The import phase's verdicts are its own: the same kernels, judged once.)
        importer = start("import")
        phase(importer, "references imported (not compared)", pairs, max(client_counts))
        stop(importer)
        for clients in client_counts:
            modes = {"per-task": ("per-task processes", ["--per-task-processes"]), "warm": ("warm engines", [])}
            for mode, extra in [modes[m] for m in args.modes.split(",")]:
                server = start(f"{mode.split()[0]}-{clients}", extra, seed_cache=importer.cache)
                phase(server, mode, pairs, clients)
                stop(server)
finally:
    for server in running:
        server.stop()
