"""The recorder kept warm (warm_recorder.hpp; docs/kernelbench-solutions.md, "Kept warm").

`cuset_kernelbench.py serve` imports torch and everything a recording loads once, says it is ready,
then answers requests, one JSON line each on stdin, with one JSON line each on descriptor 3. A request
runs in a fresh fork of this process, which first restricts itself exactly as runRestricted restricts
a process it starts (cuset_restrict_self from libcuset_restrict: the request's Landlock trees and
scratch folder, file-size, core and memory limits, the scratch folder as working directory), then takes
the request's environment and runs the recorder's main() as if started with the request's argv: its
seccomp filter and audit hooks follow as always. This process never runs candidate code; each fork
starts from the same untouched state, so nothing one solution does reaches the next.
"""
import ctypes
import json
import os
import select
import signal
import sys
import tempfile
import time
import traceback


def load_restrict(path):
    lib = ctypes.CDLL(path)
    lib.cuset_restrict_self.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_char_p, ctypes.c_ulong]
    lib.cuset_restrict_self.restype = ctypes.c_int
    return lib


def child(lib, request, result_w, log_w, main):
    """In the fork: restrict, rewire descriptors, run main(); never returns."""
    try:
        os.setpgid(0, 0)  # its own group: the time limit kills whatever it started
        why = ctypes.create_string_buffer(512)
        status = lib.cuset_restrict_self("\n".join(request["readable"]).encode(), request["scratch"].encode(), request["memory_bytes"],
                                         request["scratch_file_bytes"], why, len(why))
        if status == 2:
            os._exit(126)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log_w, 1)
        os.dup2(log_w, 2)
        os.dup2(result_w, 3)
        os.closerange(4, 1 << 16)
        os.environ.clear()
        os.environ.update(dict(e.split("=", 1) for e in request["environment"]))
        tempfile.tempdir = None  # gettempdir() reads TMPDIR (the scratch folder) again
        sys.argv = list(request["argv"][1:])
        main()
    except SystemExit as e:
        os._exit(e.code if isinstance(e.code, int) else 1)
    except BaseException:  # noqa: BLE001 - the child's failure is its exit status and log
        try:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(1)
    os._exit(0)


def run(lib, request, main):
    """The request in a fork, with runRestricted's time limit and output caps; its outcome as a dict."""
    result_r, result_w = os.pipe()
    log_r, log_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(result_r)
        os.close(log_r)
        child(lib, request, result_w, log_w, main)
    os.close(result_w)
    os.close(log_w)
    deadline = time.monotonic() + request["timeout_ms"] / 1000.0
    limit = request["max_output_bytes"]
    sinks = {result_r: bytearray(), log_r: bytearray()}
    result, log = sinks[result_r], sinks[log_r]
    open_fds = [result_r, log_r]
    timed_out = truncated = False
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(open_fds, [], [], min(left, 1.0))
        for fd in ready:
            data = os.read(fd, 1 << 16)
            if not data:
                os.close(fd)
                open_fds.remove(fd)
                continue
            sink = sinks[fd]
            room = max(0, limit - len(sink))
            if fd == result_r and len(data) > room:
                truncated = True
            sink += data[:room]
    for fd in open_fds:
        os.close(fd)
    for target in (-pid, pid):
        try:
            os.kill(target, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    killed_by = os.WTERMSIG(status) if os.WIFSIGNALED(status) and not timed_out else 0
    return {"exit": exit_code, "signal": killed_by, "timed_out": timed_out, "truncated": truncated,
            "result": result.decode("utf-8", "replace"), "log": log.decode("utf-8", "replace")}


def serve(restrict_library, main):
    lib = load_restrict(restrict_library)
    answers = os.fdopen(3, "w")
    answers.write(json.dumps({"status": "ready"}) + "\n")
    answers.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        answers.write(json.dumps(run(lib, json.loads(line), main)) + "\n")
        answers.flush()
