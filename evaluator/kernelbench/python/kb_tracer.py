"""Turns one KernelBench problem file into the pieces of a CuSeT problem (docs/kernelbench.md).

Run as `cuset_kernelbench.py trace` by `cuset import kernelbench`, once per file, never at evaluation time. It writes into --out:
  reference.pt            the Model as a TorchScript archive (scripted: valid for every size set), or
  reference_<set>.pt      a trace per size set when scripting fails (traces bake sizes in);
  inputs_<set>.pt         a traced input transform when get_inputs post-processes its draws;
  kernelbench_source.py   the original file;
  import.json             everything else (sizes, inputs, parameters with their init, outputs, cost,
                          verification figures), which the C++ side turns into problem.yaml.
On a problem it cannot import honestly it writes import.json with status "skipped" and a reason.
Exit status 0 in both cases; anything else is a bug of this script.

This file measures sizes and verifies; loading the problem file is kb_problem_file.py (shared with the
KernelBench translator), what its tensors are drawn from kb_distributions.py, the archives kb_archives.py.
"""
import argparse
import inspect
import json
import math
import os
import traceback
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from kb_problem_file import (  # noqa: E402 - loading the file: shared with the KernelBench translator
    POLYFILLS, OnMeta, Skip, first_line, forward_arg_names, load, rebuild_flat_weights, size_knobs, small_size_attempts)
from kb_distributions import Draws, draw, draw_distribution, parameter_init  # noqa: E402
from kb_archives import TracedReference, TracedTransform, nbytes, outputs_of, run_archive, script_reference  # noqa: E402

try:  # the private helper functional_call uses; functional_call itself refuses to run under tracing in 1.13
    from torch.nn.utils.stateless import _reparametrize_module
except ImportError:  # pragma: no cover - newer torch
    from torch.nn.utils.stateless import _reparametrize_module  # type: ignore

DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.int32: "int32",
          torch.int64: "int64", torch.bool: "bool"}


class TooCostly(Exception):
    """A real (CPU) run went past the bound it was measured against: that size set does not fit."""


class Bound:
    """What a scaled-down size set may hold (inputs + parameters + outputs) and compute: `small` keeps
    one simulator trial to seconds; `medium` is for problems no simulator size fits (full-size networks
    whose layer widths are fixed): the CPU verifies the archive there and a GPU user can run it."""

    def __init__(self, name, max_bytes, max_flops):
        self.name, self.max_bytes, self.max_flops = name, int(max_bytes), float(max_flops)

    def fits(self, held_bytes, flops):
        return held_bytes <= self.max_bytes and flops <= self.max_flops

    def __str__(self):
        return f"{self.max_bytes / 2**20:g} MiB, {self.max_flops:.0e} flops"


# ---------------------------------------------------------------------------------------------------
# Cost from the operators eager mode dispatches (works on meta tensors for the full sizes).

class CostCounter(TorchDispatchMode):
    """Counts flops; with a limit (real runs on the CPU) it stops the run as soon as the count passes it,
    so measuring a size set that is far too large costs no more than one that just fits."""

    def __init__(self, limit=None):
        super().__init__()
        self.flops = 0
        self.limit = limit

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]
        numel = sum(o.numel() for o in outs)
        if name in ("mm", "addmm", "bmm", "baddbmm"):
            a = args[1] if name in ("addmm", "baddbmm") else args[0]
            self.flops += 2 * numel * a.shape[-1]
        elif name in ("convolution", "_convolution"):
            x, w = args[0], args[1]
            transposed = args[6] if len(args) > 6 else False
            # w.shape[1] is in_channels/groups (forward) or out_channels/groups (transposed).
            if transposed:
                self.flops += 2 * x.numel() * w.shape[1] * math.prod(w.shape[2:])
            else:
                self.flops += 2 * numel * w.shape[1] * math.prod(w.shape[2:])
        elif name not in ("view", "_unsafe_view", "reshape", "expand", "permute", "transpose", "t", "detach", "alias",
                          "slice", "select", "unsqueeze", "squeeze", "as_strided", "clone", "copy_", "empty",
                          "empty_like", "zeros", "ones", "new_empty", "contiguous", "_to_copy", "lift_fresh"):
            self.flops += numel
        if self.limit is not None and self.flops > self.limit:
            raise TooCostly(f"more than {self.limit:.0e} flops")
        return out


# ---------------------------------------------------------------------------------------------------
# One size set: the model, its inputs as KernelBench draws them, its parameters.

