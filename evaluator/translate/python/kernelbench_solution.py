#!/usr/bin/env python3
"""Records what a KernelBench solution does, on shapes only (docs/kernelbench.md).

A KernelBench solution is a Python file defining ModelNew, whose CUDA source strings are compiled by
torch.utils.cpp_extension.load_inline. The evaluator never runs it: it runs this script, in a
sandboxed child (`cuset __kb-translate`: no network, no new processes, no writes, time and memory
limits), twice:

  capture   executes the file with a load_inline that only keeps the sources it is given, and prints
            them: the evaluator splits them into device code (for NVRTC and the simulator) and host
            code, which it builds against a shape-only stand-in of the torch extension API
            (shim/include/cuset_kb/torch.hpp) into one library per extension;
  record    executes the file again with a load_inline that loads those libraries, builds ModelNew
            per size set of the problem (on the meta device), binds its parameters to the problem's
            weights, and runs forward on tensors that have shapes and no data. Every torch op is
            recorded (as a library step, or as a new buffer for factories and views), and every
            <<<...>>> of the host code as a kernel launch. The result is a launch plan per size set.

Nothing here ever sees a trial's data: there is none. The plan is untrusted output of candidate
code like any manifest, and the evaluator validates it (kernelbench_plan.cpp).

Output: one JSON object on the descriptor given by --result-fd.
"""
import argparse
import builtins
import ctypes
import functools
import hashlib
import json
import os
import sys
import threading
import traceback
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.utils.cpp_extension as cpp_extension  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float64: "float64",
               torch.int32: "int32", torch.int64: "int64", torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8",
               torch.bool: "bool"}
DTYPES = {v: k for k, v in DTYPE_NAMES.items()}
HIDDEN_WRITES = {"native_batch_norm", "batch_norm", "_batch_norm_impl_index", "cudnn_batch_norm", "miopen_batch_norm",
                 "_native_batch_norm_legit", "instance_norm"}
PLAN_DTYPES = {torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool}
RANDOM_OPS = ("bernoulli", "normal", "uniform", "rand", "randn", "randint", "randperm", "multinomial", "exponential",
              "geometric", "cauchy", "log_normal", "random_", "native_dropout", "poisson")


class Verdict(Exception):
    """Ends the translation with a verdict other than a plan."""

    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def unsupported(reason):
    return Verdict("unsupported", reason)


# ---------------------------------------------------------------------------------------------------
# The sandbox's second layer: audit hooks name what a solution tried (the seccomp filter and Landlock,
# set up around this process, stop it whatever Python does).

RESULT = {"fd": None, "written": False}


def finish(result):
    """Writes the result and ends the process at once: no handler the solution registered runs after."""
    if not RESULT["written"]:
        RESULT["written"] = True
        data = (json.dumps(result) + "\n").encode()
        os.write(RESULT["fd"], data)
    sys.stdout.flush()
    os._exit(0)


def install_audit_hook(allowed_libraries, readable):
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
            if writing:
                finish({"status": "sandbox_violation", "reason": f"the solution's Python writes a file ({path!r})"})
            if isinstance(path, (str, bytes)):
                full = os.path.abspath(os.fsdecode(path))
                if not any(full == r or full.startswith(r.rstrip("/") + "/") for r in readable):
                    finish({"status": "sandbox_violation", "reason": f"the solution's Python reads a file outside Python's own ({full!r})"})
            return
        if event in forbidden:
            if event == "ctypes.dlopen":
                name = args[0] if args else None
                if name is not None and name in allowed_libraries:
                    return
                finish({"status": "sandbox_violation", "reason": f"the solution's Python loads a native library ({name!r})"})
            finish({"status": "sandbox_violation", "reason": f"the solution's Python {forbidden[event]} ({event})"})

    sys.addaudithook(hook)


