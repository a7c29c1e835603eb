#!/usr/bin/env python3
"""`cuset serve` end to end on loopback (docs/serve.md): KernelGYM's API answers a KernelGYM client's
fields (a correct solution, a wrong one, the same task id again, a batch in parallel), the native /v1 API
with its reward, a cancelled task, the faults (malformed JSON, wrong types, unknown fields, a 10 MB body,
missing and wrong tokens), and a server stopped with work queued and started again: nothing accepted is
lost, and each task id has exactly one result.

usage: serve_e2e.py CUSET SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_support  # noqa: E402
import service_client  # noqa: E402

cuset, source, work = e2e_support.kernelbench_test_start(sys.argv)
reference = open(os.path.join(source, "tests/data/kernelbench_fixture/KernelBench/level1/1_Rectifier.py")).read()
fixtures = os.path.join(source, "tests/data/kernelbench_modelnew/level1/kb1_rectifier")
good = open(os.path.join(fixtures, "single_kernel.py")).read()
wrong = open(os.path.join(fixtures, "buggy_slope.py")).read()
triton_kernel = open(os.path.join(fixtures, "triton_relu.py")).read()
KERNELGYM_FIELDS = service_client.KERNELGYM_FIELDS
checker = service_client.Checker()
need = checker.need


class Server(service_client.Server):
    def __init__(self, *extra):
        super().__init__(cuset, os.path.join(work, "serve.log"), "--port", "0", "--backend", "sim", "--jobs", "2", "--devices", "0,1", "--state", os.path.join(work, "state"),
                         "--reference-cache", os.path.join(work, "references"),
                         *extra)


def call(server, *args, **kwargs):
    return checker.call(server.url, *args, **kwargs)


def task(task_id, code, **extra):
    return {"task_id": task_id, "kernel_code": code, "reference_code": reference, "backend": "sim", **extra}


server = Server()
# A second server on the same port is refused (no SO_REUSEPORT sharing of one port by two queues).
port = server.url.rsplit(":", 1)[1]
p = subprocess.run([cuset, "serve", "--port", port, "--state", os.path.join(work, "state-other")], capture_output=True, text=True, timeout=60)
need(p.returncode != 0 and "cannot listen" in p.stderr + p.stdout, f"a port in use is one clear error: {p.returncode} {p.stderr}")
# KernelGYM's API: a correct solution and a wrong one.
status, body, _ = call(server, "POST", "/evaluate", task("good-1", good))
need(status == 200 and set(body) == KERNELGYM_FIELDS, f"/evaluate answers KernelGYM's fields: {status} {body}")
need(body.get("status") == "completed" and body.get("compiled") and body.get("correctness") and body.get("error_code") is None,
     f"a correct solution is completed and correct: {body}")
need(body.get("metadata", {}).get("verdict") == "correct" and body.get("decoy_kernel") is False, f"its verdict and no decoy: {body}")
status, body, _ = call(server, "POST", "/evaluate", task("wrong-1", wrong))
need(status == 200 and body.get("correctness") is False and body.get("error_code") == "CORRECTNESS_ERROR"
     and body["metadata"]["verdict"] == "wrong_answer", f"a wrong solution is a correctness error: {body}")
# KernelGYM's "backend": "triton": a Triton kernel judged as the Triton form (its launch compiled to PTX
# and run on the server's backend): correct, never a sandbox violation for Triton's own start-up.
status, triton_body, _ = call(server, "POST", "/evaluate", dict(task("triton-1", triton_kernel), backend="triton"))
need(status == 200 and triton_body.get("correctness") is True and triton_body.get("metadata", {}).get("verdict") == "correct"
     and triton_body.get("decoy_kernel") is False, f"a Triton kernel is judged correct: {status} {triton_body}")
# The same task id again returns the stored result (even with other code), unless force_refresh.
status, again, _ = call(server, "POST", "/evaluate", task("wrong-1", good))
need(again == body, "the same task id returns its stored result")
status, refreshed, _ = call(server, "POST", "/evaluate", task("wrong-1", good, force_refresh=True))
need(refreshed.get("correctness") is True, f"force_refresh judges it again: {refreshed}")
status, got, _ = call(server, "GET", "/results/good-1")
need(status == 200 and got.get("correctness") is True, f"GET /results: {status} {got}")
status, got, _ = call(server, "GET", "/status/good-1")
need(status == 200 and got.get("status") == "completed", f"GET /status: {got}")
need(call(server, "GET", "/status/nobody")[0] == 404, "an unknown task is 404")

# A batch runs on both workers at once.
start = time.time()
status, batch, _ = call(server, "POST", "/evaluate/batch", {"batch_id": "b1", "tasks": [task(f"b1-{i}", good if i % 2 == 0 else wrong) for i in range(4)]})
need(status == 200 and batch.get("total") == 4 and [r["correctness"] for r in batch["results"]] == [True, False, True, False],
     f"a batch answers every task in order: {status} {batch}")
print(f"batch of 4 on 2 workers: {time.time() - start:.1f} s")

# The native API: asynchronous, with the verdict and a reward.
status, submitted, _ = call(server, "POST", "/v1/tasks", {"kernel_code": good, "reference_code": reference, "backend": "sim", "reward": "ladder"})
need(status == 202 and submitted.get("task_id"), f"/v1/tasks accepts at once with an id: {status} {submitted}")
deadline = time.time() + 300
while time.time() < deadline:
    status, native, _ = call(server, "GET", f"/v1/tasks/{submitted['task_id']}")
    if native.get("status") in ("completed", "failed"):
        break
    time.sleep(0.5)
need(native.get("verdict") == "correct" and native.get("reward") == {"formula": "ladder", "value": 0.4},
     f"/v1 gives the verdict and the ladder's 0.4 for correct without a GPU timing: {native}")
need(call(server, "POST", "/v1/tasks", {**task("r", good), "reward": "money"})[0] == 400, "an unknown reward formula is 400")

# Streaming: GET /v1/events sends each task's /v1 view as it finishes (server-sent events), then `end`.
# A slow task first, two quick ones after it: the quick ones arrive before the slow one.
streamed = ["ev-slow", "ev-quick-1", "ev-quick-2"]
call(server, "POST", "/v1/tasks", task("ev-slow", good, num_correct_trials=100))
call(server, "POST", "/v1/tasks", task("ev-quick-1", wrong, num_correct_trials=1))
call(server, "POST", "/v1/tasks", task("ev-quick-2", good, num_correct_trials=1))
events, event = [], None
with urllib.request.urlopen(f"{server.url}/v1/events?tasks={','.join(streamed)}", timeout=600) as stream:
    need(stream.headers.get("Content-Type", "").startswith("text/event-stream"), f"/v1/events is an event stream: {stream.headers}")
    for raw_line in stream:
        line = raw_line.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[len("event: "):]
        elif line.startswith("data: "):
            events.append((event, json.loads(line[len("data: "):])))
            if event == "end":
                break
results = [data for kind, data in events if kind == "result"]
need([kind for kind, _ in events] == ["result"] * 3 + ["end"], f"one result per task, then end: {events}")
need(sorted(r["task_id"] for r in results) == sorted(streamed) and all(r["status"] == "completed" for r in results),
     f"every task streamed once, finished: {results}")
need(results[-1]["task_id"] == "ev-slow", f"results arrive as they finish, the slow one last: {[r['task_id'] for r in results]}")
need({r["task_id"]: r["verdict"] for r in results} == {"ev-slow": "correct", "ev-quick-1": "wrong_answer", "ev-quick-2": "correct"},
     f"each with its verdict: {results}")
need(call(server, "GET", "/v1/events?tasks=nobody")[0] == 404, "streaming an unknown task is 404")
need(call(server, "GET", "/v1/events?tasks=")[0] == 400, "streaming no task is 400")

# Faults: every malformed request is one 400 naming what is wrong, never a crash.
for raw, needle in [(b"{not json", "not JSON"), (json.dumps({**task("x", good), "num_correct_trials": "5"}).encode(), "num_correct_trials"),
                    (json.dumps({**task("x", good), "colour": 1}).encode(), "unknown field 'colour'"),
                    (json.dumps({**task("../../etc", good)}).encode(), "task_id"), (b"[]", "JSON object"),
                    (json.dumps({"task_id": "x", "reference_code": reference}).encode(), "'kernel_code' is required"),
                    (json.dumps({**task("x", good), "priority": "urgent"}).encode(), "priority")]:
    status, body, _ = call(server, "POST", "/evaluate", raw=raw)
    need(status == 400 and body.get("error_code") == "VALIDATION_ERROR" and needle in body.get("detail", ""), f"{raw[:40]!r}: 400 naming {needle}: {status} {body}")
status, body, _ = call(server, "POST", "/evaluate", raw=json.dumps(task("big", "x" * (10 << 20))).encode())
need(status == 413, f"a 10 MB body is 413: {status}")
status, body, _ = call(server, "POST", "/evaluate", raw=json.dumps(task("big2", "x" * ((1 << 20) + 1))).encode())
need(status == 413 and "kernel_code" in body.get("detail", ""), f"code over 1 MiB is 413 naming the field: {status} {body}")

# A cancelled task: queued behind slow work, then deleted; it never runs.
call(server, "POST", "/v1/tasks", task("slow-a", good, num_correct_trials=50))
call(server, "POST", "/v1/tasks", task("slow-b", good, num_correct_trials=50))
call(server, "POST", "/v1/tasks", task("cancel-me", good, priority="low"))
status, body, _ = call(server, "DELETE", "/tasks/cancel-me")
need(status == 200 and body.get("cancelled") is True, f"DELETE cancels a queued task: {status} {body}")
status, body, _ = call(server, "GET", "/results/cancel-me")
need(body.get("error_code") == "CANCELLED", f"a cancelled task's result says so: {body}")
status, health, _ = call(server, "GET", "/health")
need(health.get("status") == "healthy" and health.get("workers") == 2 and "queue" in health, f"/health: {health}")

# `cuset eval --server`: a KernelBench run folder judged by the server gives the run folder a local run
# gives, with the same verdicts.
runs = os.path.join(work, "runs")
os.makedirs(runs)
kb_fixtures = os.path.join(source, "tests/data/kernelbench_modelnew/level1")
for name, fixture in {"1_sample_0": "kb1_rectifier/single_kernel.py", "1_sample_1": "kb1_rectifier/kernel_writes_input.py",
                      "1_sample_2": "kb1_rectifier/buggy_slope.py", "2_sample_0": "kb2_row_softmax/three_kernels.py"}.items():
    shutil.copy(os.path.join(kb_fixtures, fixture), os.path.join(runs, f"level_1_problem_{name}_kernel.py"))
checkout = os.path.join(source, "tests/data/kernelbench_fixture")
verdicts = {}
for where, extra in (("remote", ["--server", server.url, "--jobs", "4"]), ("local", ["--backend", "sim", "--jobs", "2"])):
    p = subprocess.run([cuset, "eval", "--candidates", runs, "--kernelbench", checkout, "--cache-dir", os.path.join(work, "cache"), "--trials", "2",
                        "--out", os.path.join(work, where), "--quiet", *extra], capture_output=True, text=True, timeout=900)
    need(p.returncode == 0, f"cuset eval ({where}): {p.returncode} {p.stdout[-2000:]} {p.stderr[-2000:]}")
    lines = [json.loads(line) for line in open(os.path.join(work, where, "results.jsonl"))] if p.returncode == 0 else []
    verdicts[where] = {(r["problem"], r["sample"]): r["verdict"] for r in lines}
    for f in ("run.json", "summary.json", "report.html", "junit.xml", "eval_results.json"):
        need(os.path.exists(os.path.join(work, where, f)), f"cuset eval ({where}) writes {f}")
need(len(verdicts["remote"]) == 4 and verdicts["remote"] == verdicts["local"], f"the server's verdicts are a local run's: {verdicts}")
need(json.load(open(os.path.join(work, "remote", "run.json"))).get("backend") == "remote", "run.json says a server judged")

# Stopped with work queued, started again: every accepted task finishes, once.
for i in range(3):
    call(server, "POST", "/v1/tasks", task(f"restart-{i}", good))
server.stop()
server = Server()
results = {}
deadline = time.time() + 600
ids = ["slow-a", "slow-b"] + [f"restart-{i}" for i in range(3)]
while time.time() < deadline and len(results) < len(ids):
    for i in ids:
        status, body, _ = call(server, "GET", f"/results/{i}")
        if status == 200:
            results[i] = body
    time.sleep(1)
need(len(results) == len(ids) and all(r.get("correctness") for r in results.values()), f"nothing accepted is lost across a restart: {sorted(results)}")
server.stop()

# Tokens: beyond loopback a token file is required; with one, a missing or wrong token is 401.
p = subprocess.run([cuset, "serve", "--host", "0.0.0.0", "--port", "0", "--state", os.path.join(work, "state2")], capture_output=True, text=True, timeout=60)
need(p.returncode != 0 and "--token-file" in p.stderr + p.stdout, f"no token beyond loopback is refused: {p.returncode} {p.stderr}")
tokens = os.path.join(work, "tokens")
with open(tokens, "w") as f:
    f.write("# trainer\nsecret-token-1\n")
server = Server("--token-file", tokens)
need(call(server, "GET", "/status/good-1")[0] == 401, "no token is 401")
need(call(server, "GET", "/status/good-1", token="secret-token-2")[0] == 401, "a wrong token is 401")
need(call(server, "GET", "/status/good-1", token="secret-token-1")[0] == 200, "the right token is let in")
need(call(server, "GET", "/health")[0] == 200, "/health needs no token")
server.stop()

need(checker.checked > 40, f"responses checked against the OpenAPI document: {checker.checked}")
if checker.failures:
    sys.exit(f"{len(checker.failures)} failure(s)")
print(f"serve e2e: ok ({checker.checked} responses conform to /openapi.json)")
