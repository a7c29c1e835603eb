"""The host build of a solution's extensions, seen from the recorder: load_inline replaced (capture
the sources; later load the build), the build's tensor requests answered through a ctypes callback,
and the torch.cuda API a solution may touch while being recorded.
"""
import ctypes
import hashlib
import json
import os
import threading

import torch
import torch.utils.cpp_extension as cpp_extension

from kb_recording import DTYPE_NAMES, DTYPES, Rec, current, json_scalar, moved_to_gpu
from kb_sandbox import Verdict, unsupported
from kb_streams import patch_streams

# Factories whose device comes from their options alone (the *_like and new_* ones take their source's).
HOST_DEFAULT_FACTORIES = {"empty", "zeros", "ones", "full", "rand", "randn", "empty_strided", "arange"}
FACTORY_FUNCTIONS = {"empty", "zeros", "ones", "full", "rand", "randn", "empty_like", "zeros_like", "ones_like", "full_like",
                     "empty_strided", "arange", "new_empty", "new_zeros", "new_ones", "new_full"}


def from_json(v):
    if isinstance(v, list):
        return [from_json(x) for x in v]
    if isinstance(v, dict):
        if "tensor" in v:
            return current().handles[v["tensor"]]
        if "dtype" in v:
            return DTYPES[v["dtype"]]
        if "device" in v:
            return torch.device(v["device"])
        if "memory_format" in v:
            return {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last,
                    "channels_last_3d": torch.channels_last_3d}[v["memory_format"]]
        if "options" in v:
            return {"__options__": v["options"]}
        if "float" in v:
            return float(v["float"])
    return v


def to_json(v):
    if isinstance(v, Rec):
        return current().handle_of(v)
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    if isinstance(v, torch.dtype):
        return {"dtype": DTYPE_NAMES[v]}
    if isinstance(v, torch.Tensor):
        raise unsupported("the host code received a tensor that is not one of the recording's")
    return json_scalar(v)


def host_request(request):
    if "launch" in request:
        current().record_launch(request["launch"])
        return None
    if "gemm" in request:
        current().record_gemm(request["gemm"])
        return None
    if "memset" in request:
        current().record_memset(request["memset"])
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
    on_host = None
    if name in HOST_DEFAULT_FACTORIES and (kwargs.get("device") is None or torch.device(kwargs["device"]).type == "cpu"):
        # TensorOptions' device is the CPU unless one is named (`torch::zeros(sizes, torch::kLong)`): the
        # tensor is in the host's memory, which a kernel cannot reach and an op with GPU tensors refuses.
        on_host = f"torch::{name} in host code, with no CUDA device in its options"
        kwargs["device"] = torch.device("cuda")
    if name in FACTORY_FUNCTIONS:
        kwargs.setdefault("device", torch.device("cuda"))
    if kwargs.get("device") is not None and torch.device(kwargs["device"]).type == "cpu":
        raise unsupported(f"host code makes a tensor on the CPU ({name})")
    if request["call"] == "method":
        self_, rest = args[0], args[1:]
        if name == "to" and rest and isinstance(rest[0], dict):
            rest = rest[1:]
        if name in ("to", "cuda") and isinstance(self_, Rec) and (name == "cuda" or any(
                isinstance(a, torch.device) and a.type == "cuda" for a in (*rest, kwargs.get("device")))):
            moved_to_gpu(self_)
        return getattr(self_, name)(*rest, **kwargs)
    if name.startswith("cuset_reverse_"):  # scalar - tensor and the like
        op = name[len("cuset_reverse_"):]
        t, s = args
        return {"add": lambda: s + t, "sub": lambda: s - t, "mul": lambda: s * t, "div": lambda: s / t}[op]()
    if name.startswith("nn.functional."):  # torch::nn::functional::mish
        return getattr(torch.nn.functional, name[len("nn.functional."):])(*args, **kwargs)
    made = getattr(torch, name)(*args, **kwargs)
    if on_host is not None and isinstance(made, Rec):
        made.buffer.root().on_host = on_host
    return made


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
        if isinstance(built[key], dict):
            raise ExtensionBuildError(built[key]["failed"], built[key]["reason"])
        return HostModule(built[key])

    def load(name, sources, *args, **kwargs):
        # load() builds files the solution wrote (into its scratch folder, the only place it may write)
        # or ships beside it: their text is load_inline's, .cu files nvcc's half and the rest g++'s, bound
        # by the PYBIND11_MODULE they hold. The audit hook has already checked where they are read from.
        if kwargs.get("is_python_module") is False:
            raise unsupported("load(is_python_module=False)")
        sources = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
        cpp, cuda = [], []
        for path in sources:
            with open(path) as f:
                (cuda if str(path).endswith((".cu", ".cuh")) else cpp).append(f.read())
        return load_inline(name, cpp, cuda or None, None, **kwargs)

    cpp_extension.load_inline = load_inline
    cpp_extension.load = load
    return captured