def install_seccomp():
    """No network, no new processes, no tracing of others; threads are allowed (torch starts them)."""
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    kill, allow = 0x80000000, 0x7FFF0000  # SCMP_ACT_KILL_PROCESS, SCMP_ACT_ALLOW

    def errno_action(e):
        return 0x00050000 | e  # SCMP_ACT_ERRNO

    ctx = lib.seccomp_init(allow)
    if not ctx:
        raise RuntimeError("seccomp_init failed")

    class Cmp(ctypes.Structure):
        _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]

    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(Cmp)]

    def rule(action, name, *cmps):
        nr = lib.seccomp_syscall_resolve_name(name.encode())
        if nr < 0:
            return
        array = (Cmp * len(cmps))(*cmps) if cmps else None
        if lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), array) != 0:
            raise RuntimeError(f"seccomp rule for {name} failed")

    for name in ("socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "fork", "vfork", "execve", "execveat",
                 "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
                 "init_module", "finit_module", "delete_module", "kexec_load", "reboot", "swapon", "swapoff", "bpf",
                 "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd", "io_uring_setup", "open_by_handle_at",
                 "name_to_handle_at", "personality"):
        rule(kill, name)
    # clone without CLONE_THREAD is a new process; clone3 passes its flags in memory, so it answers
    # ENOSYS and glibc falls back to clone.
    CLONE_THREAD = 0x00010000
    rule(kill, "clone", Cmp(0, 7, CLONE_THREAD, 0))  # SCMP_CMP_MASKED_EQ: (flags & CLONE_THREAD) == 0
    rule(errno_action(38), "clone3")
    pid = os.getpid()
    for name in ("kill", "tgkill"):
        rule(kill, name, Cmp(0, 1, pid, 0))  # SCMP_CMP_NE: another process
    if lib.seccomp_load(ctx) != 0:
        raise RuntimeError("seccomp_load failed")


# ---------------------------------------------------------------------------------------------------
# Tensors with shapes and no data.

# Ops that make a new tensor from shapes (a tensor argument gives only its metadata).
FACTORY_OPS = {"empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros", "ones",
               "ones_like", "new_ones", "full", "full_like", "new_full", "arange", "eye", "scalar_tensor", "linspace"}


class Buffer:
    def __init__(self, ident, dtype, numel, role, name, init):
        self.id = ident
        self.dtype = dtype
        self.numel = numel
        self.role = role          # input, scratch
        self.name = name
        self.init = init          # "empty" or "zeros"
        self.written = False      # by a step (a zero_ before that is the same as zeros)
        self.module_buffer = False  # a lifted module buffer (running statistics): written on a copy
        self.used = role == "input"  # by a step or an output: only those go into the plan
        self.base = torch.empty(numel, dtype=dtype, device="meta")


class Rec(torch.Tensor):
    """A tensor of the recording: a view (sizes, strides, offset) of a buffer, on 'cuda' as far as the
    solution can tell."""

    @staticmethod
    def __new__(cls, buffer, meta):
        # On the meta device for torch's C++ (a CPU-only torch has no CUDA device guard), on "cuda" for
        # the solution's Python (is_cuda, device).
        r = torch.Tensor._make_wrapper_subclass(cls, meta.size(), strides=meta.stride(), storage_offset=meta.storage_offset(),
                                                dtype=meta.dtype, device=torch.device("meta"), requires_grad=False)
        r.buffer = buffer
        r.meta = meta
        return r

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return RECORDER.dispatch(func, args, kwargs or {})

    @property
    def is_cuda(self):
        return True

    @property
    def device(self):
        return torch.device("cuda", 0)

    def __repr__(self):
        return f"Rec(buffer {self.buffer.name}, {tuple(self.shape)}, {self.dtype})"


def view_json(t):
    if t.dtype not in PLAN_DTYPES:
        raise unsupported(f"a step uses a tensor of dtype {t.dtype}, which the harness does not hold")
    t.buffer.used = True
    return {"buffer": t.buffer.name, "offset": t.meta.storage_offset(), "sizes": list(t.meta.size()), "strides": list(t.meta.stride()),
            "dtype": DTYPE_NAMES[t.dtype]}


def storage_span(meta):
    if meta.numel() == 0:
        return 0
    return meta.storage_offset() + sum((s - 1) * st for s, st in zip(meta.size(), meta.stride())) + 1


