"""Triton launches of a recorded solution (the Triton form: docs/candidate-format.md, "The Triton form").

`kernel[grid](...)` in a solution's forward does not run Triton's launcher here: `JITFunction.run` is
replaced by one that specialises the kernel exactly as Triton's own binder does (dtypes, 16-byte
divisibility of pointers and integers, integers equal to 1 as constants), compiles it for `sm_80` with
Triton's compiler in this process and stops at PTX (the next stage, ptxas, is a new process, which the
recording's sandbox forbids and the simulator does not need), and records the launch as a kernel step of
the plan: grid after `meta`, 32 x num_warps threads, Triton's shared memory, pointer arguments bound to
the plan's buffers, scalars with their types, the two scratch pointers Triton 3.x adds as null.

The PTX becomes CUDA C++ the rest of the pipeline already runs: a `__global__` function with the PTX
kernel's parameters whose body is that kernel's body as one inline-asm statement (`ld.param` turned into
the statement's operands, Triton's `global_smem` into the block's dynamic shared memory). NVRTC compiles
it, the simulator runs it with its out-of-bounds, race, uninitialised-read and fence checks.

For a GPU (the `cuda` backend: the problem spec's `triton_capability`, the device's compute capability)
the kernel is compiled as Triton compiles it on that GPU instead: for that capability (Hopper: `sm_90a`,
wgmma and all), launched with that compile's threads and shared memory, its PTX wrapped the same way with
the entry's `.reqntid`/`.maxntid` as `__launch_bounds__`, and no C++ translation (no simulator runs it).
The plan then says which NVRTC target the code needs (`target`: `sm_90a`). Launch options the Driver
API launch does not reproduce (clusters, cooperative grids, programmatic dependent launch) are refused.

`triton.autotune` picks one configuration on the CPU: the first of those its pruning keeps (pre-hooks
run as Triton runs them), recorded in the plan's log. For a GPU the launch also carries every kept
configuration's launch (`autotune.alternatives`, the first the step's own), which the GPU worker times as
Triton's autotuner does before the trials, keeping the fastest (docs/candidate-format.md, "On a GPU").
Nothing here runs a kernel.
"""
import re

import torch

from kb_ptx_cpp import HELPERS, Untranslatable, cpp_of_ptx
from kb_sandbox import Verdict, unsupported

try:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction, create_function_from_signature
    from triton._C.libtriton import ir
except ImportError:  # a torch without Triton: no solution can import it either
    triton = None

# Ampere: the newest target whose tensor-core instructions (mma.sync) the simulator runs; Hopper's wgmma
# is not simulated, and its numerics (TF32 products for float32 tl.dot) are the same.
SIM_ARCH = 80
ARCH = SIM_ARCH  # configure() sets a GPU's own for a recording the cuda backend runs
# The PTX ISA Triton would target with the ptxas it ships (12.9): given, so that nothing asks ptxas.
PTX_VERSION = 88

# Each kernel's PTX as C++, one statement per instruction (kb_ptx_cpp.py), where every instruction is one
# it translates; False keeps every kernel on the simulator's PTX interpreter (tests compare the two).
TRANSLATE_TO_CPP = True
KERNELS = {}    # (kernel, signature, constexprs, attrs, options) -> compiled entry
BINDERS = {}    # id(kernel) -> Triton's binder for it (made once: it compiles a function)
SOURCES = []    # the CUDA C++ of every compiled kernel, in compile order
NAMES = []      # their kernels' names, in the same order
CHOICES = []    # the log: autotune's choices, kernels left to the PTX interpreter
TARGETS = set()  # the `.target` of every compiled kernel's PTX
_BACKEND = []   # Triton's CUDA backend for ARCH, made on first use
_CAPTURED = []  # while an autotuned launch's configurations are recorded: a list per configuration
_TUNED = []     # the autotune entry the next recorded launch carries (for a GPU)


def configure(capability):
    """Compiles for a GPU of this compute capability (90 for sm_90) rather than for the simulator; None or
    the simulator's own keeps the simulator's target."""
    global ARCH
    ARCH = int(capability) if capability else SIM_ARCH
    _BACKEND.clear()


def _target():
    return GPUTarget("cuda", ARCH, 32)


def _backend():
    if not _BACKEND:
        _BACKEND.append(make_backend(_target()))
    return _BACKEND[0]


