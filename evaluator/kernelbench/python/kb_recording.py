"""Tensors with shapes and no data, and the recorder every torch op of a solution goes to
(kb_recorder.py): factories and views become buffers and views, every other op a library
step, and the host build's launches kernel steps.

The recording has two phases, as KernelBench runs a solution: `ModelNew(...)` (init) and `forward`.
Ops in `__init__` are recorded too: a parameter's initialiser is dropped when the parameter is bound to
the problem's weight (KernelBench builds Model and ModelNew after the same seed, so parameters made
alike are equal), and whatever `__init__` derives from the weights (a transposed copy, a folded batch
norm) stays as steps that run before forward's, on every trial's fresh weights.

Values: a tensor made from data (`torch.tensor([...])`, a module-level constant) and anything computed
only from such constants carry their real values (small ones), so `.item()` on them is answered; the
constant itself enters the plan as fill steps. A value computed from the trial's inputs or weights is
never known here.
"""
import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from kb_sandbox import Verdict, unsupported
from kb_streams import DEFAULT_STREAM, StreamOrder, races

DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float64: "float64",
               torch.int32: "int32", torch.int64: "int64", torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8",
               torch.bool: "bool"}
DTYPES = {v: k for k, v in DTYPE_NAMES.items()}
HIDDEN_WRITES = {"native_batch_norm", "batch_norm", "_batch_norm_impl_index", "cudnn_batch_norm", "miopen_batch_norm",
                 "_native_batch_norm_legit", "instance_norm"}
PLAN_DTYPES = {torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool}
RANDOM_OPS = ("bernoulli", "normal", "uniform", "rand", "randn", "randint", "randperm", "multinomial", "exponential",
              "geometric", "cauchy", "log_normal", "random_", "native_dropout", "poisson")

# Ops that make a new tensor from shapes (a tensor argument gives only its metadata).
FACTORY_OPS = {"empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros", "ones",
               "ones_like", "new_ones", "full", "full_like", "new_full", "arange", "eye", "scalar_tensor", "linspace"}
VALUE_LIMIT = 1 << 16          # elements: up to this, a tensor computed from constants carries its real value
CONSTANT_LIMIT = 4096          # elements of a constant made with data that the plan can hold (as fill steps)
TORCH_NN = ("/torch/nn/",)     # torch's own module code: a write from there in __init__ is an initialiser


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
        self.alias = None         # a parameter bound to the problem's weight: that weight's buffer
        self.random = None        # filled with random numbers: by what, where
        self.random_from = set()  # the random buffers its values were computed from (in __init__)
        self.shape = None         # as first made (binding a random temporary to a weight needs it)
        self.constant = None      # made with data: the values (a flat CPU tensor)
        self.tainted = False      # written by a step whose result is not known here: no value
        self.module_tensor = False  # registered as a module's parameter or buffer
        self.derived = False      # computed in __init__ from a module's tensors: never bound to a weight
        self.on_host = None       # in the host's memory: how it got there ("torch::zeros without a device")
        self.base = torch.empty(numel, dtype=dtype, device="meta")

    def root(self):
        b = self
        while b.alias is not None:
            b = b.alias
        return b


class Ref:
    """A buffer as a step names it; the name is resolved when the plan is written, after __init__'s
    parameters are bound to the problem's weights."""
    __slots__ = ("buffer",)

    def __init__(self, buffer):
        self.buffer = buffer


class Rec(torch.Tensor):
    """A tensor of the recording: a view (sizes, strides, offset) of a buffer, on 'cuda' as far as the
    solution can tell."""

    @staticmethod
    def __new__(cls, buffer, meta, value=None):
        # On the meta device for torch's C++ (a CPU-only torch has no CUDA device guard), on "cuda" for
        # the solution's Python (is_cuda, device).
        r = torch.Tensor._make_wrapper_subclass(cls, meta.size(), strides=meta.stride(), storage_offset=meta.storage_offset(),
                                                dtype=meta.dtype, device=torch.device("meta"), requires_grad=False)
        r.buffer = buffer
        r.meta = meta
        r._value = value
        return r

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return current().dispatch(func, args, kwargs or {})

    def __deepcopy__(self, memo):
        """copy.deepcopy (nn.TransformerEncoder copies its layer N times): a new tensor with the same
        values, made by a clone step. A copied parameter is a parameter of its own, bound like any other
        (Model's copies are weights of the problem too); its value is the copy's until then."""
        if id(self) in memo:
            return memo[id(self)]
        new = self.clone()  # through Rec's own dispatch: the recorder, whatever mode is active
        source = self.buffer.root()
        new.buffer.derived = False
        new.buffer.random = source.random or (f"a copy of {source.random}" if source.random_from else None)
        new.buffer.random_from = set(source.random_from)
        if getattr(self, "_is_param", False):
            new._is_param = True
        memo[id(self)] = new
        return new

    @property
    def value(self):
        """The real values, when they are known (computed from constants only)."""
        return None if self.buffer.tainted else self._value

    @property
    def is_cuda(self):
        return True

    @property
    def device(self):
        return torch.device("cuda", 0)

    def __repr__(self):
        return f"Rec(buffer {self.buffer.name}, {tuple(self.shape)}, {self.dtype})"


