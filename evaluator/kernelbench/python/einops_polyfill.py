"""einops's rearrange, repeat and reduce by their definition, for an importer whose Python lacks einops.

Debian 12 does not package einops, and KernelBench's Mamba2 problems import it. The importer only runs a
problem's forward to trace it (the archive records the reshapes and permutes, never einops itself), so
the pattern language is all that is needed: axis names, parenthesised groups, `...` and literal 1s.
install() puts this module in sys.modules as `einops` only when the real one cannot be imported.
"""
import math
import re
import sys
import types

import torch

_TOKEN = re.compile(r"\(|\)|\.\.\.|[A-Za-z_][A-Za-z0-9_]*|\d+")
_REDUCTIONS = {"sum": torch.sum, "mean": torch.mean, "prod": torch.prod, "max": torch.amax, "min": torch.amin}


def _groups(side):
    """'b (c l) ... h' -> [['b'], ['c', 'l'], ['...'], ['h']]."""
    groups, current = [], None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            if current is not None:
                raise ValueError(f"einops pattern '{side}': nested parentheses")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError(f"einops pattern '{side}': unbalanced parentheses")
            groups.append(current)
            current = None
        elif current is not None:
            current.append(tok)
        else:
            groups.append(tok if tok == "..." else [tok])  # a bare `...` stays a string: one group per axis
    if current is not None:
        raise ValueError(f"einops pattern '{side}': unbalanced parentheses")
    return groups


def _expand_ellipsis(groups, count):
    out = []
    for g in groups:
        if g == "...":
            out.extend([f"...{j}"] for j in range(count))
        elif "..." in g:
            i = g.index("...")
            out.append(g[:i] + [f"...{j}" for j in range(count)] + g[i + 1:])
        else:
            out.append(g)
    return out


def _size(axis, sizes):
    return int(axis) if axis.isdigit() else sizes[axis]


def _apply(x, pattern, reduction, axis_sizes):
    left_text, arrow, right_text = pattern.partition("->")
    if not arrow:
        raise ValueError(f"einops pattern '{pattern}' has no '->'")
    left, right = _groups(left_text), _groups(right_text)
    has_ellipsis = any("..." in g for g in left)
    ellipsis_axes = x.dim() - (len(left) - 1) if has_ellipsis else 0
    left, right = _expand_ellipsis(left, ellipsis_axes), _expand_ellipsis(right, ellipsis_axes)
    if len(left) != x.dim():
        raise ValueError(f"einops pattern '{pattern}' names {len(left)} dimensions of a {x.dim()}-d tensor")
    sizes = dict(axis_sizes)
    for group, n in zip(left, x.shape):
        unknown = [a for a in group if not a.isdigit() and a not in sizes]
        known = math.prod(_size(a, sizes) for a in group if a not in unknown)
        if len(unknown) > 1:
            raise ValueError(f"einops pattern '{pattern}': cannot infer both of {unknown}")
        if unknown:
            sizes[unknown[0]] = int(n) // known
        elif known != int(n):
            raise ValueError(f"einops pattern '{pattern}': dimension of {int(n)} is not {group}")
    names = [a for g in left for a in g]
    x = x.reshape([_size(a, sizes) for a in names])
    wanted = [a for g in right for a in g if not a.isdigit()]
    dropped = [i for i, a in enumerate(names) if not a.isdigit() and a not in wanted]
    if dropped:
        if reduction is None:
            raise ValueError(f"einops pattern '{pattern}' drops {[names[i] for i in dropped]} without a reduction")
        if reduction not in _REDUCTIONS:
            raise ValueError(f"einops reduction '{reduction}' is not one of {sorted(_REDUCTIONS)}")
        for dim in reversed(dropped):  # one axis at a time: torch.prod takes a single dim
            x = _REDUCTIONS[reduction](x, dim=dim)
    kept = [a for i, a in enumerate(names) if i not in dropped and not a.isdigit()]
    x = x.reshape([sizes[a] for a in kept])
    for a in wanted:
        if a not in kept:  # repeat: a new axis, broadcast below
            x = x.unsqueeze(-1)
            kept.append(a)
    x = x.permute([kept.index(a) for a in wanted])
    x = x.expand([sizes[a] for a in wanted])
    return x.reshape([math.prod(_size(a, sizes) for a in g) for g in right])


def rearrange(tensor, pattern, **axes_lengths):
    if isinstance(tensor, (list, tuple)):
        tensor = torch.stack(list(tensor))
    return _apply(tensor, pattern, None, axes_lengths)


def repeat(tensor, pattern, **axes_lengths):
    return _apply(tensor, pattern, None, axes_lengths)


def reduce(tensor, pattern, reduction, **axes_lengths):
    return _apply(tensor, pattern, reduction, axes_lengths)


def install():
    """Registers this module as `einops` when the real one is missing; True when it did."""
    try:
        import einops  # noqa: F401
        return False
    except ImportError:
        pass
    module = types.ModuleType("einops")
    module.rearrange, module.repeat, module.reduce = rearrange, repeat, reduce
    module.__doc__ = __doc__
    sys.modules["einops"] = module
    return True