class Recorder:
    def __init__(self):
        self.buffers = []
        self.steps = []
        self.handles = []          # handle -> Rec, for the host build
        self.module_buffer_tensors = {}  # input buffer id -> the module buffers bound to it

    # -- buffers ------------------------------------------------------------------------------------
    def new_buffer(self, dtype, numel, role="scratch", name=None, init="empty"):
        b = Buffer(len(self.buffers), dtype, max(int(numel), 1), role, name or f"t{len(self.buffers)}", init)
        self.buffers.append(b)
        return b

    def fresh(self, meta_out, init="empty"):
        b = self.new_buffer(meta_out.dtype, storage_span(meta_out), init=init)
        return Rec(b, b.base.as_strided(meta_out.size(), meta_out.stride(), 0))

    def wrap_view(self, of, meta_out):
        return Rec(of.buffer, meta_out)

    # -- the dispatch of every torch op -------------------------------------------------------------
    def dispatch(self, func, args, kwargs):
        name = func.name()  # "aten::add.Tensor"
        base = name.split("::")[-1].split(".")[0]
        if base == "_local_scalar_dense":
            raise unsupported("forward reads a tensor's value on the host (.item(), float(t), int(t), bool(t), or a tensor in an if)")
        if base in ("_to_copy", "to", "copy_") and kwargs.get("device") is not None and torch.device(kwargs["device"]).type == "cpu":
            raise unsupported("forward moves a tensor to the host (.cpu())")
        if any(r in base for r in RANDOM_OPS):
            raise unsupported(f"forward draws random numbers ({name}), so the result is not a function of the inputs")
        if base in ("set_", "resize_", "record_stream"):
            raise unsupported(f"forward calls {name}")

        metas = torch.utils._pytree.tree_map(lambda a: a.meta if isinstance(a, Rec) else a, (args, kwargs))
        m_args, m_kwargs = metas
        if "device" in m_kwargs and m_kwargs["device"] is not None:
            m_kwargs = dict(m_kwargs, device="meta")
        try:
            out = func(*m_args, **m_kwargs)
        except NotImplementedError as e:
            raise unsupported(f"{name} cannot be recorded on shapes alone (its result's shape depends on data): {str(e).splitlines()[0][:120]}")

        schema = func._schema
        self.copy_written_module_buffers(schema, args, kwargs)
        factory = base in FACTORY_OPS or not any(isinstance(a, Rec) for a in torch.utils._pytree.tree_flatten((args, kwargs))[0])
        if factory:
            return self.factory(func, base, out, args, kwargs)

        returns = list(out) if isinstance(out, (tuple, list)) else [out]
        results = []
        record = False
        step_outputs = []
        for i, r in enumerate(returns):
            if not isinstance(r, torch.Tensor):
                results.append(r)
                continue
            alias = schema.returns[i].alias_info if i < len(schema.returns) else None
            src = self.aliased_argument(schema, alias, args, kwargs) if alias is not None else None
            if src is not None and alias.is_write:
                results.append(src)        # in place, or out=: the argument itself
                record = True
            elif src is not None:
                results.append(self.wrap_view(src, r))  # a view: no step
            else:
                fresh = self.fresh(r)
                results.append(fresh)
                step_outputs.append(fresh)
                record = True
        if not returns:
            record = True
        if base == "zero_" and isinstance(args[0], Rec) and self.whole_unwritten(args[0]):
            args[0].buffer.init = "zeros"  # zero_ on a fresh buffer: torch.zeros, not a library op
            record = False
        if record:
            self.record_library(func, args, kwargs, step_outputs)
        if isinstance(out, (tuple, list)):
            return type(out)(results) if isinstance(out, tuple) else results
        return results[0]

    def copy_written_module_buffers(self, schema, args, kwargs):
        """BatchNorm in training mode updates its running statistics in place. They are the trial's
        inputs here, which no step may change, so the op updates a copy of them instead."""
        params = schema.arguments
        values = list(args) + [kwargs.get(p.name) for p in params[len(args):]]
        # Batch norm in training mode updates running_mean and running_var without saying so in its schema.
        hidden = {"running_mean", "running_var"} if schema.name.split("::")[-1] in HIDDEN_WRITES and any(
            p.name == "training" and v is True for p, v in zip(params, values)) else set()
        for p, v in zip(params, values):
            written = (p.alias_info is not None and p.alias_info.is_write) or p.name in hidden
            if not (written and isinstance(v, Rec)):
                continue
            b = v.buffer
            if b.role != "input" or not b.module_buffer:
                continue
            copy = self.new_buffer(b.dtype, b.numel)
            src = Rec(b, b.base.as_strided([b.numel], [1], 0))
            dst = Rec(copy, copy.base.as_strided([b.numel], [1], 0))
            self.steps.append({"library": {"op": "aten::copy_", "overload": "", "args": [{"tensor": view_json(dst)}, {"tensor": view_json(src)}],
                                            "kwargs": {}, "outputs": [], "purpose": "buffer_copy"}})
            copy.written = True
            for t in self.module_buffer_tensors.get(b.id, []):
                t.buffer = copy
                t.meta = copy.base.as_strided(t.meta.size(), t.meta.stride(), t.meta.storage_offset())

    def whole_unwritten(self, t):
        return not t.buffer.written and t.meta.storage_offset() == 0 and t.meta.is_contiguous() and t.numel() == t.buffer.numel

    def aliased_argument(self, schema, alias, args, kwargs):
        params = schema.arguments
        values = list(args) + [kwargs.get(p.name) for p in params[len(args):]]
        for p, v in zip(params, values):
            if p.alias_info is not None and isinstance(v, Rec) and set(p.alias_info.before_set) & set(alias.before_set):
                return v
        return None

    def factory(self, func, base, out, args, kwargs):
        if not isinstance(out, torch.Tensor):
            return out
        if base in ("empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided"):
            return self.fresh(out, "empty")
        if base in ("zeros", "zeros_like", "new_zeros"):
            return self.fresh(out, "zeros")
        t = self.fresh(out, "empty")
        self.record_library(func, args, kwargs, [t])  # ones, full, arange, eye: computed into a new buffer
        return t

    def record_library(self, func, args, kwargs, outputs):
        def enc(a):
            if isinstance(a, Rec):
                return {"tensor": view_json(a)}
            if isinstance(a, torch.dtype):
                return {"dtype": DTYPE_NAMES.get(a, str(a))}
            if isinstance(a, torch.device):
                return {"device": a.type}
            if isinstance(a, torch.memory_format):
                return {"memory_format": str(a).split(".")[-1]}
            if isinstance(a, torch.layout):
                return {"layout": str(a).split(".")[-1]}
            if isinstance(a, (list, tuple)):
                return [enc(x) for x in a]
            if isinstance(a, torch.Tensor):
                raise unsupported(f"{func.name()} takes a tensor that is not one of the recording's (a constant made with data)")
            if isinstance(a, float) and (a != a or a in (float("inf"), float("-inf"))):
                return {"float": str(a)}
            return a

        for t in torch.utils._pytree.tree_flatten((args, kwargs))[0]:
            if isinstance(t, Rec):
                t.buffer.written = True
        for t in outputs:
            t.buffer.written = True
        name = func.name()
        op, _, overload = name.partition(".")
        self.steps.append({"library": {"op": op, "overload": overload, "args": [enc(a) for a in args],
                                        "kwargs": {k: enc(v) for k, v in kwargs.items()},
                                        "outputs": [view_json(t) for t in outputs]}})

    def record_launch(self, launch):
        args = []
        for a in launch["args"]:
            if "buffer" in a:
                ident = a["buffer"]
                if ident >= len(self.buffers):
                    raise unsupported("a kernel argument points outside every tensor")
                b = self.buffers[ident]
                if b.dtype not in PLAN_DTYPES:
                    raise unsupported(f"a kernel takes a tensor of dtype {b.dtype}, which the harness does not hold")
                b.written = True
                b.used = True
                args.append({"buffer": b.name, "byte_offset": a["byte_offset"]})
            else:
                args.append(a)
        self.steps.append({"kernel": {"name": launch["kernel"], "grid": launch["grid"], "block": launch["block"],
                                      "shared": launch["shared"], "args": args}})

    # -- the host build's view of tensors --------------------------------------------------------------
    def handle_of(self, t):
        self.handles.append(t)
        return {"tensor": len(self.handles) - 1, "buffer": t.buffer.id, "offset": t.meta.storage_offset(),
                "sizes": list(t.meta.size()), "strides": list(t.meta.stride()), "dtype": DTYPE_NAMES[t.dtype]}


