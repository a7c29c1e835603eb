#!/usr/bin/env python3
"""The importer's scaled-down size sets keep a problem's structure (issue #61): a group count that
divides a channel or embedding size keeps the group size (GroupNorm's variance, attention's head
dimension), never below two groups; a cut size that moves only inputs (a reduction's length) is named
in the problem's notes."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "evaluator", "importer", "python"))
import kb_problem_file as kb  # noqa: E402
import kernelbench_trace as trace  # noqa: E402

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: {got!r}, expected {want!r}")


# GroupNorm after a convolution: 32 channels in 8 groups of 4.
knobs = {"batch_size": 128, "in_channels": 8, "out_channels": 32, "height": 256, "width": 256, "kernel_size": 3, "num_groups": 8}
over = kb.scaled_overrides(knobs, 16)
check("plain scaling cuts the group size", over["out_channels"] < 4 * knobs["num_groups"], True)
kept = kb.keep_group_sizes(knobs, over)
check("channels per group kept", kept["out_channels"] // kept["num_groups"], 4)
check("group count scaled, not below two", kept["num_groups"], 2)
check("spatial sizes untouched by the group rule", (kept["height"], kept["width"]), (over["height"], over["width"]))
check("a batch-only scaling is left alone", kb.keep_group_sizes(knobs, {"batch_size": 2}), {"batch_size": 2})
for how, f, o in kb.small_size_attempts(knobs):
    c, g = o.get("out_channels", 32), o.get("num_groups", 8)
    if c % g or c // g != 4:
        failures.append(f"attempt {how} x{f} has {c} channels in {g} groups")

# A grouped convolution and attention heads: the same rule, two sizes sharing one count.
knobs = {"in_channels": 64, "out_channels": 128, "groups": 8, "n_embd": 768, "n_head": 8}
kept = kb.keep_group_sizes(knobs, kb.scaled_overrides(knobs, 32))
check("grouped conv: in per group", kept["in_channels"] // kept["groups"], 8)
check("grouped conv: out per group", kept["out_channels"] // kept["groups"], 16)
check("head dimension kept", kept["n_embd"] // kept["n_head"], 96)

# A count that does not divide the size is not a group count of it.
knobs = {"features": 100, "num_groups": 8}
check("no divisibility, no coupling", kb.keep_group_sizes(knobs, {"features": 50}), {"features": 50})

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
