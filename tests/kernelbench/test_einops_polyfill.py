#!/usr/bin/env python3
"""einops_polyfill against the reshapes and permutes its patterns stand for (and against einops itself
where it is installed): the importer traces KernelBench's Mamba2 problems through it."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "evaluator", "kernelbench", "python"))
import einops_polyfill as e  # noqa: E402

torch.manual_seed(0)
x = torch.randn(2, 12, 3)
cases = [
    (e.rearrange(x, "b (c l) h -> b h c l", l=4), x.reshape(2, 3, 4, 3).permute(0, 3, 1, 2)),
    (e.rearrange(x, "b ... -> b (...)"), x.reshape(2, 36)),
    (e.rearrange(x, "... h -> h ..."), x.permute(2, 0, 1)),
    (e.rearrange(x, "b (c l) ... -> b c l ...", l=4), x.reshape(2, 3, 4, 3)),
    (e.rearrange(x, "b n h -> b n 1 h"), x.unsqueeze(2)),
    (e.rearrange(x[:, :1], "b 1 h -> b h"), x[:, 0]),
    (e.repeat(x, "b n h -> b n h r", r=5), x.unsqueeze(-1).expand(2, 12, 3, 5)),
    (e.reduce(x, "b n h -> b h", "mean"), x.mean(1)),
    (e.reduce(x, "b (n k) h -> b n h", "max", k=3), x.reshape(2, 4, 3, 3).amax(2)),
    (e.reduce(x, "b n h -> h", "prod"), x.prod(1).prod(0)),
]
failed = [i for i, (got, want) in enumerate(cases) if got.shape != want.shape or not torch.allclose(got, want)]
for bad in ("b c -> b", "b (c l) h -> b c l h"):  # a dropped axis without reduction; two unknowns
    try:
        e.rearrange(x, bad)
        failed.append(bad)
    except ValueError:
        pass
try:
    import einops  # noqa: F401
    if not getattr(einops, "__cuset_polyfill__", False) and einops.__name__ == "einops" and einops is not e:
        for pattern, kw in (("b (c l) h -> b h c l", {"l": 4}), ("b ... -> b (...)", {})):
            if not torch.equal(einops.rearrange(x, pattern, **kw), e.rearrange(x, pattern, **kw)):
                failed.append(pattern)
except ImportError:
    pass
if failed:
    print("FAIL:", failed)
    sys.exit(1)
print(f"{len(cases)} patterns agree")
