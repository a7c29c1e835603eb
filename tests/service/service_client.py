"""What the service's end-to-end tests share: starting `cuset serve` (or `cuset worker`) with its output in a
log file, and calling it with every response checked against the server's own /openapi.json."""
import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

KERNELGYM_FIELDS = {"task_id", "status", "compiled", "correctness", "decoy_kernel", "reference_runtime", "kernel_runtime", "speedup",
                    "metadata", "error_message", "error_code"}


class Process:
    """A cuset process whose output goes to a log (a pipe nobody reads would stall it once full)."""

    def __init__(self, cuset, log, *args):
        self.log = log
        self.proc = subprocess.Popen([cuset, *args], stdout=open(log, "w"), stderr=subprocess.STDOUT)

    def output(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def wait_for(self, text, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            out = self.output()
            if text in out:
                return out
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        sys.exit(f"FAIL: '{text}' never came: {self.output()}")

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        self.proc.wait(timeout=60)


class Server(Process):
    def __init__(self, cuset, log, *args):
        super().__init__(cuset, log, "serve", *args)
        line = self.wait_for("listening on http://")
        self.url = line.split("listening on ")[1].split()[0]


class Checker:
    def __init__(self):
        self.failures = []
        self.checked = 0
        self.openapi = None  # the server's own document, read at the first call

    def need(self, cond, what):
        if not cond:
            self.failures.append(what)
            print("FAIL:", what)

    def resolve(self, schema):
        while "$ref" in schema:
            node = self.openapi
            for part in schema["$ref"].lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return schema

    def conforms(self, value, schema, where):
        """The subset of JSON Schema the document uses: type (lists, null), enum, required, properties,
        additionalProperties false, items, oneOf, pattern, min/max and item counts."""
        schema = self.resolve(schema)
        if "oneOf" in schema:
            errors = [self.conforms(value, s, where) for s in schema["oneOf"]]
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
                    e = self.conforms(v, props[key], f"{where}.{key}")
                    if e:
                        return e
                elif schema.get("additionalProperties") is False:
                    return f"{where}: '{key}' is not in the document"
        if isinstance(value, list):
            if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
                return f"{where}: {len(value)} items"
            for i, v in enumerate(value):
                e = self.conforms(v, schema.get("items", {}), f"{where}[{i}]")
                if e:
                    return e
        return None

    def check_response(self, method, path, status, body):
        """The response's schema from the document (its route, method and status) and the body against it."""
        route = None
        for template in self.openapi["paths"]:
            if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path.split("?")[0]):
                route = self.openapi["paths"][template]
        operation = route.get(method.lower()) if route else None
        response = self.resolve(operation["responses"].get(str(status), {})) if operation else {}
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        if schema is None:
            self.need(False, f"{method} {path} -> {status}: not in the OpenAPI document")
            return
        error = self.conforms(body, schema, f"{method} {path} {status}")
        self.need(error is None, f"the response conforms to /openapi.json: {error}")
        self.checked += 1

    def call(self, url, method, path, body=None, raw=None, token=None, timeout=600):
        if self.openapi is None:
            with urllib.request.urlopen(url + "/openapi.json") as r:
                self.openapi = json.loads(r.read())
        status, answer, headers = raw_call(url, method, path, body, raw, token, timeout)
        self.check_response(method, path, status, answer)
        return status, answer, headers


def raw_call(url, method, path, body=None, raw=None, token=None, timeout=600):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null"), dict(r.headers)
    except urllib.error.HTTPError as e:
        text = e.read()
        try:
            return e.code, json.loads(text or b"null"), dict(e.headers)
        except json.JSONDecodeError:
            return e.code, {"raw": text.decode(errors="replace")}, dict(e.headers)