RECORDER = Recorder()


class Recording(TorchDispatchMode):
    """Every op, factories included, goes to the recorder."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return RECORDER.dispatch(func, args, kwargs or {})


class OnRecordingDevice(TorchFunctionMode):
    """The solution's tensors are all on "the GPU": devices it names become the meta device before
    torch would look for CUDA (this torch may have none), .cuda() and .to("cuda") are no-ops, and
    moving data to the host cannot be recorded."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in (torch.Tensor.cuda, torch.Tensor.contiguous) and isinstance(args[0], Rec) and (func is torch.Tensor.cuda or args[0].is_contiguous()):
            return args[0]
        if func in (torch.Tensor.cpu, torch.Tensor.numpy, torch.Tensor.tolist):
            raise unsupported(f"forward moves a tensor's data to the host ({func.__name__})")
        if func is torch.Tensor.to:
            args = tuple(a for a in args if not isinstance(a, (torch.device, str)))
            kwargs.pop("device", None)
            kwargs.pop("non_blocking", None)
            if len(args) == 1 and not kwargs:
                return args[0]
        if "device" in kwargs or func in FACTORIES:
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


FACTORIES = {torch.empty, torch.zeros, torch.ones, torch.full, torch.rand, torch.randn, torch.randint, torch.arange,
             torch.eye, torch.linspace, torch.empty_strided, torch.zeros_like, torch.ones_like, torch.empty_like, torch.full_like}


