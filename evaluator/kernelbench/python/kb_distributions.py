"""What a KernelBench problem's tensors are drawn from, for its import (kb_tracer.py).

get_inputs's random draws recorded (distribution and arguments) and replayed with given tensors, and
each parameter's and buffer's init: the default init of the layer it belongs to, never its values.
"""
import math

import torch
import torch.nn as nn

# ---------------------------------------------------------------------------------------------------
# Recording the random draws of get_inputs, and replaying them with given tensors.

class Draws:
    GENERATORS = ("rand", "randn", "randint", "rand_like", "randn_like", "randint_like")

    def __init__(self):
        self.mode = None
        self.records = []
        self.replay = []
        self.originals = {g: getattr(torch, g) for g in self.GENERATORS}

    def __enter__(self):
        for g in self.GENERATORS:
            setattr(torch, g, self._wrap(g))
        return self

    def __exit__(self, *exc):
        for g, f in self.originals.items():
            setattr(torch, g, f)

    def _wrap(self, g):
        real = self.originals[g]

        def call(*args, **kwargs):
            if self.mode == "replay":
                t = self.replay.pop(0)
                return t
            t = real(*args, **kwargs)
            if self.mode == "record":
                self.records.append({"fn": g, "args": args, "kwargs": kwargs, "tensor": t})
            return t
        return call


def draw_distribution(rec):
    fn, args, kw = rec["fn"], rec["args"], rec["kwargs"]
    if fn in ("rand", "rand_like"):
        return {"dist": "uniform", "low": 0.0, "high": 1.0}
    if fn in ("randn", "randn_like"):
        return {"dist": "normal", "mean": 0.0, "std": 1.0}
    nums = [a for a in (args[1:] if fn == "randint_like" else args) if isinstance(a, int)]
    if "low" in kw:
        nums = [kw["low"]] + nums
    if "high" in kw:
        nums = nums + [kw["high"]]
    low, high = (0, nums[0]) if len(nums) == 1 else (nums[0], nums[1])
    return {"dist": "randint", "low": int(low), "high": int(high)}


# ---------------------------------------------------------------------------------------------------
# Parameter and buffer distributions: the default init of the layer they belong to, never constants.

def recorded_init(tensor, records):
    """nn.Parameter(torch.randn(shape) * c) and friends: the generator call the values came from."""
    for r in records:
        raw = r["tensor"]
        if raw.shape != tensor.shape or not raw.is_floating_point() or raw.device.type == "meta":
            continue
        d = draw_distribution(r)
        if d["dist"] == "randint":
            continue
        x, y = raw.detach().double().flatten(), tensor.detach().double().flatten()
        nz = x.abs() > 1e-12
        if not bool(nz.any()):
            continue
        ratio = y[nz] / x[nz]
        a = float(ratio.mean())
        if a == 0 or not bool(((ratio - a).abs() <= 1e-5 * abs(a)).all()) or not bool((y[~nz].abs() <= 1e-9).all()):
            continue
        if d["dist"] == "normal":
            return {"dist": "normal", "mean": 0.0, "std": abs(a)}, f"torch.{r['fn']} * {a:g} in __init__"
        lo, hi = sorted((d["low"] * a, d["high"] * a))
        return {"dist": "uniform", "low": lo, "high": hi}, f"torch.{r['fn']} * {a:g} in __init__"
    return None


def parameter_init(module, leaf, tensor, records=(), full_module=None):
    """The distribution fresh values of `module.<leaf>` are drawn from each trial, and why. Layer rules
    read `full_module` (KernelBench's sizes, on the meta device): a kaiming bound depends on fan-in, and
    the full size is the one KernelBench judges; the small set draws from the same distribution."""
    found = recorded_init(tensor, records)
    if found is not None:
        return found
    if full_module is not None:
        rule = layer_init(full_module, leaf, getattr(full_module, leaf))
        if rule is not None:
            return rule
    if not tensor.is_floating_point():
        return {"dist": "randint", "low": 0, "high": 100}, "integer buffer"
    return value_init(tensor)


def layer_init(module, leaf, tensor):
    """The default init of a known layer's parameter or buffer, or None."""
    if not tensor.is_floating_point():
        return {"dist": "randint", "low": 0, "high": 100}, "integer buffer"
    conv = (nn.Linear, nn.Bilinear, nn.modules.conv._ConvNd)
    norm = (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm)
    if isinstance(module, conv) and leaf in ("weight", "bias"):
        w = module.weight
        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(w) if w.dim() >= 2 else (w.shape[0], 0)
        if isinstance(module, nn.Bilinear):
            fan_in = w.shape[1]
        b = 1.0 / math.sqrt(max(fan_in, 1))
        return {"dist": "uniform", "low": -b, "high": b}, f"kaiming-uniform bound 1/sqrt({fan_in}) of {type(module).__name__}"
    if isinstance(module, norm):
        table = {"weight": (0.5, 1.5), "bias": (-0.5, 0.5), "running_mean": (-0.5, 0.5), "running_var": (0.5, 1.5)}
        if leaf in table:
            lo, hi = table[leaf]
            return {"dist": "uniform", "low": lo, "high": hi}, f"{type(module).__name__}.{leaf}: non-constant, positive variances"
    if isinstance(module, nn.Embedding):
        return {"dist": "normal", "mean": 0.0, "std": 1.0}, "Embedding default normal(0, 1)"
    if isinstance(module, nn.RNNBase):
        b = 1.0 / math.sqrt(module.hidden_size)
        return {"dist": "uniform", "low": -b, "high": b}, f"{type(module).__name__} default bound 1/sqrt(hidden)"
    if isinstance(module, nn.MultiheadAttention) and leaf == "in_proj_weight":
        b = math.sqrt(6.0 / (tensor.shape[0] + tensor.shape[1]))
        return {"dist": "uniform", "low": -b, "high": b}, "MultiheadAttention xavier-uniform"
    return None


def value_init(tensor):
    """Anything else (custom parameters and buffers): from the values the model built, with constants
    replaced by a spread around them so a kernel cannot hard-code them."""
    v = tensor.detach().double().flatten()
    if v.numel() == 0:
        return {"dist": "normal", "mean": 0.0, "std": 1.0}, "empty"
    lo, hi = float(v.min()), float(v.max())
    if lo == hi:
        if lo == 0.0:
            return {"dist": "uniform", "low": -0.5, "high": 0.5}, "constant 0 at init, drawn around it"
        a, b = sorted((0.5 * lo, 1.5 * lo))
        return {"dist": "uniform", "low": a, "high": b}, f"constant {lo:g} at init, drawn around it"
    mean, std = float(v.mean()), float(v.std())
    n = v.numel()
    kurt = float(((v - mean) ** 4).mean() / (std ** 4)) - 3.0 if std > 0 else 0.0
    if n >= 64 and kurt < -0.8:
        pad = (hi - lo) / n
        return {"dist": "uniform", "low": lo - pad, "high": hi + pad}, "uniform, bounds from the initial values"
    return {"dist": "normal", "mean": mean, "std": std}, "normal, moments of the initial values"


def draw(init, shape, dtype, gen):
    if init["dist"] == "uniform":
        return (torch.rand(shape, generator=gen, dtype=torch.float32) * (init["high"] - init["low"]) + init["low"]).to(dtype)
    if init["dist"] == "normal":
        return (torch.randn(shape, generator=gen, dtype=torch.float32) * init["std"] + init["mean"]).to(dtype)
    return torch.randint(int(init["low"]), int(init["high"]), shape, generator=gen, dtype=torch.int64).to(dtype)
