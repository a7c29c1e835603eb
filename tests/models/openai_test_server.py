#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

It serves POST /v1/chat/completions and GET /v1/models from a JSON script:

  {
    "api_key": "sk-test",              # optional: requests must send "Authorization: Bearer sk-test"
    "honour_n": true,                  # false: one choice whatever n asks
    "usage": true,                     # false: answers carry no usage block
    "delay_s": 0.0,                    # added to every answer
    "models": {                        # served model name -> how it answers
      "good": {"rules": [{"contains": ["softmax"], "content": "...", "finish_reason": "stop"}],
               "default": {"content": "no idea", "finish_reason": "stop"}}
    },
    "faults": [                        # consumed in order, one per chat request, each "times" times (default 1)
      {"fault": "429", "retry_after": "0.05"}, {"fault": "500"}, {"fault": "timeout", "seconds": 3},
      {"fault": "malformed"}, {"fault": "cut"}, {"fault": "no_choices"}, {"fault": "empty"},
      {"fault": "400", "message": "prompt too long"}, {"fault": "close"}
    ]
  }

A rule answers when every string of "contains" occurs in the request's messages; the first such rule
wins (a rule with "times": K only for its first K requests). Every request is appended to --log as one JSON line (path, authorization header, body, fault).
--workers N pre-forks N processes on one listening socket (for throughput benchmarks; faults are then
counted per process). The chosen port is written to --port-file once the server listens.
"""
import argparse
import http.server
import json
import os
import signal
import socket
import ssl
import sys
import threading
import time


class Script:
    def __init__(self, path):
        with open(path) as f:
            self.data = json.load(f)
        self.lock = threading.Lock()
        self.faults = []
        for entry in self.data.get("faults", []):
            self.faults.extend([entry] * int(entry.get("times", 1)))
        self.counter = 0

    def next_fault(self, model):
        with self.lock:
            self.counter += 1
            for i, fault in enumerate(self.faults):
                if fault.get("model") in (None, model):
                    return self.faults.pop(i)
            return None

    def answer(self, model, text):
        spec = self.data["models"][model]
        with self.lock:
            for rule in spec.get("rules", []):
                if all(piece in text for piece in rule.get("contains", [])) and rule.get("times", 1) != 0:
                    if "times" in rule:
                        rule["times"] -= 1  # a rule with "times" answers that many requests, then passes them on
                    return rule
        return spec.get("default", {"content": "", "finish_reason": "stop"})


def make_handler(script, log_path):
    log_lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
        disable_nagle_algorithm = True  # headers and body are separate writes: without it, 40 ms delayed-ACK stalls

        def log_message(self, *args):
            pass

        def log_request_line(self, body, fault):
            if not log_path:
                return
            line = json.dumps({"path": self.path, "authorization": self.headers.get("Authorization"), "body": body,
                               "fault": fault.get("fault") if fault else None, "pid": os.getpid()}) + "\n"
            with log_lock:
                fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                os.write(fd, line.encode())
                os.close(fd)

        def send_json(self, status, payload, headers=None):
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def authorized(self):
            key = script.data.get("api_key")
            if key and self.headers.get("Authorization") != "Bearer " + key:
                # As OpenAI does, the refused key is quoted back: the client must not pass it on.
                sent = (self.headers.get("Authorization") or "").replace("Bearer ", "")
                self.send_json(401, {"error": {"message": "Incorrect API key provided: " + sent, "type": "invalid_request_error"}})
                return False
            return True

        def do_GET(self):
            self.log_request_line(None, None)
            if not self.authorized():
                return
            if self.path.rstrip("/").endswith("/models"):
                self.send_json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in script.data["models"]]})
            else:
                self.send_json(404, {"error": {"message": "not found: " + self.path}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            model = body.get("model") if isinstance(body, dict) else None
            fault = script.next_fault(model) if self.path.endswith("/chat/completions") else None
            self.log_request_line(body, fault)
            if not self.authorized():
                return
            if not self.path.endswith("/chat/completions") or body is None:
                self.send_json(404 if body is not None else 400, {"error": {"message": "bad request"}})
                return
            if model not in script.data["models"]:
                self.send_json(404, {"error": {"message": "The model `%s` does not exist." % model, "code": "model_not_found"}})
                return
            if fault and self.serve_fault(fault):
                return
            delay = float(script.data.get("delay_s", 0))
            if delay:
                time.sleep(delay)
            text = "\n".join(m.get("content", "") for m in body.get("messages", []))
            n = int(body.get("n", 1)) if script.data.get("honour_n", True) else 1
            rule = script.answer(model, text)
            content = "" if fault and fault["fault"] == "empty" else rule.get("content", "")
            choices = [{"index": i, "message": {"role": "assistant", "content": content},
                        "finish_reason": rule.get("finish_reason", "stop")} for i in range(n)]
            answer = {"id": "chatcmpl-%d" % script.counter, "object": "chat.completion", "created": int(time.time()),
                      "model": model, "choices": choices}
            if script.data.get("usage", True):
                prompt_tokens = len(text) // 4 + 1
                completion = n * (len(content) // 4 + 1)
                answer["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                                   "total_tokens": prompt_tokens + completion}
            self.send_json(200, answer)

        def serve_fault(self, fault):
            kind = fault["fault"]
            if kind == "429":
                self.send_json(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": str(fault.get("retry_after", "0"))})
            elif kind in ("500", "502", "503", "400"):
                self.send_json(int(kind), {"error": {"message": fault.get("message", "server error " + kind)}})
            elif kind == "timeout":
                time.sleep(float(fault.get("seconds", 5)))
                return False  # then answers normally, long after the client gave up
            elif kind == "malformed":
                data = b'{"id": "chatcmpl-x", "choices": [{"message": '
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            elif kind == "no_choices":
                self.send_json(200, {"id": "chatcmpl-x", "object": "chat.completion", "choices": []})
            elif kind == "cut":
                data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * 400}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            elif kind == "close":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            else:
                return False  # "empty": answered normally with empty content
            return True

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    args = parser.parse_args()

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256  # the default 5 drops connections from a concurrency-64 client

        def handle_error(self, request, client_address):
            pass  # a client that gave up (a timeout fault) is expected, not news

    script = Script(args.script)
    server = Server(("127.0.0.1", args.port), make_handler(script, args.log))
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    children = []
    for _ in range(args.workers - 1):
        pid = os.fork()
        if pid == 0:
            server.serve_forever()
            os._exit(0)
        children.append(pid)

    def shutdown(signum, frame):
        for pid in children:
            os.kill(pid, signal.SIGTERM)
        os._exit(0)

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