def own_docstring(cls):
    """The class's own docstring: inspect.getdoc would give nn.Module's ("Base class for all neural network
    modules...") to a Model that has none."""
    doc = cls.__dict__.get("__doc__")
    return " ".join(inspect.cleandoc(doc).split()) if isinstance(doc, str) else ""


class Instance:
    def __init__(self, ns, meta):
        self.ns = ns
        self.meta = meta
        torch.manual_seed(0)
        with Draws() as d:
            d.mode = "record"
            if meta:
                with OnMeta():
                    self.model = ns["Model"](*ns["get_init_inputs"]())
            else:
                self.model = ns["Model"](*ns["get_init_inputs"]())
        self.init_records = d.records
        self.model.train()  # KernelBench runs the module as constructed: training mode
        for m in self.model.modules():  # plain tensor attributes would be invisible constants: lift them
            for k, v in list(vars(m).items()):
                if isinstance(v, torch.Tensor) and not isinstance(v, nn.Parameter) and k not in m._buffers:
                    delattr(m, k)
                    m.register_buffer(k, v)
        with Draws() as d:
            d.mode = "record"
            if meta:
                with OnMeta():
                    items = list(ns["get_inputs"]())
            else:
                items = list(ns["get_inputs"]())
        self.records = d.records
        self.items = items
        self.params = [(n, p) for n, p in self.model.named_parameters()] + [(n, b) for n, b in self.model.named_buffers()]
        # A forward argument named like a buffer (GRU's `h0` argument beside a `self.h0` attribute) would
        # be two inputs with one name: the argument takes a suffix, the buffer keeps its attribute path.
        taken = {n for n, _ in self.params}
        self.arg_names, self.renamed = [], []
        for name in forward_arg_names(self.model.forward, items):
            if name in taken:
                self.renamed.append((name, f"{name}_input"))
                name = f"{name}_input"
            self.arg_names.append(name)
        modules = dict(self.model.named_modules())
        self.owner = {n: (modules[n.rpartition(".")[0]], n.rpartition(".")[2]) for n, _ in self.params}

    def tensor_items(self):
        return [(self.arg_names[i], t) for i, t in enumerate(self.items) if isinstance(t, torch.Tensor)]

    def transformed(self):
        """Whether get_inputs returns something other than its raw draws, one each."""
        tensors = [t for _, t in self.tensor_items()]
        raws = [r["tensor"] for r in self.records]
        return not (len(tensors) == len(raws) and all(any(t is r for r in raws) for t in tensors))

    def call_args(self, inputs):
        """forward's arguments: `inputs` where get_inputs returned tensors, its numbers elsewhere."""
        it = iter(inputs)
        return [next(it) if isinstance(item, torch.Tensor) else item for item in self.items]

    def run_eager(self, inputs, params):
        with torch.no_grad(), _reparametrize_module(self.model, dict(zip([n for n, _ in self.params], params))):
            rebuild_flat_weights(self.model)
            out = self.model(*self.call_args(inputs))
        rebuild_flat_weights(self.model)
        return out

    def run_own(self):
        """The Model on this instance's own inputs and parameters, outputs as a list."""
        return outputs_of(self.run_eager([t for _, t in self.tensor_items()], [t for _, t in self.params]))


# ---------------------------------------------------------------------------------------------------

def describe_shape(dims_per_set, knobs_per_set, tensor_name, extra_sizes, reserved, depends):
    """Each dimension as the size name it equals in every set and moves with (`depends`), a literal,
    or a new size of its own."""
    sets = list(dims_per_set)
    exprs = []
    for i in range(len(dims_per_set[sets[0]])):
        want = {s: dims_per_set[s][i] for s in sets}
        name = None
        matching = [k for k in knobs_per_set[sets[0]]
                    if k not in reserved and all(knobs_per_set[s].get(k) == want[s] for s in sets) and want[sets[0]] > 0]
        movers = [k for k in knobs_per_set[sets[0]] if (tensor_name, i) in depends.get(k, ())]
        moving = [k for k in matching if k in movers]
        if moving:
            name = moving[0]
        elif matching and len(set(want.values())) > 1 and not movers:
            # Equal in every set and nothing known to move it: that size. Where other sizes move it, an
            # equal one is a coincidence (SqueezeNet's expand1x1 + expand3x3 channels, 16 and 128, equal
            # to a batch of 16 and 128), which another set (`large`) would break.
            name = matching[0]
        if name is None:
            name = scaled_knob(want, knobs_per_set, movers)
        if name is not None:
            exprs.append(name)
        elif len(set(want.values())) == 1:
            exprs.append(str(want[sets[0]]))
        else:
            base = "".join(c if c.isalnum() else "_" for c in tensor_name)
            name = f"{base}_dim{i}"
            extra_sizes[name] = want
            exprs.append(name)
    return exprs