# ---------------------------------------------------------------------------------------------------
# The host build (ctypes) and its requests.

FACTORY_FUNCTIONS = {"empty", "zeros", "ones", "full", "rand", "randn", "empty_like", "zeros_like", "ones_like", "full_like",
                     "empty_strided", "arange", "new_empty", "new_zeros", "new_ones", "new_full"}


def from_json(v):
    if isinstance(v, list):
        return [from_json(x) for x in v]
    if isinstance(v, dict):
        if "tensor" in v:
            return RECORDER.handles[v["tensor"]]
        if "dtype" in v:
            return DTYPES[v["dtype"]]
        if "device" in v:
            return torch.device(v["device"])
        if "memory_format" in v:
            return {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last,
                    "channels_last_3d": torch.channels_last_3d}[v["memory_format"]]
        if "options" in v:
            return {"__options__": v["options"]}
    return v


def to_json(v):
    if isinstance(v, Rec):
        return RECORDER.handle_of(v)
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    if isinstance(v, torch.dtype):
        return {"dtype": DTYPE_NAMES[v]}
    if isinstance(v, torch.Tensor):
        raise unsupported("the host code received a tensor that is not one of the recording's")
    return v


def host_request(request):
    if "launch" in request:
        RECORDER.record_launch(request["launch"])
        return None
    name = request["name"]
    args = [from_json(a) for a in request["args"]]
    kwargs = {k: from_json(v) for k, v in request["kwargs"].items()}
    # TensorOptions, dtypes and devices given positionally to factories are keyword arguments in Python.
    moved = []
    for a in args:
        if isinstance(a, dict) and "__options__" in a:
            o = a["__options__"]
            if "dtype" in o:
                kwargs["dtype"] = DTYPES[o["dtype"]]
            if "device" in o:
                kwargs["device"] = torch.device(o["device"])
        elif name in FACTORY_FUNCTIONS and isinstance(a, torch.dtype):
            kwargs["dtype"] = a
        elif name in FACTORY_FUNCTIONS and isinstance(a, torch.device):
            kwargs["device"] = a
        else:
            moved.append(a)
    args = moved
    if name in FACTORY_FUNCTIONS:
        kwargs.setdefault("device", torch.device("cuda"))
    if kwargs.get("device") is not None and torch.device(kwargs["device"]).type == "cpu":
        raise unsupported(f"host code makes a tensor on the CPU ({name})")
    if request["call"] == "method":
        self_, rest = args[0], args[1:]
        if name == "to" and rest and isinstance(rest[0], dict):
            rest = rest[1:]
        return getattr(self_, name)(*rest, **kwargs)
    if name.startswith("cuset_reverse_"):  # scalar - tensor and the like
        op = name[len("cuset_reverse_"):]
        t, s = args
        return {"add": lambda: s + t, "sub": lambda: s - t, "mul": lambda: s * t, "div": lambda: s / t}[op]()
    return getattr(torch, name)(*args, **kwargs)


CALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_char_p)
KEEP = {}


def answer(payload):
    buf = ctypes.create_string_buffer(json.dumps(payload).encode())
    KEEP["answer"] = buf  # alive until the next request
    return ctypes.addressof(buf)