class ExtensionBuildError(RuntimeError):
    """What load_inline raises when the extension does not build (torch raises a RuntimeError, "Error
    building extension"): the solution may catch it, as KernelBench lets it."""

    def __init__(self, verdict, reason):
        super().__init__(f"Error building extension: {reason}")
        self.verdict = verdict
        self.reason = reason


def build_failure(e):
    """The ExtensionBuildError an exception is, or was raised while handling; or None."""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, ExtensionBuildError):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


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


# The GPU a plan is recorded for, as torch.cuda.get_device_properties shows it: an H100 SXM (the
# host stand-in's cudaGetDeviceProperties answers the same; docs/kernelbench-solutions.md).
RECORDING_GPU = dict(name="NVIDIA H100 80GB HBM3", major=9, minor=0, total_memory=85520809984, multi_processor_count=132,
                     max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32, regs_per_multiprocessor=65536,
                     shared_memory_per_block=49152, shared_memory_per_block_optin=232448, shared_memory_per_multiprocessor=233472,
                     L2_cache_size=52428800, is_integrated=False, is_multi_gpu_board=False, clock_rate=1980000,
                     memory_clock_rate=2619000, memory_bus_width=5120, gcnArchName="NVIDIA H100 80GB HBM3")


class DeviceGuard:
    """torch.cuda.device(i) and friends: there is one device."""

    def __init__(self, *a, **k):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def patch_cuda_api():
    """The torch.cuda a solution may touch while being built and recorded: one GPU, RECORDING_GPU."""
    import types
    props = types.SimpleNamespace(**RECORDING_GPU)
    torch.cuda.is_available = lambda: True
    torch.cuda.is_initialized = lambda: True
    torch.cuda.init = lambda: None
    torch.cuda.current_device = lambda: 0
    torch.cuda.device_count = lambda: 1
    torch.cuda.set_device = lambda *a, **k: None
    torch.cuda.device = DeviceGuard
    torch.cuda.device_of = DeviceGuard
    torch.cuda.get_device_properties = lambda *a, **k: props
    torch.cuda.get_device_name = lambda *a, **k: props.name
    torch.cuda.get_device_capability = lambda *a, **k: (props.major, props.minor)
    torch.cuda.get_arch_list = lambda: ["sm_90"]
    torch.cuda.mem_get_info = lambda *a, **k: (props.total_memory, props.total_memory)
    torch.cuda.empty_cache = lambda: None
    torch.cuda.memory_allocated = lambda *a, **k: 0
    torch.cuda.max_memory_allocated = lambda *a, **k: 0
    torch.cuda.reset_peak_memory_stats = lambda *a, **k: None
    torch.cuda.manual_seed = lambda *a, **k: None
    torch.cuda.manual_seed_all = lambda *a, **k: None

    patch_streams(torch)

    def no_graphs(*a, **k):
        raise unsupported("CUDA graphs (torch.cuda.CUDAGraph / graph capture)")
    torch.cuda.CUDAGraph = no_graphs
    torch.cuda.graph = no_graphs

    def no_threads(*a, **k):
        raise unsupported("threads in forward")
    threading.Thread.start = no_threads


def patch_compile():
    """torch.compile runs eagerly in a recording: a compiled module computes what the eager one does
    (within tolerance), and its ops are recorded as library steps like any other; compiling would start
    a C++ compiler and write caches, which the sandbox forbids. Its speed on a GPU is not reproduced."""
    def compile(model=None, **kwargs):
        return model if model is not None else (lambda m: m)
    torch.compile = compile
