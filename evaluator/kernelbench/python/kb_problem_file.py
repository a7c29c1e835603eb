"""Loading a KernelBench problem file: the part of the importer the KernelBench translator runs too.

A problem file executed with its module-level integer constants optionally replaced (the size knobs),
in an environment where the files written for a GPU load on the CPU and on the meta device: `.cuda()`
is a no-op, torch 1.13's missing meta kernel and functions are supplied, einops by its definition when
it is not installed. `kb_tracer.py` (the importer) builds on it, and the translator's recorder
(kb_recorder.py, in the same folder) imports it; the translation cache key covers the whole
folder.
"""
import ast
import re
import inspect
import math
import warnings
from typing import Optional

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402

import einops_polyfill  # noqa: E402

SCALABLE_MIN = 16          # constants below this (kernel sizes, strides, dims) are never scaled


class Skip(Exception):
    pass


def first_line(e, limit=160):
    text = str(e).strip()
    return text.splitlines()[0][:limit] if text else type(e).__name__


# Problem files written for a GPU move their inputs there (`torch.randn(n).cuda()`, as KernelBench's own
# prompt examples do). Here every tensor stays where it is made (the CPU, or the meta device).
torch.Tensor.cuda = lambda self, *args, **kwargs: self


def register_missing_meta_kernels():
    """torch 1.13 has no meta kernel for max_pool3d_with_indices; the full size is built on meta tensors."""
    lib = torch.library.Library("aten", "IMPL", "Meta")

    def max_pool3d_with_indices(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        def triple(v, default=None):
            v = list(v) if isinstance(v, (list, tuple)) else [v]
            if not v:
                v = list(default)
            return v * 3 if len(v) == 1 else v
        k = triple(kernel_size)
        st = triple(stride, k)
        pd = triple(padding)
        dl = triple(dilation)
        out = []
        for i, n in enumerate(x.shape[-3:]):
            num = n + 2 * pd[i] - dl[i] * (k[i] - 1) - 1
            o = (num + (st[i] - 1 if ceil_mode else 0)) // st[i] + 1
            if ceil_mode and (o - 1) * st[i] >= n + pd[i]:
                o -= 1
            out.append(o)
        shape = list(x.shape[:-3]) + out
        return x.new_empty(shape), torch.empty(shape, dtype=torch.int64, device="meta")

    try:
        lib.impl("max_pool3d_with_indices", max_pool3d_with_indices)
    except RuntimeError:  # a torch that has one
        pass
    return lib


_META_LIB = register_missing_meta_kernels()


def scaled_dot_product_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                                 attn_mask: Optional[torch.Tensor] = None, dropout_p: float = 0.0,
                                 is_causal: bool = False) -> torch.Tensor:
    """torch 2.x's F.scaled_dot_product_attention by its definition, for a torch that lacks it (1.13):
    softmax(Q K^T / sqrt(d) + mask) V. Dropout would make the problem stochastic, so p must be 0."""
    if dropout_p != 0.0:
        raise RuntimeError("scaled_dot_product_attention with dropout_p > 0 is stochastic")
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if is_causal:
        n, m = query.size(-2), key.size(-2)
        causal = torch.ones(n, m, dtype=torch.bool, device=query.device).tril()
        scores = scores.masked_fill(torch.logical_not(causal), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(torch.logical_not(attn_mask), float("-inf"))
        else:
            scores = scores + attn_mask
    return torch.matmul(torch.softmax(scores, dim=-1), value)


POLYFILLS = {}  # name in a problem's source -> the note its import carries


if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
    torch.nn.functional.scaled_dot_product_attention = scaled_dot_product_attention
    POLYFILLS["scaled_dot_product_attention"] = "F.scaled_dot_product_attention by its definition (this torch lacks it)"


if einops_polyfill.install():
    POLYFILLS["einops"] = ("einops by its definition (rearrange, repeat, reduce; einops is not installed: "
                           "`pip install einops` into the importer's Python to use the real one)")


# ---------------------------------------------------------------------------------------------------
# Loading a problem with its module-level integer constants optionally replaced.

def constant_int(node):
    """The value of an expression of integer literals only (`2048 * 2`), else None."""
    if any(isinstance(n, ast.Name) for n in ast.walk(node)):
        return None
    try:
        v = eval(compile(ast.Expression(node), "<constant>", "eval"), {"__builtins__": {}})  # noqa: S307 - literals only
    except Exception:  # noqa: BLE001
        return None
    return v if type(v) is int else None


class Knob:
    """One integer literal at module level that sets a size: rewriting `holder.<field>` changes it."""

    def __init__(self, key, holder, field, index=None):
        self.key, self.holder, self.field, self.index = key, holder, field, index

    def node(self):
        return getattr(self.holder, self.field) if self.index is None else getattr(self.holder, self.field)[self.index]

    def set(self, value):
        if self.index is None:
            setattr(self.holder, self.field, ast.Constant(value))
        else:
            getattr(self.holder, self.field)[self.index] = ast.Constant(value)


def int_constants(tree):
    """Module-level `name = <int expr>`, `name = (<int>, ...)` and `a, b = <int>, <int>` assignments:
    the problem's size knobs."""
    found = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign):
            continue
        v = stmt.value
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                if constant_int(v) is not None:
                    found.append(Knob(target.id, stmt, "value"))
                    break
                if isinstance(v, (ast.Tuple, ast.List)):
                    for i, e in enumerate(v.elts):
                        if constant_int(e) is not None:
                            found.append(Knob(f"{target.id}_{i}", v, "elts", i))
                    break
            elif isinstance(target, ast.Tuple) and isinstance(v, ast.Tuple) and len(target.elts) == len(v.elts):
                for i, (t, e) in enumerate(zip(target.elts, v.elts)):
                    if isinstance(t, ast.Name) and constant_int(e) is not None:
                        found.append(Knob(t.id, v, "elts", i))
    return found