@CALLBACK_TYPE
def callback(raw):
    try:
        return answer({"ok": to_json(host_request(json.loads(raw.decode())))})
    except Verdict as v:
        if v.status == "unsupported":
            return answer({"unsupported": v.reason})
        return answer({"error": v.reason})
    except Exception as e:  # noqa: BLE001 - a torch error in host code is the candidate's error
        return answer({"error": str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__})


class HostModule:
    """What load_inline returns: the extension's functions, called on the recording's tensors."""

    def __init__(self, path):
        try:
            self._lib = ctypes.CDLL(path)
        except OSError as e:
            missing = str(e).split("undefined symbol: ")[-1].strip() if "undefined symbol" in str(e) else None
            if missing:
                raise unsupported(f"host code calls {missing}, which the recording does not model")
            raise
        self._lib.cuset_kb_set_callback.argtypes = [CALLBACK_TYPE]
        self._lib.cuset_kb_functions.restype = ctypes.c_char_p
        self._lib.cuset_kb_invoke.restype = ctypes.c_char_p
        self._lib.cuset_kb_invoke.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        self._lib.cuset_kb_set_callback(callback)
        self._names = json.loads(self._lib.cuset_kb_functions().decode())

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._names:
            raise AttributeError(f"the extension has no function '{name}' (it defines {', '.join(self._names) or 'none'})")

        def call(*args):
            for a in args:
                if isinstance(a, torch.Tensor) and not isinstance(a, Rec):
                    raise unsupported(f"{name} is passed a tensor that is not one of the recording's")
            got = json.loads(self._lib.cuset_kb_invoke(name.encode(), json.dumps([to_json(a) for a in args]).encode()).decode())
            if "unsupported" in got:
                raise unsupported(f"{name}: {got['unsupported']}")
            if "error" in got:
                raise Verdict("runtime_error", f"the extension function {name} failed: {got['error']}")
            return from_json(got["ok"])
        return call


def extension_key(cpp_sources, cuda_sources, functions):
    def joined(s):
        return "\n".join(s) if isinstance(s, (list, tuple)) else (s or "")
    text = json.dumps([joined(cpp_sources), joined(cuda_sources), list(functions or [])])
    return hashlib.sha256(text.encode()).hexdigest()[:24], joined(cpp_sources), joined(cuda_sources)


def patch_extension_api(mode, built):
    captured = []

    def load_inline(name, cpp_sources, cuda_sources=None, functions=None, *args, **kwargs):
        if kwargs.get("is_python_module") is False:
            raise unsupported("load_inline(is_python_module=False)")
        key, cpp, cuda = extension_key(cpp_sources, cuda_sources, functions)
        if isinstance(functions, str):
            functions = [functions]
        elif isinstance(functions, dict):
            functions = list(functions)
        if mode == "capture":
            captured.append({"key": key, "name": name, "cpp_sources": cpp, "cuda_sources": cuda, "functions": list(functions or [])})
            return CapturedModule()
        if key not in built:
            raise Verdict("error", f"no host build for extension {name}")
        return HostModule(built[key])

    def load(*args, **kwargs):
        raise unsupported("torch.utils.cpp_extension.load of source files (only load_inline sources are translated)")

    cpp_extension.load_inline = load_inline
    cpp_extension.load = load
    return captured


