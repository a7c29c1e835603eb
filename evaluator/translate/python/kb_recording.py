"""Tensors with shapes and no data, and the recorder every torch op of a solution goes to
(kernelbench_solution.py): factories and views become buffers and views, every other op a library
step, and the host build's launches kernel steps.
"""
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from kb_sandbox import unsupported

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
        return current().dispatch(func, args, kwargs or {})

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


_current = [Recorder()]


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
