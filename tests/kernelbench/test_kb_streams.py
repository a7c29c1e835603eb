#!/usr/bin/env python3
"""kb_streams (the recorder's streams and events): happens-before through events, wait_stream and
synchronizations, and the overlap of two views of one buffer against brute force."""
import itertools
import os
import random
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "evaluator", "kernelbench", "python"))
import kb_streams as s  # noqa: E402

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: {got}, expected {want}")


class Stream:
    def __init__(self, ident):
        self.id = ident


class Buf:
    def __init__(self, name, numel):
        self.name, self.numel = name, numel


# 1. Ordering. Stream 1 writes, stream 0 reads: a race unless something orders them.
def scenario(order_with):
    o = s.StreamOrder()
    s0, s1 = Stream(0), Stream(1)
    buf = Buf("h", 64)
    whole = (0, (64,), (1,))
    steps = [("write", o.stamp(1), [(buf, whole, True)])]
    if order_with == "wait_stream":
        o.wait_stream(s0, s1)
    elif order_with == "event":
        o.wait_event(s0, o.record_event(s1))
    elif order_with == "device":
        o.synchronize_device()
    elif order_with == "stream_sync":
        o.synchronize_stream(s1)
    elif order_with == "wrong_event":  # an event recorded on the reader's own stream orders nothing
        o.wait_event(s1, o.record_event(s0))
    steps.append(("read", o.stamp(0), [(buf, whole, False)]))
    return s.races(steps)


for how in ("wait_stream", "event", "device", "stream_sync"):
    check(f"ordered by {how}", scenario(how), None)
for how in ("nothing", "wrong_event"):
    got = scenario(how)
    check(f"unordered ({how}) is a race", got is not None and "race between streams" in got and "'h'" in got, True)

# Two readers on two streams never race; one stream alone never races.
o = s.StreamOrder()
b = Buf("x", 8)
reads = [("a", o.stamp(1), [(b, (0, (8,), (1,)), False)]), ("b", o.stamp(2), [(b, (0, (8,), (1,)), False)])]
check("two readers", s.races(reads), None)
o = s.StreamOrder()
check("one stream", s.races([("a", o.stamp(3), [(b, (0, (8,), (1,)), True)]), ("b", o.stamp(3), [(b, (0, (8,), (1,)), True)])]), None)

# 2. Overlap, against marking every element.


def brute(a, b, numel):
    ma, mb = torch.zeros(numel, dtype=torch.bool), torch.zeros(numel, dtype=torch.bool)
    ma.as_strided(a[1], a[2], a[0]).fill_(True)
    mb.as_strided(b[1], b[2], b[0]).fill_(True)
    return bool((ma & mb).any())


rng = random.Random(7)
shape = (3, 6, 4, 5)
dense = (120, 20, 5, 1)
numel = 360
for _ in range(400):
    views = []
    for _ in range(2):  # a slice of the dense tensor in every dimension
        lo = [rng.randrange(n) for n in shape]
        sizes = tuple(rng.randrange(1, n - l + 1) for n, l in zip(shape, lo))
        views.append((sum(l * st for l, st in zip(lo, dense)), sizes, dense))
    check(f"slices {views}", s.overlap(views[0], views[1], numel), brute(views[0], views[1], numel))
# Transposed and strided views of one buffer (no common layout: element by element).
for a, b in itertools.product([(0, (6, 4), (1, 6)), (1, (12,), (2,)), (0, (12,), (2,)), (24, (4, 6), (6, 1))], repeat=2):
    check(f"views {a} {b}", s.overlap(a, b, 48), brute(a, b, 48))
# The channel slices a concatenation writes from two streams interleave in memory and never meet.
nchw = (400 * 64, 64, 8, 1)  # a [10, 400, 8, 8] output, far past what is checked element by element
check("channel slices", s.overlap((0, (10, 192, 8, 8), nchw), (192 * 64, (10, 208, 8, 8), nchw), 10 ** 9), False)
check("overlapping channel slices", s.overlap((0, (10, 193, 8, 8), nchw), (192 * 64, (10, 208, 8, 8), nchw), 10 ** 9), True)

if failures:
    print("FAIL:\n  " + "\n  ".join(failures[:20]))
    sys.exit(1)
print("kb_streams: ordering and overlap ok")