class CapturedModule:
    """load_inline's result while capturing: calling into it ends the capture."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            raise StopCapture()
        return call


class StopCapture(Exception):
    pass


def patch_cuda_api():
    """The torch.cuda a solution may touch while being recorded."""
    torch.cuda.is_available = lambda: True
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.current_device = lambda: 0
    torch.cuda.device_count = lambda: 1

    def no_streams(*a, **k):
        raise unsupported("CUDA streams or events in forward")
    torch.cuda.Stream = no_streams
    torch.cuda.Event = no_streams
    torch.cuda.stream = no_streams
    torch.cuda.current_stream = no_streams

    def no_threads(*a, **k):
        raise unsupported("threads in forward")
    threading.Thread.start = no_threads


# ---------------------------------------------------------------------------------------------------

def run_solution(path, source):
    ns = {"__name__": "kernelbench_solution", "__file__": path}
    try:
        exec(compile(source, path, "exec"), ns)
    except ModuleNotFoundError as e:
        raise unsupported(f"the solution imports '{e.name}', which this translation does not provide (only load_inline CUDA solutions "
                          "are translated)")
    except (Verdict, StopCapture):
        raise
    except SyntaxError as e:  # KernelBench reports a file that does not load as a compilation failure
        raise Verdict("compile_error", f"the solution is not valid Python: {e.msg} (line {e.lineno})")
    if "ModelNew" not in ns:
        raise Verdict("invalid_submission", "the solution defines no ModelNew")
    return ns


def problem_namespace(problem, size_set, kb):
    origin = problem.get("origin")
    if not origin:
        return None
    overrides = (origin.get("size_overrides") or {}).get(size_set)
    if overrides is None and size_set != "full":
        full_ns = kb.load(origin["source"], origin["file"])
        _, _, _, overrides = kb.find_small_size(origin["source"], origin["file"], kb.size_knobs(full_ns, origin["source"], origin["file"]))
    return kb.load(origin["source"], origin["file"], overrides)


def forward_arguments(problem, size_set, ns, kb):
    """(init args, [forward argument: input name or a number])."""
    inputs = problem["size_sets"][size_set]["inputs"]
    params = set(problem.get("parameters") or [])
    if ns is None:
        return [], [("input", i["name"]) for i in inputs if i["name"] not in params]
    with kb.OnMeta():
        init = list(ns["get_init_inputs"]())
        items = list(ns["get_inputs"]())
    names = kb.forward_arg_names(functools.partial(ns["Model"].forward, None), items)  # as a bound method: no self
    args = []
    known = {i["name"] for i in inputs}
    for n, item in zip(names, items):
        if isinstance(item, torch.Tensor):
            if n not in known:
                raise Verdict("error", f"the problem has no input '{n}' for forward's argument")
            args.append(("input", n))
        else:
            args.append(("value", item))
    return init, args


def bind_parameters(model, problem, size_set, inputs):
    """ModelNew's parameters and buffers, each bound to the problem's weight of its name (or the one
    weight of its shape): the kernels then see the trial's fresh weights."""
    params = [p for p in (problem.get("parameters") or [])]
    free = {p: inputs[p] for p in params if p in inputs}
    modules = dict(model.named_modules())
    bound = []
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        owner_name, _, leaf = name.rpartition(".")
        owner = modules[owner_name]
        target = free.get(name)
        if target is not None and (tuple(target.shape) != tuple(t.shape) or target.dtype != t.dtype):
            target = None
        if target is None:
            same = [k for k, v in free.items() if tuple(v.shape) == tuple(t.shape) and v.dtype == t.dtype]
            if len(same) == 1:
                target = free[same[0]]
                name = same[0]
        if target is None:
            if name.endswith("num_batches_tracked"):
                continue
            raise unsupported(f"ModelNew's {'parameter' if leaf in owner._parameters else 'buffer'} '{name}' {tuple(t.shape)} matches no "
                              "weight of the problem by name or shape, so the kernels could not be given the trial's weights")
        free.pop(name, None)
        if leaf in owner._parameters:
            owner._parameters[leaf] = target
        else:
            target.buffer.module_buffer = True
            RECORDER.module_buffer_tensors.setdefault(target.buffer.id, []).append(target)
            owner._buffers[leaf] = target
        bound.append(name)
    return bound


def record_size_set(solution_path, source, problem, size_set, kb):
    global RECORDER
    RECORDER = Recorder()
    ns_problem = problem_namespace(problem, size_set, kb)
    init, fwd = forward_arguments(problem, size_set, ns_problem, kb)
    ns = run_solution(solution_path, source)
    try:
        with kb.OnMeta():
            model = ns["ModelNew"](*init)
    except Verdict:
        raise
    except Exception as e:  # noqa: BLE001
        raise Verdict("runtime_error", f"ModelNew(...) failed: {type(e).__name__}: {str(e).strip()[:300]}")
    if not isinstance(model, nn.Module):
        raise Verdict("invalid_submission", "ModelNew is not a torch.nn.Module")
    model.train()  # KernelBench runs models as constructed

    spec = problem["size_sets"][size_set]
    inputs = {}
    for i in spec["inputs"]:
        dtype = DTYPES[i["dtype"]]
        numel = 1
        for d in i["shape"]:
            numel *= d
        b = RECORDER.new_buffer(dtype, numel, role="input", name=i["name"])
        inputs[i["name"]] = Rec(b, b.base.as_strided(i["shape"], torch.empty(i["shape"], device="meta").stride(), 0))
    bind_parameters(model, problem, size_set, inputs)
    args = [inputs[v] if kind == "input" else v for kind, v in fwd]
    try:
        with OnRecordingDevice(), Recording():
            out = model(*args)
    except Verdict:
        raise
    except Exception as e:  # noqa: BLE001 - what KernelBench would report as a runtime error
        where = traceback.extract_tb(e.__traceback__)
        line = next((f" (line {f.lineno})" for f in reversed(where) if f.filename == solution_path), "")
        raise Verdict("runtime_error", f"forward failed{line}: {type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}")
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return plan_of(outs, spec)