def _aligned_like(t):
    """A CPU tensor whose data pointer has the recorded tensor's alignment on a GPU (allocations there
    are 256-byte aligned; a view adds its byte offset): what Triton's binder specialises on."""
    offset = t.storage_offset() * t.element_size() % 256
    base = torch.empty(512 + t.element_size(), dtype=torch.uint8)
    start = (-base.data_ptr()) % 256 + offset
    return base[start:start + t.element_size()].view(t.dtype)


def _compile(fn, signature, constexprs, attrs, options):
    backend = _backend()
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    opts = backend.parse_options(dict(options.__dict__, ptx_version=PTX_VERSION, **src.parse_options()))
    metadata = {"target": _target(), **opts.__dict__}
    stages = {}
    backend.add_stages(stages, opts, src.language)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    module = src.make_ir(_target(), opts, backend.get_codegen_implementation(opts), backend.get_module_map(), context)
    for ext, stage in stages.items():
        if ext == "cubin":
            break
        module = stage(module, metadata)
    return module, metadata


PARAM = re.compile(r"\.param\s+\.(\w+)(\s+\.ptr(?:\s+\.(?:global|shared|const|local))?)?(?:\s+\.align\s+\d+)?\s+(\w+)")
C_TYPES = {"ptr": ("void*", "l"), "u64": ("unsigned long long", "l"), "b64": ("unsigned long long", "l"), "s64": ("long long", "l"),
           "u32": ("unsigned int", "r"), "b32": ("unsigned int", "r"), "s32": ("int", "r"), "f32": ("float", "f"),
           "f64": ("double", "d"), "u16": ("unsigned short", "h"), "b16": ("unsigned short", "h"), "u8": ("unsigned short", "h")}


