#!/usr/bin/env python3
"""Requests/s and client overhead of `cuset generate --endpoint` against the local scripted server,
at concurrency 1, 8 and 64 (one request per sample, so every sample is one HTTP exchange).

usage: benchmarks/endpoint_throughput.py [CUSET] [--samples K] [--server-workers N] [--delay S]

Client CPU is the cuset process's user + system time (getrusage of the child), minus the same
command's cost when every sample is already finished (suite loading, prompt rendering, file
handling): what remains is the cost of the requests themselves. --delay makes the server take S
seconds per answer, as a model does; with it, req/s should grow with concurrency until the server's
workers are the limit.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.dirname(here)
parser = argparse.ArgumentParser()
parser.add_argument("cuset", nargs="?", default=os.path.join(source, "build/default/cli/cuset"))
parser.add_argument("--samples", type=int, default=16)
parser.add_argument("--server-workers", type=int, default=2)
parser.add_argument("--delay", type=float, default=0.0)
args = parser.parse_args()

work = tempfile.mkdtemp(prefix="cuset-endpoint-bench-")
try:
    script = os.path.join(work, "script.json")
    with open(script, "w") as f:
        json.dump({"delay_s": args.delay, "models": {"m": {"default": {"content": "```cuda\n// " + "x" * 2000 + "\n```"}}}}, f)
    port_file = os.path.join(work, "port")
    server = subprocess.Popen([sys.executable, os.path.join(source, "tests/models/openai_test_server.py"), "--script", script,
                               "--port-file", port_file, "--workers", str(args.server_workers)])
    while not os.path.exists(port_file):
        time.sleep(0.02)
    url = "http://127.0.0.1:%s/v1" % open(port_file).read().strip()

    def run(out, concurrency, resume):
        cmd = [args.cuset, "generate", "--quiet", "--endpoint", url, "--model", "m", "--problems", os.path.join(source, "problems"),
               "-k", str(args.samples), "--no-n", "--concurrency", str(concurrency), "--out", out]
        if resume:
            cmd.append("--resume")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            sys.exit(r.stderr)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, r.stdout

    print(f"server: {args.server_workers} pre-forked Python worker(s), {args.delay * 1000:.0f} ms per answer; "
          f"suite problems x {args.samples} samples, one request each\n")
    print("| concurrency | requests | wall s | fixed s | req/s | client CPU s (fixed) | client CPU per request (us) | client busy |")
    print("|---|---|---|---|---|---|---|---|")
    for concurrency in (1, 8, 64):
        out = os.path.join(work, f"c{concurrency}.jsonl")
        wall, cpu, stdout = run(out, concurrency, False)
        requests = sum(1 for _ in open(out))
        # The fixed cost, with nothing left to request: the least of three runs (it also parses the
        # finished file, which the first run did not, so the request cost is if anything understated).
        fixed = [run(out, concurrency, True) for _ in range(3)]
        fixed_wall = min(f[0] for f in fixed)
        fixed_cpu = min(f[1] for f in fixed)
        request_wall = max(1e-9, wall - fixed_wall)
        request_cpu = max(0.0, cpu - fixed_cpu)
        print(f"| {concurrency} | {requests} | {wall:.2f} | {fixed_wall:.2f} | {requests / request_wall:.0f} | {cpu:.2f} ({fixed_cpu:.2f}) | "
              f"{request_cpu / requests * 1e6:.0f} | {100 * request_cpu / request_wall:.0f}% of a core |")
finally:
    server.terminate()
    server.wait()
    shutil.rmtree(work, ignore_errors=True)
