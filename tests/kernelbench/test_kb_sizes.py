#!/usr/bin/env python3
"""The importer's scaled-down size sets keep a problem's structure (issue #61): each scaling is tried
first without cutting a size a group count divides (GroupNorm's channels per group, attention's head
dimension), and no group count is ever scaled (it is a constant of the scripted reference); a cut size
that moves only inputs (a reduction's length) is named in the problem's notes."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "evaluator", "kernelbench", "python"))
import kb_problem_file as kb  # noqa: E402
import kb_tracer as trace  # noqa: E402

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: {got!r}, expected {want!r}")


# GroupNorm after a convolution: 32 channels in 8 groups of 4.
knobs = {"batch_size": 128, "in_channels": 8, "out_channels": 32, "height": 256, "width": 256, "kernel_size": 3, "num_groups": 8}
over = kb.scaled_overrides(knobs, 16)
check("plain scaling cuts the group size", over["out_channels"] < 4 * knobs["num_groups"], True)
kept = kb.keep_group_sizes(knobs, over)
check("channels kept", "out_channels" in kept, False)
check("the group count is never scaled (a constant of the scripted reference)", "num_groups" in kept, False)
check("the other sizes are cut as before", (kept["height"], kept["width"], kept["batch_size"]), (over["height"], over["width"], over["batch_size"]))
check("a batch-only scaling is left alone", kb.keep_group_sizes(knobs, {"batch_size": 2}), {"batch_size": 2})
attempts = kb.small_size_attempts(knobs)
first_cut = next(i for i, (_, _, o) in enumerate(attempts) if "out_channels" in o)
if not any("height" in o and "out_channels" not in o for _, _, o in attempts[:first_cut]):
    failures.append("no scaling keeps the group size before the first that cuts it")
check("the batch alone is tried first", attempts[1][2], {"batch_size": 64})
if any("num_groups" in o for _, _, o in attempts):
    failures.append("an attempt scales num_groups")

# A group count of 16 or more is never cut either (the scripted reference would keep the cut count).
knobs = {"batch_size": 32768, "in_features": 1024, "out_features": 4096, "num_groups": 64}
check("num_groups 64 is not scaled", "num_groups" in kb.scaled_overrides(knobs, 16), False)

# A grouped convolution and attention heads: the same rule.
knobs = {"in_channels": 64, "out_channels": 128, "groups": 8, "n_embd": 768, "n_head": 8, "seq_len": 512}
kept = kb.keep_group_sizes(knobs, kb.scaled_overrides(knobs, 32))
check("grouped conv and heads: sizes kept, sequence cut", sorted(kept), ["seq_len"])

# A count that does not divide the size is not a group count of it.
knobs = {"features": 100, "num_groups": 8}
check("no divisibility, no coupling", kb.keep_group_sizes(knobs, {"features": 50}), {"features": 50})

# A dimension equal to the batch in every set but moved by other sizes is not the batch (SqueezeNet's
# expand1x1 + expand3x3 channels, 16 and 128, beside a batch of 16 and 128).
dims = {"small": [16, 16], "full": [128, 128]}
knobs = {"small": {"batch_size": 16, "e1": 8}, "full": {"batch_size": 128, "e1": 64}}
named = trace.describe_shape(dims, knobs, "out", {}, set(), {"batch_size": {("out", 0)}, "e1": {("out", 1)}})
check("a coincidence is not a name", named, ["batch_size", "2 * e1"])

# The reduction note: K moves only the inputs, M and N move the output too.
depends = {"M": {("A", 0), ("output", 0)}, "K": {("A", 1), ("B", 0)}, "N": {("B", 1), ("output", 1)}}
outputs = [{"name": "output"}]
note = trace.reduction_cut_note(depends, outputs, {"M": 64, "K": 512, "N": 64}, {"M": 1024, "K": 8192, "N": 1024})
check("reduction note names K alone", note is not None and "K 8192 -> 512" in note and "M " not in note, True)
check("nothing cut, no note", trace.reduction_cut_note(depends, outputs, {"M": 64}, {"M": 1024, "K": 8192}), None)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("kb sizes: all checks passed")