def json_scalar(v):
    """A scalar as a recorded step holds it: JSON has no inf or nan, so those are {"float": "inf"}."""
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return {"float": str(v)}
    return v


def view_json(t):
    if t.dtype not in PLAN_DTYPES:
        raise unsupported(f"a step uses a tensor of dtype {t.dtype}, which the harness does not hold")
    return {"buffer": Ref(t.buffer), "offset": t.meta.storage_offset(), "sizes": list(t.meta.size()), "strides": list(t.meta.stride()),
            "dtype": DTYPE_NAMES[t.dtype]}


def access(t, writes):
    """(buffer, (offset, sizes, strides), writes) of a view: the elements it touches."""
    return (t.buffer, (t.meta.storage_offset(), tuple(t.meta.size()), tuple(t.meta.stride())), writes)


def storage_span(meta):
    if meta.numel() == 0:
        return 0
    return meta.storage_offset() + sum((s - 1) * st for s, st in zip(meta.size(), meta.stride())) + 1


def refs_in(obj):
    """Every Ref in a recorded step."""
    if isinstance(obj, Ref):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from refs_in(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from refs_in(v)


def called_from_torch_nn():
    f = sys._getframe(2)
    while f is not None:
        if any(p in f.f_code.co_filename.replace("\\", "/") for p in TORCH_NN):
            return True
        f = f.f_back
    return False


class Recorder:
    def __init__(self):
        self.buffers = []
        self.steps = []
        self.handles = []          # handle -> Rec, for the host build
        self.module_buffer_tensors = {}  # input buffer id -> the module buffers bound to it
        self.phase = "forward"     # or "init": ModelNew(...) is being built
        self.init_writes = {}      # id(step) -> (buffers it writes, whether an initialiser wrote them, its new outputs)
        self.stream = DEFAULT_STREAM  # the current stream (torch.cuda.stream(s))
        self.streams = StreamOrder()
        self.stamps = {}           # id(step) -> (what it is, its stream stamp, [access(...)])

    # -- buffers ------------------------------------------------------------------------------------
    def new_buffer(self, dtype, numel, role="scratch", name=None, init="empty"):
        b = Buffer(len(self.buffers), dtype, max(int(numel), 1), role, name or f"t{len(self.buffers)}", init)
        self.buffers.append(b)
        return b

    def fresh(self, meta_out, init="empty", value=None):
        b = self.new_buffer(meta_out.dtype, storage_span(meta_out), init=init)
        b.shape = tuple(meta_out.size()) if meta_out.is_contiguous() and meta_out.storage_offset() == 0 else None
        return Rec(b, b.base.as_strided(meta_out.size(), meta_out.stride(), 0), value)

    def wrap_view(self, of, meta_out, value=None):
        return Rec(of.buffer, meta_out, value)

    def constant(self, real):
        """A tensor the solution made with data (torch.tensor([...]), a module-level constant): a buffer
        the plan fills with those values before any step."""
        if real.dtype not in PLAN_DTYPES:
            real = real.to(torch.float32) if real.is_floating_point() else real
        if real.numel() > CONSTANT_LIMIT:
            raise unsupported(f"the solution uses a constant tensor of {real.numel()} elements made with data (at most {CONSTANT_LIMIT} "
                              "are recorded)")
        flat = real.detach().to("cpu").contiguous().reshape(-1).clone()
        b = self.new_buffer(flat.dtype, flat.numel(), name=f"const{len(self.buffers)}")
        b.constant = flat
        meta = b.base.as_strided(real.shape, torch.empty(real.shape, device="meta").stride(), 0)
        return Rec(b, meta, flat.reshape(real.shape))

    def as_recorded(self, a):
        """A real tensor that reaches an op (a constant made with data) becomes one of the recording's."""
        if isinstance(a, torch.Tensor) and not isinstance(a, Rec) and a.device.type != "meta":
            return self.constant(a)
        return a

    # -- the dispatch of every torch op -------------------------------------------------------------
    def dispatch(self, func, args, kwargs):
        """An op on tensors in the host's memory and on the GPU fails as torch fails it; one on host
        tensors alone makes host tensors."""
        recs = [a for a in torch.utils._pytree.tree_flatten((args, kwargs))[0] if isinstance(a, Rec)]
        hosts = [a for a in recs if a.buffer.root().on_host]
        if hosts and len(hosts) < len(recs) and any(a.dim() > 0 for a in hosts):
            raise Verdict("runtime_error", f"{func.name()}: Expected all tensors to be on the same device, but found at least two devices, "
                                           f"cuda:0 and cpu! (a tensor in the host's memory: {hosts[0].buffer.root().on_host})")
        out = self.dispatch_op(func, args, kwargs)
        if hosts and len(hosts) == len(recs):
            for o in torch.utils._pytree.tree_flatten(out)[0]:
                if isinstance(o, Rec) and o.buffer.root().on_host is None:
                    o.buffer.root().on_host = hosts[0].buffer.root().on_host
        return out

    def dispatch_op(self, func, args, kwargs):
        name = func.name()  # "aten::add.Tensor"
        base = name.split("::")[-1].split(".")[0]
        args, kwargs = torch.utils._pytree.tree_map(self.as_recorded, (args, kwargs))
        if base == "lift_fresh":
            return args[0]
        if base == "_local_scalar_dense":
            return self.scalar_value(args[0])
        if base in ("_to_copy", "to", "copy_") and kwargs.get("device") is not None and torch.device(kwargs["device"]).type == "cpu":
            raise unsupported("forward moves a tensor to the host (.cpu())")
        if any(r in base for r in RANDOM_OPS):
            return self.random_values(func, args, kwargs)
        if base in ("set_", "resize_", "record_stream"):
            raise unsupported(f"{'ModelNew(...)' if self.phase == 'init' else 'forward'} calls {name}")

        metas = torch.utils._pytree.tree_map(lambda a: a.meta if isinstance(a, Rec) else a, (args, kwargs))
        m_args, m_kwargs = metas
        if "device" in m_kwargs and m_kwargs["device"] is not None:
            m_kwargs = dict(m_kwargs, device="meta")
        try:
            out = func(*m_args, **m_kwargs)
        except NotImplementedError as e:
            raise unsupported(f"{name} cannot be recorded on shapes alone (its result's shape depends on data): {str(e).splitlines()[0][:120]}")
        real = self.real_result(func, args, kwargs, out)

        schema = func._schema
        self.copy_written_module_buffers(schema, args, kwargs)
        factory = base in FACTORY_OPS or not any(isinstance(a, Rec) for a in torch.utils._pytree.tree_flatten((args, kwargs))[0])
        if factory:
            return self.factory(func, base, out, args, kwargs, real)

        returns = list(out) if isinstance(out, (tuple, list)) else [out]
        values = list(real) if isinstance(real, (tuple, list)) else [real]
        results = []
        record = False
        step_outputs = []
        written = []
        for i, r in enumerate(returns):
            if not isinstance(r, torch.Tensor):
                results.append(r)
                continue
            value = values[i] if real is not None and i < len(values) and isinstance(values[i], torch.Tensor) else None
            alias = schema.returns[i].alias_info if i < len(schema.returns) else None
            src = self.aliased_argument(schema, alias, args, kwargs) if alias is not None else None
            if src is not None and alias.is_write:
                results.append(src)        # in place, or out=: the argument itself
                written.append(src.buffer)
                record = True
            elif src is not None:
                results.append(self.wrap_view(src, r, value))  # a view: no step
            else:
                fresh = self.fresh(r, value=value)
                results.append(fresh)
                step_outputs.append(fresh)
                record = True
        if not returns:
            record = True
        written += self.written_arguments(schema, args, kwargs)
        if real is None:
            for b in written:
                b.tainted = True   # its values are no longer known
        if base == "zero_" and isinstance(args[0], Rec) and self.whole_unwritten(args[0]):
            args[0].buffer.init = "zeros"  # zero_ on a fresh buffer: torch.zeros, not a library op
            record = self.phase == "init"  # an initialiser in __init__: dropped if the buffer is bound to a weight
        if record:
            self.record_library(func, args, kwargs, step_outputs, written)
        if isinstance(out, (tuple, list)):
            return type(out)(results) if isinstance(out, tuple) else results
        return results[0]

    def scalar_value(self, t):
        if isinstance(t, Rec) and t.value is not None:
            return t.value.item()
        where = "ModelNew(...)" if self.phase == "init" else "forward"
        raise unsupported(f"{where} reads a tensor's value on the host (.item(), float(t), int(t), bool(t), or a tensor in an if) that is "
                          "computed from the trial's inputs or weights, which the recording never sees")

    def real_result(self, func, args, kwargs, meta_out):
        """The op on real values, when every tensor it reads has one and the result is small."""
        flat = torch.utils._pytree.tree_flatten((args, kwargs))[0]
        recs = [a for a in flat if isinstance(a, Rec)]
        if any(r.value is None for r in recs):
            return None
        outs = meta_out if isinstance(meta_out, (tuple, list)) else [meta_out]
        if any(isinstance(o, torch.Tensor) and o.numel() > VALUE_LIMIT for o in outs):
            return None
        r_args, r_kwargs = torch.utils._pytree.tree_map(lambda a: a.value if isinstance(a, Rec) else a, (args, kwargs))
        if r_kwargs.get("device") is not None:
            r_kwargs = dict(r_kwargs, device="cpu")
        try:
            with torch.utils._python_dispatch._disable_current_modes():
                return func(*r_args, **r_kwargs)
        except Exception:  # noqa: BLE001 - no value then; the op is still recorded
            return None

    def random_values(self, func, args, kwargs):
        """Random numbers: no step. In __init__ they are an initialiser's (a parameter bound to the
        problem's weight gets the trial's values instead); in forward, a warm-up's input that nothing
        else uses is harmless. Any use of them that reaches the plan is refused when it is written: the
        result would not be a function of the inputs."""
        m_args, m_kwargs = torch.utils._pytree.tree_map(lambda a: a.meta if isinstance(a, Rec) else a, (args, kwargs))
        if m_kwargs.get("device") is not None:
            m_kwargs = dict(m_kwargs, device="meta")
        out = func(*m_args, **m_kwargs)
        schema = func._schema
        returns = list(out) if isinstance(out, (tuple, list)) else [out]
        results = []
        for i, r in enumerate(returns):
            if not isinstance(r, torch.Tensor):
                results.append(r)
                continue
            alias = schema.returns[i].alias_info if i < len(schema.returns) else None
            src = self.aliased_argument(schema, alias, args, kwargs) if alias is not None else None
            t = src if src is not None else self.fresh(r)
            t.buffer.random = f"{func.name()} in {'ModelNew(...)' if self.phase == 'init' else 'forward'}"
            t.buffer.tainted = True
            t.buffer.written = True
            results.append(t)
        if isinstance(out, (tuple, list)):
            return type(out)(results) if isinstance(out, tuple) else results
        return results[0]

    def written_arguments(self, schema, args, kwargs):
        params = schema.arguments
        values = list(args) + [kwargs.get(p.name) for p in params[len(args):]]
        return [v.buffer for p, v in zip(params, values) if p.alias_info is not None and p.alias_info.is_write and isinstance(v, Rec)]

    def copy_written_module_buffers(self, schema, args, kwargs):
        """BatchNorm in training mode updates its running statistics in place. In forward they are the
        state the reference updates too, so the step writes them (the trials compare them with the
        reference's update, DESIGN §3); in __init__ they are the trial's inputs, which no step may
        change, so the op updates a copy of them instead."""
        if self.phase != "init":
            return
        params = schema.arguments
        values = list(args) + [kwargs.get(p.name) for p in params[len(args):]]
        # Batch norm in training mode updates running_mean and running_var without saying so in its schema.
        hidden = {"running_mean", "running_var"} if schema.name.split("::")[-1] in HIDDEN_WRITES and any(
            p.name == "training" and v is True for p, v in zip(params, values)) else set()
        for p, v in zip(params, values):
            written = (p.alias_info is not None and p.alias_info.is_write) or p.name in hidden
            if not (written and isinstance(v, Rec)):
                continue
            b = v.buffer.root()
            if b.role != "input" or not b.module_buffer:
                continue
            copy = self.new_buffer(b.dtype, b.numel)
            src = Rec(b, b.base.as_strided([b.numel], [1], 0))
            dst = Rec(copy, copy.base.as_strided([b.numel], [1], 0))
            self.append({"library": {"op": "aten::copy_", "overload": "", "args": [{"tensor": view_json(dst)}, {"tensor": view_json(src)}],
                                      "kwargs": {}, "outputs": [], "purpose": "buffer_copy"}}, "a copy of a module buffer",
                        [access(dst, True), access(src, False)])
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

    def factory(self, func, base, out, args, kwargs, real):
        if not isinstance(out, torch.Tensor):
            return out
        value = real if isinstance(real, torch.Tensor) else None
        if base in ("empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided"):
            t = self.fresh(out, "empty")
            t.buffer.tainted = True  # what it holds is not known
            return t
        if base in ("zeros", "zeros_like", "new_zeros"):
            return self.fresh(out, "zeros", value)
        t = self.fresh(out, "empty", value)
        self.record_library(func, args, kwargs, [t], [])  # ones, full, arange, eye: computed into a new buffer
        return t

    def record_library(self, func, args, kwargs, outputs, written=()):
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
                raise unsupported(f"{func.name()} takes a tensor that is not one of the recording's")
            return json_scalar(a)

        tensors = [t for t in torch.utils._pytree.tree_flatten((args, kwargs))[0] if isinstance(t, Rec)]
        for t in tensors:
            t.buffer.written = True
        for t in outputs:
            t.buffer.written = True
        name = func.name()
        op, _, overload = name.partition(".")
        step = {"library": {"op": op, "overload": overload, "args": [enc(a) for a in args],
                            "kwargs": {k: enc(v) for k, v in kwargs.items()},
                            "outputs": [view_json(t) for t in outputs]}}
        self.note_init_write(step, [t.buffer for t in outputs] + list(written), op.split("::")[-1] in FACTORY_OPS, [t.buffer for t in tensors],
                             [t.buffer for t in outputs])
        writes = {id(b) for b in written} | {id(t.buffer) for t in outputs}
        accesses = [access(t, id(t.buffer) in writes) for t in tensors]
        self.append(step, f"{op}", accesses + [access(t, True) for t in outputs])

    def note_init_write(self, step, written, filler, reads=(), fresh=()):
        """In __init__: what a step writes and whether an initialiser wrote it; a new tensor computed from a
        module's tensors is derived (a scaled copy of a weight is no weight of its own), one computed only
        from random numbers is random like them (`randn(n) * 0.02` initialises a parameter)."""
        if self.phase != "init":
            return
        self.init_writes[id(step)] = (written, filler or called_from_torch_nn(), list(fresh))
        roots = [b.root() for b in reads]
        if any(b.module_tensor or b.derived for b in roots):
            for b in fresh:
                b.derived = True
        elif any(b.random or b.random_from for b in roots):
            for b in fresh:
                b.random_from = set().union(*({x} if x.random else set() for x in roots), *(x.random_from for x in roots))
                b.tainted = True

    def record_launch(self, launch):
        args = []
        written = []
        accesses = []
        for a in launch["args"]:
            if "buffer" in a:
                ident = a["buffer"]
                if ident >= len(self.buffers):
                    raise unsupported("a kernel argument points outside every tensor")
                b = self.buffers[ident]
                if b.root().on_host:
                    raise Verdict("runtime_error", f"kernel {launch['kernel']} is given a tensor in the host's memory ({b.root().on_host}): "
                                                   "a GPU kernel cannot reach it (an illegal memory access there)")
                if b.dtype not in PLAN_DTYPES:
                    raise unsupported(f"a kernel takes a tensor of dtype {b.dtype}, which the harness does not hold")
                b.written = True
                writes = not a.get("const", False)
                if writes:
                    b.tainted = True
                    written.append(b)
                first = a["byte_offset"] // max(b.base.element_size(), 1)
                accesses.append((b, (first, (max(b.numel - first, 0),), (1,)), writes))  # anything from there on
                args.append({"buffer": Ref(b), "byte_offset": a["byte_offset"]})
            else:
                args.append(a)
        step = {"kernel": {"name": launch["kernel"], "grid": launch["grid"], "block": launch["block"],
                           "shared": launch["shared"], "args": args, "library": launch.get("library", "")}}
        if "autotune" in launch:  # the other configurations take the same tensors, at the same offsets
            tuned = launch["autotune"]
            # An alternative's arguments are written only where they differ from the step's (a configuration
            # sets constexprs, which are no arguments): a recording with thousands of launches stays small.
            step["kernel"]["autotune"] = {"key": tuned["key"], "configs": tuned["configs"], "alternatives": [
                {"name": alt["kernel"], "grid": alt["grid"], "block": alt["block"], "shared": alt["shared"],
                 **({} if alt["args"] == launch["args"] else {"args": [self.alternative_arg(a) for a in alt["args"]]})}
                for alt in tuned["alternatives"]]}
        self.note_init_write(step, written, False, [b for b, _, _ in accesses])
        self.append(step, f"kernel {launch['kernel']}", accesses)

    def alternative_arg(self, a):
        if "buffer" not in a:
            return a
        if a["buffer"] >= len(self.buffers):
            raise unsupported("a kernel argument points outside every tensor")
        return {"buffer": Ref(self.buffers[a["buffer"]]), "byte_offset": a["byte_offset"]}

    def record_gemm(self, g):
        """cublasSgemm(StridedBatched): C = alpha op(A) op(B) + beta C on column-major matrices, recorded
        as the library steps torch makes of it on strided views of the tensors the pointers point into
        (a column-major rows x cols matrix with leading dimension ld is the view (rows, cols), strides
        (1, ld)). A matrix that reaches past its tensor is the call's out-of-bounds access."""
        batch = g["batch"]

        def matrix(p, rows, cols, ld, stride, what):
            if "buffer" not in p:
                raise unsupported(f"cuBLAS is given a null {what}")
            if p["buffer"] >= len(self.buffers):
                raise unsupported(f"cuBLAS's {what} points outside every tensor")
            b = self.buffers[p["buffer"]]
            if b.dtype != torch.float32:
                raise unsupported(f"cuBLAS's {what} is a {b.dtype} tensor (cublasSgemm takes float32)")
            if rows <= 0 or cols <= 0 or batch <= 0 or ld < rows or stride < 0:
                raise Verdict("runtime_error", f"cublasSgemm: invalid {what} ({rows} x {cols}, leading dimension {ld}, {batch} batch(es))")
            offset = p["byte_offset"] // 4
            last = offset + (batch - 1) * stride + (rows - 1) + (cols - 1) * ld
            if last >= b.numel:
                raise Verdict("runtime_error", f"cublasSgemm: {what} ({rows} x {cols}, leading dimension {ld}) reaches element {last} of "
                                               f"a tensor of {b.numel}")
            with torch.utils._python_dispatch._disable_current_modes():  # the view is made here, not recorded
                view = b.base.as_strided((batch, rows, cols), (stride, 1, ld), offset)
            return Rec(b, view)

        m, n, k = g["m"], g["n"], g["k"]
        a = matrix(g["a"], *((k, m) if g["transa"] else (m, k)), g["lda"], g["stride_a"], "A")
        b = matrix(g["b"], *((n, k) if g["transb"] else (k, n)), g["ldb"], g["stride_b"], "B")
        c = matrix(g["c"], m, n, g["ldc"], g["stride_c"], "C")
        product = torch.bmm(a.transpose(1, 2) if g["transa"] else a, b.transpose(1, 2) if g["transb"] else b)
        if g["alpha"] != 1.0:
            product = product * g["alpha"]
        if g["beta"] != 0.0:  # cuBLAS does not read C when beta is 0
            product = product + c * g["beta"]
        c.copy_(product)

    def record_memset(self, m):
        """cudaMemset(Async)(pointer, value, bytes) on tensor memory: the elements it covers filled with the
        element whose every byte is `value` (0: zero; 0xFF: -1 for integers, NaN for floats), recorded as
        the fill torch makes of it. A fill past its tensor is the call's out-of-bounds write; one that
        covers part of an element is `unsupported`."""
        p, value, count = m["pointer"], m["value"], m["bytes"]
        if "buffer" not in p:
            raise Verdict("runtime_error", "cudaMemset on a null pointer")
        if p["buffer"] >= len(self.buffers):
            raise unsupported("cudaMemset on memory outside every tensor")
        b = self.buffers[p["buffer"]]
        size = b.base.element_size()
        if p["byte_offset"] % size or count % size:
            raise unsupported(f"cudaMemset of part of an element ({count} bytes at byte {p['byte_offset']} of a {b.dtype} tensor)")
        first, n = p["byte_offset"] // size, count // size
        if first + n > b.numel:
            raise Verdict("runtime_error", f"cudaMemset writes {count} bytes from element {first} of a tensor of {b.numel} elements")
        if n == 0:
            return
        with torch.utils._python_dispatch._disable_current_modes():  # the view and the fill value are made here, not recorded
            view = b.base.as_strided([n], [1], first)
            fill = torch.tensor([value] * size, dtype=torch.uint8).view(b.base.dtype).item()
        Rec(b, view).fill_(fill)

    def append(self, step, what, accesses):
        if self.stream.id:
            step["stream"] = self.stream.id
        self.stamps[id(step)] = (f"step {len(self.steps) + 1} ({what})", self.streams.stamp(self.stream.id), accesses)
        self.steps.append(step)

    def race(self, steps):
        """The first pair of steps on different streams that nothing orders and that conflict, or None."""
        stamped = []
        for step in steps:
            if id(step) in self.stamps:
                what, stamp, accesses = self.stamps[id(step)]
                stamped.append((what, stamp, [(b.root(), view, w) for b, view, w in accesses]))
        return races(stamped)

    # -- the end of __init__ ------------------------------------------------------------------------
    def random_temporaries(self):
        """Buffers __init__ filled with random numbers and left unbound (a weight drawn into a local, or
        into a module ModelNew does not keep, and stored only as a derived copy), in the order they were
        made: after the same seed, the k-th draw of ModelNew is the k-th of Model where shapes agree."""
        return [b for b in self.buffers if b.random and "ModelNew" in b.random and b.alias is None and not b.derived and b.shape is not None]

    def bind(self, param_buffer, weight_buffer):
        """A parameter of ModelNew is the problem's weight from here on, in every step that names it."""
        param_buffer.alias = weight_buffer

    def finish_init(self):
        """__init__'s steps, now that the parameters are bound: an initialiser's write to a bound
        weight is dropped (the trial gives the weight); any other write to one (a folded batch norm:
        `conv.weight.data.mul_(...)`) works on a copy of the trial's weight, made before it, which the
        parameter then stands for; steps that derive other tensors stay and run first on every trial."""
        kept = []
        copies = {}  # weight buffer -> its copy
        for step in self.steps:
            written, initialiser, fresh = self.init_writes.get(id(step), ([], False, []))
            roots = {b.root() for b in written}
            bound = [r for r in roots if r.role == "input"]
            self.pin(step, copies)
            # An initialiser of bound weights, or the step that made a bound parameter's value
            # (`Parameter(torch.randn(n) * 0.5)`): the trial gives the values.
            made = bool(fresh) and all(b.root().role == "input" for b in fresh) and {b.root() for b in fresh} == roots
            if bound and len(bound) == len(roots) and (initialiser or made):
                continue
            for r in bound:
                if r in copies:
                    continue
                copy = self.new_buffer(r.dtype, r.numel)
                copy.written = True
                kept.append({"library": {"op": "aten::copy_", "overload": "", "purpose": "buffer_copy", "kwargs": {}, "outputs": [],
                                         "args": [{"tensor": self.whole(copy)}, {"tensor": self.whole(r)}]}})
                copies[r] = copy
                self.pin(step, copies)
            kept.append(step)
        # forward sees the copies: every parameter bound to a weight that __init__ changed
        for b in self.buffers:
            if b.alias is not None and b.root() in copies:
                b.alias = copies[b.root()]
        self.steps = kept
        self.init_writes = {}
        self.phase = "forward"
        self.streams.synchronize_device()  # KernelBench synchronizes after building ModelNew

    @staticmethod
    def pin(step, copies):
        for ref in refs_in(step):
            r = ref.buffer.root()
            if r in copies:
                ref.buffer = copies[r]

    @staticmethod
    def whole(b):
        return {"buffer": Ref(b), "offset": 0, "sizes": [b.numel], "strides": [1], "dtype": DTYPE_NAMES[b.dtype]}

    # -- the plan -----------------------------------------------------------------------------------
    def constant_steps(self, used):
        """Fill steps that give each constant buffer its values (runs of equal values in one fill)."""
        steps = []
        for b in used:
            if b.constant is None:
                continue
            vals = b.constant.tolist()
            start = 0
            while start < len(vals):
                end = start
                while end + 1 < len(vals) and vals[end + 1] == vals[start]:
                    end += 1
                v = json_scalar(vals[start])
                steps.append({"library": {"op": "aten::fill_", "overload": "Scalar", "purpose": "constant", "kwargs": {}, "outputs": [],
                                          "args": [{"tensor": {"buffer": Ref(b), "offset": start, "sizes": [end - start + 1], "strides": [1],
                                                               "dtype": DTYPE_NAMES[b.dtype]}}, v]}})
                start = end + 1
        return steps

    def live(self, steps, outputs):
        """The steps without the library steps whose results nothing uses (a warm-up call, a tensor
        __init__ keeps and never reads): they would only cost time and memory on every trial. Kernels
        stay, whatever they write: a kernel that faults must fault here too."""
        live = {ref.buffer.root() for ref in refs_in(outputs)}
        kept = []
        for step in reversed(steps):
            info = self.stamps.get(id(step))
            if "library" in step and info is not None:
                if not any(w and (b.root() in live or b.root().role == "input") for b, _, w in info[2]):
                    continue
            live |= {b.root() for b, _, _ in info[2]} if info is not None else {ref.buffer.root() for ref in refs_in(step)}
            kept.append(step)
        return kept[::-1]

    def resolved(self, steps, outputs):
        """Steps and outputs with every buffer named, the buffers they use (inputs always), and the first race
        between streams (or None): the plan keeps the program's order, the harness judges the race."""
        steps = self.live(steps, outputs)
        race = self.race(steps)
        used = [b for b in self.buffers if b.role == "input" and b.alias is None]
        seen = set(used)
        for ref in refs_in([steps, outputs]):
            r = ref.buffer.root()
            if r not in seen:
                seen.add(r)
                used.append(r)
        for r in used:
            for s in sorted(({r} if r.random else set()) | r.random_from, key=lambda b: b.id):
                if s.alias is not None:
                    continue  # bound to a weight: the trial's values
                if "ModelNew" in s.random:
                    raise unsupported(f"a tensor of random numbers ({s.random}: {s.name}, {s.numel} elements) is used, and it is no weight of "
                                      "the problem the trial could give (a parameter created in another order or shape than Model's)")
                raise unsupported(f"forward uses random numbers ({s.random}), so the result is not a function of the inputs")
        constants = self.constant_steps(used)

        def name(obj):
            if isinstance(obj, Ref):
                return obj.buffer.root().name
            if isinstance(obj, dict):
                return {k: name(v) for k, v in obj.items()}
            if isinstance(obj, list):
                return [name(v) for v in obj]
            return obj
        return name(constants + steps), name(outputs), used, race

    # -- the host build's view of tensors --------------------------------------------------------------
    def handle_of(self, t):
        self.handles.append(t)
        return {"tensor": len(self.handles) - 1, "buffer": t.buffer.id, "offset": t.meta.storage_offset(),
                "sizes": list(t.meta.size()), "strides": list(t.meta.stride()), "dtype": DTYPE_NAMES[t.dtype]}


_current = [Recorder()]


def mark_module_tensors():
    """Module.register_parameter / register_buffer mark the buffer they hold as a module's tensor (what
    __init__ derives from one is not a weight of its own). Once per process, before any ModelNew."""
    for name in ("register_parameter", "register_buffer"):
        original = getattr(torch.nn.Module, name)

        def marking(self, attr, tensor, *args, _original=original, **kwargs):
            if isinstance(tensor, Rec):
                tensor.buffer.module_tensor = True
            return _original(self, attr, tensor, *args, **kwargs)
        setattr(torch.nn.Module, name, marking)


def current():
    """The recorder of the size set being recorded."""
    return _current[0]


def start_recording():
    _current[0] = Recorder()
    return _current[0]


class Recording(TorchDispatchMode):
    """Every op, factories included, goes to the recorder."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return current().dispatch(func, args, kwargs or {})


class OnRecordingDevice(TorchFunctionMode):
    """The solution's tensors are all on "the GPU": devices it names become the meta device before
    torch would look for CUDA (this torch may have none), .cuda() and .to("cuda") are no-ops, and
    moving data to the host cannot be recorded. A tensor made with data keeps its data (on the CPU,
    where the recorder turns it into a constant)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in (torch.Tensor.cuda, torch.Tensor.contiguous) and isinstance(args[0], Rec) and (func is torch.Tensor.cuda or args[0].is_contiguous()):
            if func is torch.Tensor.cuda:
                moved_to_gpu(args[0])
            return args[0]
        if func in (torch.Tensor.cpu, torch.Tensor.numpy, torch.Tensor.tolist):
            if isinstance(args[0], Rec) and args[0].value is not None:
                return getattr(args[0].value, func.__name__)()
            raise unsupported(f"forward moves a tensor's data to the host ({func.__name__})")
        if func in WITH_DATA:
            kwargs.pop("device", None)
            return func(*args, **kwargs)
        if func is torch.Tensor.to:
            return self.to(args, kwargs)
        if "device" in kwargs or func in FACTORIES:
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


    @staticmethod
    def to(args, kwargs):
        """Tensor.to on the one device there is: only a dtype or a memory format changes anything
        (Module.to passes `(device, dtype or None, non_blocking)` positionally)."""
        self, rest = args[0], args[1:]
        if any(isinstance(a, (str, torch.device)) and torch.device(a).type == "cuda" for a in (*rest, kwargs.get("device")) if a is not None):
            moved_to_gpu(self)
        dtype = kwargs.get("dtype")
        for a in rest:
            if isinstance(a, torch.dtype):
                dtype = a
            elif isinstance(a, torch.Tensor):
                dtype = a.dtype
        change = {}
        if dtype is not None and dtype != self.dtype:
            change["dtype"] = dtype
        if kwargs.get("memory_format") is not None:
            change["memory_format"] = kwargs["memory_format"]
        if not change:
            return self
        return torch.Tensor.to(self, **change)


def moved_to_gpu(t):
    """.cuda() or .to("cuda") of a tensor in the host's memory: the recording's copy is the GPU's (one
    buffer: the host copy is not told apart from it afterwards)."""
    if isinstance(t, Rec):
        t.buffer.root().on_host = None


FACTORIES = {torch.empty, torch.zeros, torch.ones, torch.full, torch.rand, torch.randn, torch.randint, torch.arange,
             torch.eye, torch.linspace, torch.empty_strided, torch.zeros_like, torch.ones_like, torch.empty_like, torch.full_like}
WITH_DATA = {torch.tensor, torch.as_tensor, torch.from_numpy}
