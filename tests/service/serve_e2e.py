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
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = e2e_support.kernelbench_test_start(sys.argv)
reference = open(os.path.join(source, "tests/data/kernelbench_fixture/KernelBench/level1/1_Rectifier.py")).read()
fixtures = os.path.join(source, "tests/data/kernelbench_modelnew/level1/kb1_rectifier")
good = open(os.path.join(fixtures, "single_kernel.py")).read()
wrong = open(os.path.join(fixtures, "buggy_slope.py")).read()
failures = []
KERNELGYM_FIELDS = {"task_id", "status", "compiled", "correctness", "decoy_kernel", "reference_runtime", "kernel_runtime", "speedup",
                    "metadata", "error_message", "error_code"}


def need(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


class Server:
    def __init__(self, *extra):
        self.proc = subprocess.Popen([cuset, "serve", "--port", "0", "--backend", "sim", "--jobs", "2", "--state", os.path.join(work, "state"), *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        if "listening on http://" not in line:
            sys.exit(f"FAIL: cuset serve did not start: {line}{self.proc.stdout.read()}")
        self.url = line.split("listening on ")[1].split()[0]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)


openapi = None  # the server's own document, read at the first call: every response is checked against it
checked = 0


def resolve(schema):
    while "$ref" in schema:
        node = openapi
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def conforms(value, schema, where):
    """The subset of JSON Schema the document uses: type (lists, null), enum, required, properties,
    additionalProperties false, items, oneOf, pattern, min/max and item counts."""
    import re
    schema = resolve(schema)
    if "oneOf" in schema:
        errors = [conforms(value, s, where) for s in schema["oneOf"]]
        return None if any(e is None for e in errors) else f"{where}: matches none of oneOf ({errors})"
    types = schema.get("type")
    if types is not None:
        names = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
        ok = False
        for t in (types if isinstance(types, list) else [types]):
            if t == "integer":
                ok |= isinstance(value, int) and not isinstance(value, bool)
            elif t == "number":
                ok |= isinstance(value, (int, float)) and not isinstance(value, bool)
            else:
                ok |= isinstance(value, names[t])
        if not ok:
            return f"{where}: {value!r} is not {types}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: {value!r} is not one of {schema['enum']}"
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        return f"{where}: {value!r} does not match {schema['pattern']}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return f"{where}: '{key}' is missing"
        props = schema.get("properties", {})
        for key, v in value.items():
            if key in props:
                e = conforms(v, props[key], f"{where}.{key}")
                if e:
                    return e
            elif schema.get("additionalProperties") is False:
                return f"{where}: '{key}' is not in the document"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            return f"{where}: {len(value)} items"
        for i, v in enumerate(value):
            e = conforms(v, schema.get("items", {}), f"{where}[{i}]")
            if e:
                return e
    return None


def check_response(method, path, status, body):
    """The response's schema from the document (its route, method and status) and the body against it."""
    global checked
    import re
    route = None
    for template in openapi["paths"]:
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path.split("?")[0]):
            route = openapi["paths"][template]
    operation = route.get(method.lower()) if route else None
    response = resolve(operation["responses"].get(str(status), {})) if operation else {}
    schema = response.get("content", {}).get("application/json", {}).get("schema")
    if schema is None:
        need(False, f"{method} {path} -> {status}: not in the OpenAPI document")
        return
    error = conforms(body, schema, f"{method} {path} {status}")
    need(error is None, f"the response conforms to /openapi.json: {error}")
    checked += 1


def call(server, method, path, body=None, raw=None, token=None, timeout=600):
    global openapi
    if openapi is None:
        with urllib.request.urlopen(server.url + "/openapi.json") as r:
            openapi = json.loads(r.read())
    status, answer, headers = raw_call(server, method, path, body, raw, token, timeout)
    check_response(method, path, status, answer)
    return status, answer, headers


def raw_call(server, method, path, body=None, raw=None, token=None, timeout=600):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(server.url + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null"), dict(r.headers)
    except urllib.error.HTTPError as e:
        text = e.read()
        try:
            return e.code, json.loads(text or b"null"), dict(e.headers)
        except json.JSONDecodeError:
            return e.code, {"raw": text.decode(errors="replace")}, dict(e.headers)


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

need(checked > 40, f"responses checked against the OpenAPI document: {checked}")
if failures:
    sys.exit(f"{len(failures)} failure(s)")
print(f"serve e2e: ok ({checked} responses conform to /openapi.json)")