def load(source, path, overrides=None):
    tree = ast.parse(source, path)
    for knob in int_constants(tree):
        if overrides and knob.key in overrides:
            knob.set(overrides[knob.key])
    ast.fix_missing_locations(tree)
    ns = {"__name__": "kernelbench_problem", "__file__": path}
    try:
        exec(compile(tree, path, "exec"), ns)
    except ModuleNotFoundError as e:
        raise Skip(f"needs the Python module '{e.name}', which is not installed")
    for req in ("Model", "get_inputs", "get_init_inputs"):
        if req not in ns:
            raise Skip(f"defines no {req}")
    return ns


def size_knobs(ns, source, path):
    """name -> int for every integer global and tuple element (tuple elements as name_i)."""
    knobs = {}
    for k, v in ns.items():
        if not k.startswith("_") and type(v) is int:
            knobs[k] = v
    for knob in int_constants(ast.parse(source, path)):
        key = knob.key
        if key not in knobs:
            base, _, idx = key.rpartition("_")
            t = ns.get(base)
            if isinstance(t, (tuple, list)) and idx.isdigit() and int(idx) < len(t) and type(t[int(idx)]) is int:
                knobs[key] = t[int(idx)]
    return knobs


# ---------------------------------------------------------------------------------------------------
# Building models on the meta device (no memory, no compute) for the full sizes.

FACTORIES = {torch.empty, torch.zeros, torch.ones, torch.full, torch.rand, torch.randn, torch.randint, torch.arange,
             torch.eye, torch.tensor, torch.linspace, torch.empty_strided}