def cuda_of_ptx(ptx, name, simulated=True):
    """The kernel of `ptx` as a CUDA C++ __global__ function named `name` (see the module's docstring),
    its parameters, and "" or why it runs on the PTX interpreter rather than as translated C++. Not
    `simulated`: the GPU's form alone (no translation), with the entry's thread bound."""
    entry = re.search(r"\.visible\s+\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S)
    if entry is None:
        raise unsupported("Triton's PTX has no kernel entry")
    if re.search(r"^\s*(?:@%\w+\s+)?call\b", ptx, re.M):
        raise unsupported("a Triton kernel that calls a function (device assert, printf, an external library) is not simulated")
    # (PTX type, a pointer, name); a pointer is declared as one, so that the plan's checks see it
    params = [(t, "ptr" if ptr else t, n) for t, ptr, n in PARAM.findall(entry.group(2))]
    body_start = ptx.index("{", entry.end())
    depth, i = 0, body_start
    while True:
        depth += {"{": 1, "}": -1}.get(ptx[i], 0)
        if depth == 0:
            break
        i += 1
    body = ptx[body_start + 1:i]
    lines = []
    for line in body.splitlines():
        line = line.split("//", 1)[0].strip()
        if not line or line.startswith((".loc", ".file", ".pragma")):
            continue
        lines.append(line)
    for ptype, _, _ in params:
        if ptype not in C_TYPES:
            raise unsupported(f"a Triton kernel parameter of PTX type .{ptype}")
    args = ", ".join(f"{C_TYPES[t][0]} p{n}" for n, (_, t, _) in enumerate(params))
    body = "\n".join(lines).replace("%", "%%")
    body = re.sub(r"\$(L__\w+)", r"\1", body)
    for n, (ptype, _, pname) in enumerate(params):
        body = re.sub(r"ld\.param\.(\w+)\s+([^,]+),\s*\[" + re.escape(pname) + r"\]", lambda m, n=n: _from_operand(m.group(1), m.group(2), n), body)
    smem = len(params)
    uses_smem = "global_smem" in body
    body = re.sub(r"\bglobal_smem\b", f"%{smem}", body)
    if "ld.param" in body:
        raise unsupported("Triton's PTX reads a kernel parameter the harness cannot bind")
    ins = [f'"{C_TYPES[t][1]}"(p{n})' for n, (_, t, _) in enumerate(params)]
    # The entry's thread bound, which ptxas allocates registers for, kept as the GPU's kernel's.
    bound = re.search(r"\.(?:reqntid|maxntid)\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", ptx[entry.end():body_start])
    threads = 1
    for dim in (bound.groups() if bound else ()):
        threads *= int(dim or 1)
    gpu = _asm_kernel(name, args, _own_registers(body), ins, uses_smem, f"__launch_bounds__({threads}) " if bound else "")
    if not simulated:
        return gpu, params, ""
    # One shape per compiler: the simulator's host build (which defines CUSET_SIM_KERNEL_LIBRARY) compiles
    # the translation, or the PTX for its interpreter; NVRTC, for a GPU, the PTX as Triton wrote it.
    if not TRANSLATE_TO_CPP:
        return _per_compiler(_asm_kernel(name, args, body, ins, uses_smem, ""), gpu), params, "the PTX interpreter is asked for"
    try:
        translated = cpp_of_ptx(name, params, lines, args)
    except Untranslatable as e:
        return (_per_compiler(_asm_kernel(name, args, body, ins, uses_smem, ""), gpu), params,
                f"{name} runs on the simulator's PTX interpreter: {e} is not translated to C++")
    return _per_compiler(HELPERS + translated, gpu), params, ""


def _per_compiler(simulator, gpu):
    return f"#ifdef CUSET_SIM_KERNEL_LIBRARY\n{simulator}#else\n{gpu}#endif\n"


def _asm_kernel(name, args, body, ins, uses_smem, bounds):
    """A __global__ function whose body is `body` (PTX, its % escaped) as one asm statement."""
    ins = list(ins)
    code = f'extern "C" __global__ void {bounds}{name}({args}) {{\n'
    if uses_smem:
        code += "  extern __shared__ __align__(16) unsigned char cuset_triton_smem[];\n"
        ins.append('"r"(static_cast<unsigned>(__cvta_generic_to_shared(cuset_triton_smem)))')
    text = "".join(f'    "{line}\\n"\n' for line in body.splitlines())
    return code + f"  asm volatile(\n    \"{{\\n\"\n{text}    \"}}\"\n    :: {', '.join(ins)} : \"memory\");\n}}\n"


def _own_registers(body):
    """Triton's registers renamed apart from the compiler's. NVRTC substitutes each operand with a
    register of the enclosing function (%r3, %rd1: the names Triton's PTX uses too), and the asm
    statement's own `.reg` declarations would shadow it: the parameter read would be Triton's
    uninitialised register of the same name. `body` has its % escaped (%%)."""
    declared = sorted(set(re.findall(r"\.reg\s+\.\w+\s+%%([A-Za-z_]\w*?)<\d+>", body)), key=len, reverse=True)
    if not declared:
        return body
    names = "|".join(re.escape(d) for d in declared)
    return re.sub(r"%%(" + names + r")(?=<|\d)", r"%%cuset_\1", body)


def _refuse_launch_options(metadata):
    """What Triton's launcher would do that a plain Driver API launch of the plan does not."""
    if metadata.get("num_ctas", 1) != 1 or tuple(metadata.get("cluster_dims", (1, 1, 1)) or (1, 1, 1)) not in ((1, 1, 1), (1,), ()):
        raise unsupported(f"a Triton kernel launched as thread block clusters (num_ctas={metadata.get('num_ctas')}) is not run yet")
    for option in ("launch_cooperative_grid", "launch_pdl"):
        if metadata.get(option):
            raise unsupported(f"a Triton kernel launched with {option}=True is not run yet")


def _from_operand(load_type, register, n):
    """`ld.param.<type> register, [param_n]` as an instruction reading operand %n: a mov, or a cvt where
    the register is wider than the parameter (a load sign- or zero-extends; LLVM names 64-bit registers
    %rd, 16-bit %rs)."""
    width = int(re.sub(r"\D", "", load_type) or 0)
    name = register.strip().lstrip("%")
    reg_width = 64 if name.startswith("rd") else 16 if name.startswith("rs") else width
    if reg_width == width or width == 0:
        return f"mov.b{width} {register}, %{n}"
    kind = "s" if load_type.startswith("s") else "u"
    return f"cvt.{kind}{reg_width}.{kind}{width} {register}, %{n}"


def _scalar(value, ptype):
    """A scalar argument as the plan holds it: little-endian bytes and a kind."""
    import struct
    if ptype == "f32":
        return {"bytes": struct.pack("<f", float(value)).hex(), "kind": "float"}
    if ptype == "f64":
        return {"bytes": struct.pack("<d", float(value)).hex(), "kind": "float"}
    size = {"u64": 8, "b64": 8, "s64": 8, "u32": 4, "b32": 4, "s32": 4, "u16": 2, "b16": 2, "u8": 2}[ptype]
    return {"bytes": (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little").hex(), "kind": "int"}


def launch(fn, args, kwargs, grid):
    """Records one launch of the JITFunction `fn` (its run() replaced: see the module's docstring)."""
    import kb_recording
    from kb_recording import Rec
    options_kwargs = {k: v for k, v in kwargs.items() if k not in fn.arg_names}
    call_kwargs = {k: v for k, v in kwargs.items() if k in fn.arg_names}
    bound = fn.signature.bind(*args, **call_kwargs)
    bound.apply_defaults()
    values = list(bound.arguments.values())
    proxies = [_aligned_like(v) if isinstance(v, Rec) else v for v in values]
    for v in values:
        if isinstance(v, torch.Tensor) and not isinstance(v, Rec):
            raise unsupported("a Triton kernel is given a tensor that is not one of the recording's (a CPU tensor?)")
    backend = _backend()
    if id(fn) not in BINDERS:
        BINDERS[id(fn)] = create_function_from_signature(fn.signature, fn.params, backend)
    binder = BINDERS[id(fn)]
    bound_args, specialization, options = binder(*proxies, **options_kwargs)
    options, signature, constexprs, attrs = fn._pack_args(backend, options_kwargs, bound_args, specialization, options)
    key = (id(fn), tuple(signature.items()), tuple(sorted((str(k), repr(v)) for k, v in constexprs.items())),
           tuple(sorted((str(k), repr(v)) for k, v in attrs.items())), repr(sorted(options.__dict__.items())))
    if key not in KERNELS:
        ptx, metadata = _compile(fn, signature, constexprs, attrs, options)
        if metadata.get("global_scratch_size", 0) or metadata.get("profile_scratch_size", 0):
            raise unsupported("a Triton kernel that needs global scratch memory is not simulated")
        simulated = ARCH == SIM_ARCH
        if not simulated:
            _refuse_launch_options(metadata)
        name = f"cuset_triton_{len(KERNELS)}_{metadata['name']}"
        code, params, interpreted = cuda_of_ptx(ptx, name, simulated)
        target = re.search(r"^\s*\.target\s+(\w+)", ptx, re.M)
        if target:
            TARGETS.add(target.group(1))
        if interpreted:
            CHOICES.append(interpreted)
        SOURCES.append(code)
        NAMES.append(name)
        KERNELS[key] = {"name": name, "params": params, "shared": metadata["shared"], "threads": 32 * metadata["num_warps"]}
    kernel = KERNELS[key]
    meta = dict(zip(fn.arg_names, values))
    meta.update(options_kwargs)
    g = grid(meta) if callable(grid) else grid
    g = [int(x) for x in (tuple(g) if isinstance(g, (tuple, list)) else (g,))] + [1, 1]
    runtime = [v for v, (kind, _) in zip(values, specialization) if kind != "constexpr"]
    plan_args = []
    for n, (ptype, _, _) in enumerate(kernel["params"]):
        if n >= len(runtime):
            plan_args.append({"null": True})  # Triton 3.x's global and profile scratch pointers
        elif isinstance(runtime[n], Rec):
            t = runtime[n]
            plan_args.append({"buffer": t.buffer.id, "byte_offset": t.meta.storage_offset() * t.element_size()})
        elif runtime[n] is None:
            plan_args.append({"null": True})
        else:
            plan_args.append(_scalar(runtime[n], ptype))
    if min(g[:3]) <= 0:
        return None  # an empty grid launches nothing (as on a GPU)
    step = {"kernel": kernel["name"], "grid": g[:3], "block": [kernel["threads"], 1, 1], "shared": kernel["shared"], "args": plan_args,
            "library": "triton"}
    if _CAPTURED:
        _CAPTURED[-1].append(step)
        return None
    if _TUNED:
        step["autotune"] = _TUNED.pop()
    kb_recording.current().record_launch(step)
    return None


def autotuned(tuner, args, kwargs):
    """Autotuner.run: the first configuration its pruning keeps, deterministically; for a GPU, with every
    kept configuration's launch beside it for the GPU worker to time (see the module's docstring).

    Autotuning's own reset (`reset_to_zero` after timing) is not recorded: Triton does it only on the call
    that tunes, and KernelBench's trials are later calls of the same forward, so a kernel that needs it to
    be right is wrong there, as it is here."""
    tuner.nargs = dict(zip(tuner.arg_names, args))
    configs = tuner.prune_configs(kwargs) if len(tuner.configs) > 1 else tuner.configs
    config = configs[0]
    name = getattr(getattr(tuner, "base_fn", tuner.fn), "__name__", "kernel")
    tuned = _configurations(tuner, name, args, kwargs, configs) if ARCH != SIM_ARCH and len(configs) > 1 else None
    if tuned:
        config = tuned.pop("kept")[0]
        if len(tuned["alternatives"]) > 1:
            _TUNED[:] = [tuned]
            CHOICES.append(f"autotune {name}: {len(tuned['configs'])} of {len(configs)} kept configurations to time on the GPU, "
                           f"{config} the first")
        else:
            CHOICES.append(f"autotune {name}: {config}, the only one of {len(configs)} kept configurations the GPU can run")
    else:
        CHOICES.append(f"autotune {name}: {config} (the first of {len(configs)} kept)")
    full = {**tuner.nargs, **kwargs, **config.all_kwargs()}
    if config.pre_hook:
        config.pre_hook(full)
    try:
        return tuner.fn.run(*args, **kwargs, **config.all_kwargs())
    finally:
        _TUNED.clear()


# The dynamic shared memory a block can have on the GPUs the cuda backend runs (sm_90's opt-in maximum,
# LaunchLimits::maxSharedBytes): a configuration asking for more is one Triton's timing skips
# (OutOfResources at its launch).
SHARED_OPTIN = 232448


def _configurations(tuner, name, args, kwargs, configs):
    """Each kept configuration's launch for the GPU worker to time, and the configurations those are
    (`kept`), or None where the launches cannot be timed that way (then the first configuration is the
    GPU's too, and the log says why)."""
    if any(c.pre_hook for c in configs):
        CHOICES.append(f"autotune {name}: a configuration has a pre_hook, which the GPU worker does not run; the first is taken there too")
        return None
    nargs = {**tuner.nargs, **kwargs}
    # Triton's tuning key: the values of the key arguments and every tensor's dtype.
    key = [repr(nargs[k]) for k in tuner.keys if k in nargs] + [str(v.dtype) for k, v in nargs.items() if k in tuner.arg_names and hasattr(v, "dtype")]
    tuned = {"key": f"{name}({', '.join(key)})", "configs": [], "alternatives": [], "kept": []}
    from triton.compiler.errors import CompileTimeAssertionFailure
    from triton.runtime.errors import OutOfResources
    for n, c in enumerate(configs):
        _CAPTURED.append([])
        try:
            tuner.fn.run(*args, **kwargs, **c.all_kwargs())
        except (OutOfResources, CompileTimeAssertionFailure, Verdict) as e:  # Triton's timing: infinitely slow; or unsupported here
            if n == 0:
                raise  # the CPU's configuration: its failure is the recording's
            CHOICES.append(f"autotune {name}: {c} is not timed on the GPU: {e}")
            continue
        finally:
            steps = _CAPTURED.pop()
        if len(steps) != 1:
            CHOICES.append(f"autotune {name}: a configuration makes {len(steps)} launches; the first configuration is taken on the GPU too")
            return None
        if steps[0]["shared"] > SHARED_OPTIN:
            CHOICES.append(f"autotune {name}: {c} is not timed on the GPU: its {steps[0]['shared']} bytes of shared memory are over the "
                           f"{SHARED_OPTIN} a block can have")
            continue
        tuned["configs"].append(str(c))
        tuned["alternatives"].append(steps[0])
        tuned["kept"].append(c)
    return tuned if tuned["kept"] else None


def patch_triton():
    """Replaces Triton's launch and autotuning with the recording's; a no-op without Triton."""
    if triton is None:
        return
    JITFunction.run = lambda self, *args, grid, warmup, **kwargs: None if warmup else launch(self, args, kwargs, grid)
    Autotuner.run = lambda self, *args, **kwargs: autotuned(self, args, kwargs)


def recorded_sources():
    """What the recording adds to the plan's device code and log, and the NVRTC target the code needs
    where that is an architecture-specific one (Triton's Hopper code: sm_90a)."""
    specific = sorted(t for t in TARGETS if t.endswith("a"))
    if len(specific) > 1:
        raise unsupported(f"Triton kernels for several architecture-specific targets: {', '.join(specific)}")
    out = {"log": CHOICES, **({"target": specific[0]} if specific else {})}
    if ARCH == SIM_ARCH:
        out["device_source"] = "".join(SOURCES)
    else:
        # Each kernel's code on its own (the device code is theirs, joined): the translator assembles each
        # autotuned configuration alone and leaves out those ptxas refuses, as Triton's timing skips a PTXASError.
        out["kernels"] = [{"name": n, "code": c} for n, c in zip(NAMES, SOURCES)]
    return out