def scaled_knob(want, knobs_per_set, moving):
    """`4 * hidden_size` (LSTM gates, MHA in_proj) or `in_channels / groups`-like `name / 2`: a constant
    multiple or fraction of a knob the dimension moves with, the same in every set."""
    sets = list(want)
    for k in moving:
        values = [knobs_per_set[s].get(k, 0) for s in sets]
        if any(v <= 0 for v in values):
            continue
        if all(want[s] % v == 0 for s, v in zip(sets, values)):
            ratios = {want[s] // v for s, v in zip(sets, values)}
            if len(ratios) == 1 and 1 < (r := ratios.pop()) <= 64:
                return f"{r} * {k}"
        if all(want[s] > 0 and v % want[s] == 0 for s, v in zip(sets, values)):
            ratios = {v // want[s] for s, v in zip(sets, values)}
            if len(ratios) == 1 and 1 < (r := ratios.pop()) <= 64:
                return f"{k} / {r}"
    return None


def output_name(i, count):
    return "out" if count == 1 else f"out{i}"


def tensor_shapes(inst, out):
    shapes = {}
    for n, t in inst.tensor_items() + inst.params:
        shapes[n] = tuple(t.shape)
    for i, o in enumerate(out):
        shapes[output_name(i, len(out))] = tuple(o.shape)
    for i, r in enumerate(inst.records):
        shapes[f"draw{i}"] = tuple(r["tensor"].shape)
    return shapes


def knob_dependencies(source, path, knobs, base, base_overrides, bound):
    """knob -> {(tensor, dim)} that change when only that knob doubles from the `base` size set: the full
    one on meta tensors (free), or, for a model that needs real tensors, the scaled one within `bound`."""
    base_shapes = tensor_shapes(base.inst, base.out)
    deps = {}
    for k, v in knobs.items():
        v = base_overrides.get(k, v)
        if v < 1:
            continue
        try:
            doubled = Measured(load(source, path, {**base_overrides, k: v * 2}), 4 * bound.max_bytes, 4 * bound.max_flops,
                               allow_real=base.meta_error is not None)
            shapes = tensor_shapes(doubled.inst, doubled.out)
        except Exception:  # noqa: BLE001 - doubling broke the model: this knob tells nothing
            continue
        deps[k] = {(n, i) for n, sh in base_shapes.items() if n in shapes and len(shapes[n]) == len(sh)
                   for i in range(len(sh)) if shapes[n][i] != sh[i]}
    return deps


class Measured:
    """One size set built and run once: its Instance, outputs and cost. On the meta device when the
    model runs there (no memory, no compute, at any size); for real on the CPU where it cannot (an op
    without a meta kernel, a `.item()` reading a value in __init__ or forward), within `max_bytes` held
    and `max_flops` computed, so a size set far too large is refused after a bounded amount of work."""

    def __init__(self, ns, max_bytes, max_flops=None, allow_real=True):
        self.ns = ns
        self.meta_error = None
        inst = None
        try:
            inst = Instance(ns, meta=True)
            self.cost = CostCounter()
            with self.cost:
                self.out = inst.run_own()
            self.inst = inst
            return
        except Skip:
            raise
        except Exception as e:  # noqa: BLE001
            # A shape error is the model's and would recur on real tensors, after real work: only what
            # meta tensors themselves cannot do is measured for real.
            if not allow_real or not needs_real_tensors(e):
                raise
            self.meta_error = first_line(e).split(". ")[0]
        if inst is not None and held_bytes(inst, []) > max_bytes:
            raise TooCostly(f"its inputs and parameters alone hold {held_bytes(inst, []) / 2**20:.0f} MiB")
        self.inst = Instance(ns, meta=False)
        if held_bytes(self.inst, []) > max_bytes:
            raise TooCostly(f"its inputs and parameters alone hold {held_bytes(self.inst, []) / 2**20:.0f} MiB")
        self.cost = CostCounter(max_flops)
        with self.cost:
            self.out = self.inst.run_own()

    @property
    def held_bytes(self):
        return held_bytes(self.inst, self.out)


def needs_real_tensors(error):
    """Whether `error` is the meta device's own limit (no meta kernel, a value read with .item())."""
    text = str(error)
    return isinstance(error, NotImplementedError) or "meta" in text.lower() or "_local_scalar_dense" in text


def held_bytes(inst, out):
    return nbytes([t for _, t in inst.tensor_items()]) + nbytes([t for _, t in inst.params]) + nbytes(out)


class FullSize(Measured):
    """KernelBench's own size set: on the meta device, or for real within the trace memory bound."""

    def __init__(self, source, path, max_bytes):
        self.ns = load(source, path)
        self.knobs = size_knobs(self.ns, source, path)
        try:
            super().__init__(self.ns, max_bytes)
        except Skip:
            raise
        except TooCostly as e:
            raise Skip(f"the model does not run on meta tensors ({self.meta_error}) and a real run at the full size is too "
                       f"large: {e} (limit {max_bytes / 2**30:.1f} GiB: --trace-memory-gib)")
        except Exception as e:  # noqa: BLE001
            where = f"on meta tensors ({self.meta_error}) nor " if self.meta_error else ""
            raise Skip(f"the model does not run {where}at the full size: {first_line(e)}")
        for _, t in self.inst.tensor_items():
            if t.dtype not in DTYPES:
                raise Skip(f"input dtype {t.dtype} is not supported (float32, float16, bfloat16, int32, int64, bool)")
        for n, t in self.inst.params:
            if t.dtype not in DTYPES:
                raise Skip(f"parameter '{n}' has dtype {t.dtype}, which is not supported")


def find_scaled_size(source, path, full, bound):
    """The first scaling that fits `bound`: (how, factor, namespace, overrides), or None with the reason."""
    last_error = "too large at every scale tried"
    for how, f, over in small_size_attempts(full.knobs):
        if not over:
            measured = full  # KernelBench's own sizes, already measured
        else:
            try:
                measured = Measured(load(source, path, over), bound.max_bytes, bound.max_flops)
            except Skip:
                raise
            except TooCostly:
                continue
            except Exception as e:  # noqa: BLE001 - this scaling breaks the model
                last_error = first_line(e)
                continue
        if bound.fits(measured.held_bytes, measured.cost.flops):
            return (how, f, measured.ns, over), None
    return None, last_error


def choose_scaled_size(args, source, full):
    """The size set the simulator runs (`small`) or, where none fits it, the `medium` one the CPU
    verifies on; the full size itself when neither fits. Returns (set name, how, factor, ns, overrides,
    note)."""
    found, why_small = find_scaled_size(source, args.file, full, args.small)
    if found is not None:
        return ("small",) + found + (None,)
    note = f"no scaled-down size fits the simulator ({args.small}): {why_small}"
    found, _ = find_scaled_size(source, args.file, full, args.medium)
    if found is not None and found[3]:  # a scaled-down medium set; KernelBench's own sizes are `full` below
        return ("medium",) + found + (note,)
    need = full.held_bytes
    if need > args.trace_memory_bytes:
        raise Skip(f"{note}; none fits {args.medium} either, and verifying at the full size needs {need / 2**30:.1f} GiB "
                   f"(limit {args.trace_memory_bytes / 2**30:.1f} GiB: --trace-memory-gib)")
    return ("full", "none", 1, full.ns, {}, note)


def size_set_names(vs):
    """The size sets a problem gets: the one verified on the CPU (`small`, `medium`) and `full`."""
    return [vs] if vs == "full" else [vs, "full"]


class ArchiveFailed(Exception):
    """The scripted archive raises when run, though TorchScript compiled it: trace instead."""


def write_references(args, inst, full, vs, script_error=None):
    """Scripted (all sizes) if TorchScript takes the model (and `script_error` does not already say why
    not), else one trace per size set. Returns (archives, attributes, script_error)."""
    scripted_file = os.path.join(args.out, "reference.pt")
    if script_error is None:
        script_error = script_reference(inst, scripted_file)
        if script_error is None:
            return {s: "reference.pt" for s in size_set_names(vs)}, [n for n, _ in inst.params], None
    if os.path.exists(scripted_file):
        os.remove(scripted_file)
    scalars = [item for item in inst.items if not isinstance(item, torch.Tensor)]
    if any(not isinstance(s, (int, float, bool)) for s in scalars):
        raise Skip("get_inputs returns a non-tensor, non-number value")
    archives = {}
    for set_name in size_set_names(vs):
        real = inst
        if set_name != vs:
            need = nbytes([t for _, t in full.inst.tensor_items()]) + nbytes([t for _, t in full.inst.params]) + nbytes(full.out)
            if need > args.trace_memory_bytes:
                raise Skip(f"TorchScript cannot script the model ({script_error}) and tracing the full size needs "
                           f"{need / 2**30:.1f} GiB (limit {args.trace_memory_bytes / 2**30:.1f} GiB: --trace-memory-gib)")
            real = Instance(full.ns, meta=False)
        tr = torch.jit.trace(TracedReference(real), tuple([t for _, t in real.tensor_items()] + [t.detach() for _, t in real.params]),
                             check_trace=False)
        archives[set_name] = f"reference_{set_name}.pt"
        tr.save(os.path.join(args.out, archives[set_name]))
    return archives, [], script_error


def full_transform_is_small_one(out_dir, transform, full, vs):
    """A trace of a transform bakes in no sizes unless it reads them: the scaled set's trace run on
    tensors of the full shapes must give the full inputs' shapes."""
    small_tr = torch.jit.load(os.path.join(out_dir, transform["archives"][vs]))
    try:
        got = small_tr(*[r["tensor"] for r in full.inst.records])
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        return [tuple(g.shape) for g in got] == [tuple(t.shape) for _, t in full.inst.tensor_items()]
    except Exception:  # noqa: BLE001
        return False


def write_input_transform(args, inst, ns_scaled, full, vs):
    """get_inputs's post-processing of its draws (triu, symmetrised, softmax, scaled by a drawn scalar,
    bool masks) as an archive per size set; None when it returns its raw draws."""
    if not inst.transformed():
        return None
    transform = {"archives": {}}
    for set_name in size_set_names(vs):
        ns = ns_scaled if set_name == vs else full.ns
        if set_name != vs:
            if full_transform_is_small_one(args.out, transform, full, vs):
                transform["archives"]["full"] = transform["archives"][vs]
                continue
            need = sum(r["tensor"].numel() * r["tensor"].element_size() for r in full.inst.records)
            if need > args.trace_memory_bytes:
                raise Skip(f"get_inputs post-processes its draws and tracing that at the full size needs {need / 2**30:.1f} GiB")
        with Draws() as d:
            d.mode = "record"
            ns["get_inputs"]()
        raws = [r["tensor"] for r in d.records]
        tr = torch.jit.trace(TracedTransform(ns), tuple(raws), check_trace=False)
        transform["archives"][set_name] = f"inputs_{set_name}.pt"
        tr.save(os.path.join(args.out, transform["archives"][set_name]))
        del raws, d
    return transform


class ShapeNamer:
    """Names each tensor's dimensions with the problem's size names (describe_shape), collecting the
    sizes of their own it has to invent in `extra`."""

    def __init__(self, knobs, vs, tensor_names, depends):
        self.knobs = knobs  # size set -> knob -> value
        self.vs = vs
        self.extra = {}
        self.reserved = {k for k in knobs["full"] if k in tensor_names}
        self.depends = depends

    def spec(self, name, s_tensor, f_tensor):
        dims = {self.vs: list(s_tensor.shape), "full": list(f_tensor.shape)}
        return describe_shape(dims, self.knobs, name, self.extra, self.reserved, self.depends)


def describe_inputs(inst, full, namer, transform):
    """The inputs and the lifted parameters with shapes and distributions; a transform's draws too."""
    inputs = []
    full_items = dict(full.tensor_items())
    for name, t in inst.tensor_items():
        entry = {"name": name, "dtype": DTYPES[t.dtype], "shape": namer.spec(name, t, full_items[name])}
        if transform is None:
            rec = next(r for r in inst.records if r["tensor"] is t)
            entry["init"] = draw_distribution(rec)
        inputs.append(entry)
    full_params = dict(full.params)
    params_out = []
    for name, t in inst.params:
        module, leaf = inst.owner[name]
        init, why = parameter_init(module, leaf, t, inst.init_records, full.owner[name][0])
        params_out.append({"name": name, "dtype": DTYPES[t.dtype], "shape": namer.spec(name, t, full_params[name]),
                           "init": init, "init_reason": why})
    if transform is not None:
        draws = []
        for i, (rs, rf) in enumerate(zip(inst.records, full.records)):
            if rs["tensor"].dtype not in DTYPES:
                raise Skip(f"get_inputs draws a {rs['tensor'].dtype} tensor, which is not supported")
            draws.append({"name": f"draw{i}", "dtype": DTYPES[rs["tensor"].dtype],
                          "shape": namer.spec(f"draw{i}", rs["tensor"], rf["tensor"]), "init": draw_distribution(rs)})
        transform["draws"] = draws
        transform["produces"] = [n for n, _ in inst.tensor_items()]
    return inputs, params_out


STOCHASTIC = ("forward is stochastic (Dropout with p > 0 in training mode, or random numbers in forward): two runs on "
              "the same inputs differ, so no kernel can match the reference except by reproducing its random stream")


def verify_against_eager(out_dir, inst, vs, inputs, params_out, transform, archives, attributes, scripted):
    """The eager Model and the archive on the same fresh inputs and weights must agree, twice.
    Returns (the Model's outputs, the archive's max relative error, the verified set's cost, a defect
    or None). A stochastic forward is KernelBench's defect: compared with one seed for every run."""
    gen = torch.Generator().manual_seed(1234)
    if transform is None:
        ins = [draw(e["init"], tuple(t.shape), t.dtype, gen) for e, (_, t) in zip(inputs, inst.tensor_items())]
    else:
        raws = [draw(dd["init"], tuple(r["tensor"].shape), r["tensor"].dtype, gen) for dd, r in zip(transform["draws"], inst.records)]
        got = torch.jit.load(os.path.join(out_dir, transform["archives"][vs]))(*raws)
        ins = list(got) if isinstance(got, (tuple, list)) else [got]
    params = [draw(p["init"], tuple(t.shape), t.dtype, gen) for p, (_, t) in zip(params_out, inst.params)]

    def eager(seed=None):
        if seed is not None:
            torch.manual_seed(seed)
        return outputs_of(inst.run_eager([x.clone() for x in ins], [p.clone() for p in params]))

    cost = CostCounter()  # the cost is counted on the same run
    with cost:
        want = eager()
    defect = None
    if any(not torch.equal(a, b) for a, b in zip(want, eager())):
        want = eager(seed=7)
        if any(not torch.equal(a, b) for a, b in zip(want, eager(seed=7))):
            raise Skip(STOCHASTIC + "; not even with one seed for both")
        defect = {"kind": "stochastic", "reason": STOCHASTIC}
    arch = torch.jit.load(os.path.join(out_dir, archives[vs]))
    if defect is not None:
        torch.manual_seed(7)
    try:
        got = outputs_of(run_archive(arch, inst, attributes, [x.clone() for x in ins], [p.clone() for p in params], scripted))
    except Skip:
        raise
    except Exception as e:  # noqa: BLE001
        if scripted:
            raise ArchiveFailed(first_line(e, 200))
        raise Skip(f"the traced archive fails when run: {first_line(e, 200)}")
    max_rel = 0.0
    for g, w in zip(got, want):
        if g.shape != w.shape or g.dtype != w.dtype:
            raise Skip(f"the archive returns {tuple(g.shape)} {g.dtype} where the Model returns {tuple(w.shape)} {w.dtype}")
        if g.is_floating_point():
            diff = (g.double() - w.double()).abs()
            scale = w.double().abs().clamp_min(1e-30)
            rel = float((diff / scale).max()) if diff.numel() else 0.0
            if not bool(((diff <= 1e-6 * w.double().abs() + 1e-12) | (g == w)).all()):
                raise Skip(f"the archive disagrees with the eager Model: max abs error {float(diff.max()):.3g}, max rel {rel:.3g}")
            max_rel = max(max_rel, rel if math.isfinite(rel) else 0.0)
        elif not torch.equal(g, w):
            raise Skip("the archive's integer output differs from the eager Model's")
    for w in want:
        if w.is_floating_point() and not bool(torch.isfinite(w).all()):
            raise Skip("the Model's output has NaN or Inf on KernelBench's input distribution")
    return want, max_rel, cost, defect


def check_full_size(out_dir, archives, attributes, full, vs):
    """At the full size the archive on meta tensors must give the eager Model's shapes."""
    if vs == "full":
        return "verified against the eager Model at the full size"
    if archives["full"] != archives[vs]:
        return "traced at the full size"
    try:
        arch_full = torch.jit.load(os.path.join(out_dir, archives["full"]))
        fi = [t for _, t in full.inst.tensor_items()]
        fp = [t for _, t in full.inst.params]
        fo = outputs_of(run_archive(arch_full, full.inst, attributes, fi, fp, True))
        if [tuple(o.shape) for o in fo] != [tuple(o.shape) for o in full.out]:
            raise Skip("at the full size the archive's output shapes differ from the Model's")
    except Skip:
        raise
    except Exception as e:  # noqa: BLE001
        return f"not checked on meta tensors ({str(e).splitlines()[0][:100]}); scripted, so the code is the small size's"
    return "shapes on meta tensors"


def describe_outputs(want, out_full, namer):
    outputs = []
    for i, (s, f) in enumerate(zip(want, out_full)):
        name = output_name(i, len(want))
        if s.dtype not in DTYPES:
            raise Skip(f"output dtype {s.dtype} is not supported")
        outputs.append({"name": name, "dtype": DTYPES[s.dtype], "shape": namer.spec(name, s, f)})
    return outputs


def size_table(entries, knobs, extra):
    """The sizes the tensors' shapes use, per size set (`knobs`: size set -> knob -> value)."""
    sizes = {set_name: {} for set_name in knobs}
    used = set()
    for e in entries:
        for d in e["shape"]:
            used.update(tok for tok in d.replace("*", " ").replace("/", " ").split() if not tok.isdigit())
    for k in knobs["full"]:
        if k in used and k not in extra:
            for set_name, values in knobs.items():
                sizes[set_name][k] = values[k]
    for k, v in extra.items():
        for set_name in knobs:
            sizes[set_name][k] = v[set_name]
    return sizes


def kernelbench_tolerance(want):
    """KernelBench's tolerance (1e-4 for float32, 1e-2 for half types) is absolute as well as relative:
    where outputs are so small that atol alone covers them (softmax over 10^5 columns), a constant
    kernel would pass. There atol shrinks to a thousandth of the mean output magnitude."""
    half = any(o.dtype in (torch.float16, torch.bfloat16) for o in want)
    tol = {"atol": 1e-2 if half else 1e-4, "rtol": 1e-2 if half else 1e-4}
    tolerance = None
    for w in want:
        if not w.is_floating_point() or w.numel() < 2:
            continue
        mean_abs = float(w.double().abs().mean())
        if mean_abs > 0 and tol["atol"] > 0.1 * mean_abs:
            atol = float(f"{1e-3 * mean_abs:.2g}")
            tolerance = {"atol": min(atol, tol["atol"]), "rtol": tol["rtol"],
                         "reason": f"outputs average {mean_abs:.3g} in magnitude, so atol {tol['atol']:g} would let a constant pass"}
            tol["atol"] = tolerance["atol"]
    if tolerance is None and half:  # float32's default (1e-4) is the problem format's own; half types need theirs
        tolerance = dict(tol)
    return tolerance


def reduction_cut_note(depends, outputs, overrides, full_knobs):
    """Sizes the import cut that move an input's dimension and no output's (a matmul's K, a reduction's
    length, a convolution's input channels): the lengths float32 sums run over. A kernel that sums in
    another order drifts from the reference by more at KernelBench's length than at the cut one, so
    the problem says so (docs/kernelbench.md, "Sizes")."""
    out_names = {o["name"] for o in outputs}
    cut = [k for k, v in sorted(overrides.items()) if v < full_knobs.get(k, 0) and depends.get(k)
           and not any(t in out_names for t, _ in depends[k])]
    if not cut:
        return None
    return ("reduction length cut: " + ", ".join(f"{k} {full_knobs[k]} -> {overrides[k]}" for k in cut) +
            " (a sum in another order drifts less over the shorter length: the simulator's verdict may miss drift at the full size)")


def real_instance(measured):
    """`measured`'s own instance when it ran on real tensors, else the same model built for real."""
    return measured.inst if not measured.inst.meta else Instance(measured.ns, meta=False)


def import_problem(args):
    source = open(args.file).read()
    full = FullSize(source, args.file, args.trace_memory_bytes)
    vs, how, factor, ns_v, overrides, size_note = choose_scaled_size(args, source, full)
    inst = real_instance(full) if vs == "full" else Instance(ns_v, meta=False)
    knobs = {vs: size_knobs(ns_v, source, args.file), "full": full.knobs}
    archives, attributes, script_error = write_references(args, inst, full, vs)
    transform = write_input_transform(args, inst, ns_v, full, vs)
    if full.meta_error is None:  # which knob moves which dimension: free on meta tensors at the full size
        depends = knob_dependencies(source, args.file, full.knobs, full, {}, args.medium)
    else:
        depends = knob_dependencies(source, args.file, full.knobs, Measured(ns_v, args.medium.max_bytes, args.medium.max_flops),
                                    overrides, args.medium)
    namer = ShapeNamer(knobs, vs, set(inst.arg_names) | {n for n, _ in inst.params}, depends)
    inputs, params_out = describe_inputs(inst, full.inst, namer, transform)
    try:
        want, max_rel, cost_v, defect = verify_against_eager(args.out, inst, vs, inputs, params_out, transform, archives, attributes,
                                                            script_error is None)
    except ArchiveFailed as e:
        archives, attributes, script_error = write_references(args, inst, full, vs, f"the scripted archive fails when run: {e}")
        want, max_rel, cost_v, defect = verify_against_eager(args.out, inst, vs, inputs, params_out, transform, archives, attributes, False)
    full_check = check_full_size(args.out, archives, attributes, full, vs)
    outputs = describe_outputs(want, full.out, namer)
    sizes = size_table(inputs + params_out + outputs + (transform["draws"] if transform else []), knobs, namer.extra)

    notes = [note for name, note in POLYFILLS.items() if name in source]
    notes += [f"forward argument '{a}' is input '{b}' (a buffer has its name)" for a, b in inst.renamed]
    if full.meta_error is not None:
        notes.append(f"measured on real tensors (not on meta: {full.meta_error})")
    if size_note is not None:
        notes.append(size_note)
    if (reductions := reduction_cut_note(depends, outputs, overrides, full.knobs)) is not None:
        notes.append(reductions)
    cost = {vs: {"flops": int(cost_v.flops), "bytes": int(held_bytes(inst, want))},
            "full": {"flops": int(full.cost.flops), "bytes": int(full.held_bytes)}}
    return {
        "status": "imported",
        "description": own_docstring(full.ns["Model"]),
        "size_sets": size_set_names(vs),
        "sizes": sizes,
        "scaling": {"how": how, "factor": factor, "set": vs},
        "size_overrides": {vs: overrides} if overrides else {},
        "inputs": inputs,
        "parameters": params_out,
        "outputs": outputs,
        "reference": {"archives": archives, "attributes": attributes,
                      "args": [("input:" + inst.arg_names[i]) if isinstance(it, torch.Tensor) else it for i, it in enumerate(inst.items)]
                      if script_error is None else None,
                      "scripted": script_error is None, "script_error": script_error},
        "input_transform": transform,
        "tolerance": kernelbench_tolerance(want),
        "defect": defect,
        "notes": notes,
        "cost": {k: cost[k] for k in size_set_names(vs)},
        "verification": {"set": vs, "max_rel_error": max_rel, "full": full_check},
    }


def limit_memory(max_bytes):
    """A real run of a model too large for this machine fails with MemoryError here instead of taking
    the machine (and the other imports running beside this one) down."""
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_DATA, (max_bytes, max_bytes))
    except (ImportError, ValueError, OSError):  # pragma: no cover - best effort
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trace-memory-gib", type=float, default=4.0)
    ap.add_argument("--small-max-mib", type=float, default=4.0)
    ap.add_argument("--small-max-gflop", type=float, default=0.3)
    ap.add_argument("--medium-max-mib", type=float, default=1024.0)
    ap.add_argument("--medium-max-gflop", type=float, default=50.0)
    args = ap.parse_args()
    args.trace_memory_bytes = int(args.trace_memory_gib * 2**30)
    args.small = Bound("small", args.small_max_mib * 2**20, args.small_max_gflop * 1e9)
    args.medium = Bound("medium", max(args.medium_max_mib * 2**20, args.small.max_bytes),
                        max(args.medium_max_gflop * 1e9, args.small.max_flops))
    # Twice the trace bound: a real run holds the model, its inputs and a copy for the comparison.
    limit_memory(2 * args.trace_memory_bytes + (2 << 30))
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    try:
        result = import_problem(args)
    except Skip as s:
        result = {"status": "skipped", "reason": str(s)}
    except MemoryError:
        result = {"status": "skipped", "reason": f"ran out of memory (a real run beyond {args.trace_memory_gib:g} GiB: --trace-memory-gib)"}
    except Exception as e:  # noqa: BLE001 - reported per problem, the import goes on
        tb = traceback.extract_tb(e.__traceback__)
        where = f" ({os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
        result = {"status": "skipped", "reason": f"import failed: {type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}{where}"}
    with open(os.path.join(args.out, "import.json"), "w") as f:
        json.dump(result, f, indent=1)