def plan_of(outs, spec):
    want = spec["outputs"]
    if len(outs) != len(want):
        raise Verdict("wrong_answer", f"forward returns {len(outs)} output(s), the problem has {len(want)}")
    outputs = []
    for o, w in zip(outs, want):
        if not isinstance(o, Rec):
            raise Verdict("wrong_answer", f"forward returns {type(o).__name__} for output '{w['name']}', not a tensor it computed")
        if list(o.shape) != list(w["shape"]) or DTYPE_NAMES.get(o.dtype) != w["dtype"]:
            raise Verdict("wrong_answer", f"output '{w['name']}' has shape {list(o.shape)} {DTYPE_NAMES.get(o.dtype, o.dtype)}, the problem's "
                                          f"is {w['shape']} {w['dtype']}")
        outputs.append({"name": w["name"], "view": view_json(o)})
    buffers = [{"name": b.name, "role": b.role, "dtype": DTYPE_NAMES[b.dtype], "numel": b.numel, "init": b.init} for b in RECORDER.buffers if b.used]
    return {"buffers": buffers, "steps": RECORDER.steps, "outputs": outputs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["capture", "record"])
    ap.add_argument("--solution", required=True)
    ap.add_argument("--problem", required=True)
    ap.add_argument("--kb-lib", required=True)
    ap.add_argument("--extensions", default=None)
    ap.add_argument("--result-fd", type=int, required=True)
    ap.add_argument("--no-seccomp", action="store_true")
    args = ap.parse_args()
    RESULT["fd"] = args.result_fd
    torch.set_num_threads(1)
    sys.path.insert(0, args.kb_lib)
    import kernelbench_trace as kb  # noqa: E402 - the importer's loader, for the problem's own file

    with open(args.problem) as f:
        problem = json.load(f)
    with open(args.solution) as f:
        source = f.read()
    built = {}
    if args.extensions:
        with open(args.extensions) as f:
            built = json.load(f)
    captured = patch_extension_api(args.mode, built)
    patch_cuda_api()
    # Everything this script needs is loaded: from here on the solution runs.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the solution's prints go nowhere
    if not args.no_seccomp:
        install_seccomp()
    readable = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.dirname(torch.__file__)),
                os.path.dirname(os.path.abspath(args.solution)), os.devnull, "/dev/urandom", "/proc/self"}
    readable |= {os.path.abspath(p) for p in sys.path if p}
    install_audit_hook(set(built.values()), readable)

    try:
        if args.mode == "capture":
            try:
                ns = run_solution(args.solution, source)
                init, _ = forward_arguments(problem, "small", problem_namespace(problem, "small", kb), kb)
                with kb.OnMeta():
                    ns["ModelNew"](*init)
            except StopCapture:
                pass
            except Verdict:
                if not captured:
                    raise
            except Exception:  # noqa: BLE001 - the record run reports construction errors
                pass
            finish({"status": "captured", "extensions": captured})
        plans = {s: record_size_set(args.solution, source, problem, s, kb) for s in problem["size_sets"]}
        finish({"status": "recorded", "plans": plans})
    except Verdict as v:
        finish({"status": v.status, "reason": v.reason})
    except kb.Skip as s:
        finish({"status": "error", "reason": f"the problem's own file cannot be rebuilt: {s}"})
    except Exception as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)
        where = f" ({os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
        finish({"status": "runtime_error", "reason": f"{type(e).__name__}: {str(e).strip()[:300]}{where}"})


if __name__ == "__main__":
    main()