class OnMeta(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in FACTORIES:
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


def forward_arg_names(forward, items):
    """The names get_inputs's items take as forward's arguments (the problem's input names)."""
    sig = inspect.signature(forward)
    names = [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) < len(items):
        names += [f"input{i}" for i in range(len(names), len(items))]
    return names[:len(items)]


def rebuild_flat_weights(model):
    """nn.RNNBase keeps its weights in a flat list that a parameter swap does not update."""
    for m in model.modules():
        if isinstance(m, nn.RNNBase):
            m._flat_weights = [getattr(m, wn) if hasattr(m, wn) else None for wn in m._flat_weights_names]


GROUP_COUNT = re.compile(r"(^|_)(groups?|heads?)$", re.I)                       # num_groups, groups, num_heads, n_head
GROUPED_SIZE = re.compile(r"channel|feature|embed|embd|hidden|dim|d_model", re.I)  # what a group count divides


def scaled_overrides(knobs, factor, only=None, floor=4, minimum=SCALABLE_MIN):
    """Every constant from `minimum` up cut by `factor` (to no less than `floor`), but group and head
    counts: they are constants of the scripted reference (nn.GroupNorm's num_groups), which one archive
    serves at every size set, so a count cut for `small` would be the full-size reference's count too
    (KernelBench v0.1's level 2 problem 37: num_groups 64 cut to 4 gave GroupNorm over 4 groups at the
    full size, found when the simulator first ran those sizes)."""
    out = {}
    for k, v in knobs.items():
        if v >= minimum and (only is None or only(k)) and not GROUP_COUNT.search(k):
            out[k] = max(v // factor, min(v, floor))
    return out




def keep_group_sizes(full_knobs, over):
    """`over` without cutting a size that a group or head count divides: a scaling that shrinks channels
    and keeps `num_groups` leaves fewer channels per group (one, at worst), and GroupNorm's variance
    over a handful of elements is an ill-conditioned problem the full size does not have; attention's
    head dimension shrinks the same way. The count itself is never scaled: it is a constant of the
    scripted reference (nn.GroupNorm's num_groups, a convolution's groups), which one archive serves
    at every size set. The other sizes are cut as before."""
    kept = dict(over)
    for g, groups in full_knobs.items():
        if not GROUP_COUNT.search(g) or groups < 2:
            continue
        for k in list(kept):
            if (k != g and GROUPED_SIZE.search(k) and not GROUP_COUNT.search(k) and full_knobs.get(k, 0) % groups == 0
                    and full_knobs[k] // groups >= 2 and kept[k] < full_knobs[k]):
                del kept[k]
    return kept


def small_size_attempts(full_knobs):
    """Scalings to try, gentlest first. The batch shrinks first (to 2: one sample would hide a kernel
    that ignores the batch index), since it is the one size every layer accepts; then every constant,
    with floors that keep image sizes and widths a network's layers need; a batch of 1 comes last.
    A scaling that breaks the model (a pooling window larger than its shrunk input) is passed over."""
    batch = lambda k: "batch" in k.lower()  # noqa: E731
    attempts = [("none", 1, {})]
    batch_factors = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096)
    for f in batch_factors:
        attempts.append(("batch", f, scaled_overrides(full_knobs, f, only=batch, floor=2, minimum=3)))
    for f in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        attempts.append(("all", f, scaled_overrides(full_knobs, f)))
    for floor in (8, 16):
        for f in (2, 4, 8, 16, 32, 64, 128, 256):
            attempts.append((f"floor{floor}", f, scaled_overrides(full_knobs, f, floor=floor)))
    attempts.append(("batch", 0, scaled_overrides(full_knobs, 1 << 30, only=batch, floor=1, minimum=2)))
    seen, unique = set(), []
    # After the batch alone: every scaling with group sizes kept (the first that fits is taken, however
    # small its other sizes), then every one as it is; a batch of 1 last.
    scaled = attempts[1 + len(batch_factors):-1]
    attempts = attempts[:1 + len(batch_factors)] + [(how, f, keep_group_sizes(full_knobs, over)) for how, f, over in scaled] + scaled + attempts[-1:]
    for how, f, over in attempts:
        key = tuple(sorted(over.items()))
        if key not in seen:
            seen.add(key)
            unique.append((how, f, over))
    return unique
