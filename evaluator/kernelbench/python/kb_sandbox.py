"""The sandbox's second layer inside the recorder (kb_recorder.py): the result channel, the
audit hooks that name what a solution tried, and the seccomp filter installed before it runs. The
restricted process around it (no writes, Landlock, limits) is runRestricted's (restricted_process.cpp).
"""
import ctypes
import json
import os
import sys


class Verdict(Exception):
    """Ends the translation with a verdict other than a plan."""

    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def unsupported(reason):
    return Verdict("unsupported", reason)


RESULT = {"fd": None, "written": False}


def finish(result):
    """Writes the result and ends the process at once: no handler the solution registered runs after."""
    if not RESULT["written"]:
        RESULT["written"] = True
        data = (json.dumps(result) + "\n").encode()
        os.write(RESULT["fd"], data)
    sys.stdout.flush()
    os._exit(0)


def inside(folder, path):
    """Whether path (relative ones from the working directory) lies beneath folder."""
    if folder is None or not isinstance(path, (str, bytes, os.PathLike)):
        return False
    full = os.path.realpath(os.fsdecode(path))
    return full == folder or full.startswith(folder.rstrip("/") + "/")


# What a solution may do inside its scratch folder: per audit event, the positions of its path
# arguments and of its dir_fd arguments (which must be absent: a path relative to a descriptor is not
# checked).
SCRATCH_EVENTS = {"os.mkdir": ((0,), (2,)), "os.remove": ((0,), (1,)), "os.rmdir": ((0,), (1,)), "os.rename": ((0, 1), (2, 3)),
                  "os.truncate": ((0,), ()), "os.chmod": ((0,), (2,)), "shutil.rmtree": ((0,), (1,))}


def scratch_only(event, args, scratch):
    paths, fds = SCRATCH_EVENTS[event]
    return (all(i < len(args) and inside(scratch, args[i]) for i in paths)
            and all(i >= len(args) or args[i] is None or args[i] == -1 for i in fds))


def install_audit_hook(allowed_libraries, readable, scratch=None):
    """scratch: the private folder the solution may write in (its build folders, tempfile's files)."""
    scratch = os.path.realpath(scratch) if scratch else None
    if scratch:
        readable = set(readable) | {scratch}
    forbidden = {"socket.__new__": "opens a network socket", "socket.connect": "connects to the network",
                 "socket.bind": "binds a network port", "subprocess.Popen": "starts a process", "os.system": "runs a shell command",
                 "os.exec": "executes a program", "os.posix_spawn": "starts a process", "os.spawn": "starts a process",
                 "os.fork": "forks", "os.forkpty": "forks", "os.kill": "signals a process", "os.remove": "removes a file",
                 "os.rename": "renames a file", "os.rmdir": "removes a folder", "os.mkdir": "creates a folder",
                 "os.chmod": "changes file permissions", "os.symlink": "creates a link", "os.link": "creates a link",
                 "shutil.rmtree": "removes files", "os.truncate": "truncates a file", "ctypes.dlopen": None}

    def hook(event, args):
        if event == "open" and len(args) >= 2:
            path, mode = args[0], args[1]
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
            if writing and not inside(scratch, path):
                finish({"status": "sandbox_violation", "reason": f"the solution's Python writes a file ({path!r})"})
            if isinstance(path, (str, bytes)):
                full = os.path.abspath(os.fsdecode(path))
                if not any(full == r or full.startswith(r.rstrip("/") + "/") for r in readable):
                    finish({"status": "sandbox_violation", "reason": f"the solution's Python reads a file outside Python's own ({full!r})"})
            return
        if event in SCRATCH_EVENTS and scratch and scratch_only(event, args, scratch):
            return
        if event in forbidden:
            if event == "ctypes.dlopen":
                name = args[0] if args else None
                if name is not None and name in allowed_libraries:
                    return
                finish({"status": "sandbox_violation", "reason": f"the solution's Python loads a native library ({name!r})"})
            where = f" {os.fsdecode(args[0])!r}" if event in SCRATCH_EVENTS and args and isinstance(args[0], (str, bytes, os.PathLike)) else ""
            finish({"status": "sandbox_violation", "reason": f"the solution's Python {forbidden[event]} ({event}{where})"})

    sys.addaudithook(hook)


def install_seccomp(restrict_library):
    """No network, no new processes, no tracing or signalling of others; threads are allowed (torch
    starts them). The filter is the C++ one (cuset_restrict_syscalls in libcuset_restrict.so,
    restrict_child.cpp): the project restricts processes in one place."""
    lib = ctypes.CDLL(restrict_library)
    lib.cuset_restrict_syscalls.argtypes = [ctypes.c_char_p, ctypes.c_ulong]
    lib.cuset_restrict_syscalls.restype = ctypes.c_int
    why = ctypes.create_string_buffer(512)
    if lib.cuset_restrict_syscalls(why, len(why)) != 0:
        raise RuntimeError(f"the seccomp filter was not installed: {why.value.decode(errors='replace')}")
