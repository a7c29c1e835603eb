"""CUDA streams and events as a KernelBench solution uses them, recorded (kb_recorder.py).

Each step of the recording is stamped with the stream it was issued on and a vector clock: the steps
of one stream are ordered; an event recorded on one stream and waited on by another, `wait_stream`,
and a host synchronization (`torch.cuda.synchronize()`, `stream.synchronize()`,
`event.synchronize()`) order steps across streams, as on a GPU. The backends run the steps in the
order they were issued, which is one order a GPU may choose; `races` finds the pairs of steps on
different streams that nothing orders and that touch the same bytes, one of them writing: on a GPU
such a pair gives whatever result the scheduling happens to give, and the solution is a
`runtime_error` here, as a race checker would report it. PyTorch's streams are non-blocking: the
default stream does not wait for them.
"""


def recorder():
    import kb_recording
    return kb_recording.current()


def merged(a, b):
    out = dict(a)
    for k, v in b.items():
        if out.get(k, 0) < v:
            out[k] = v
    return out


class StreamOrder:
    """Vector clocks of the streams and of what the host has seen finish."""

    def __init__(self):
        self.clocks = {}
        self.host = {}

    def clock(self, sid):
        c = merged(self.clocks.get(sid, {}), self.host)
        self.clocks[sid] = c
        return c

    def stamp(self, sid):
        """A step issued on stream `sid`: (stream, its count there, what it comes after)."""
        c = self.clock(sid)
        c[sid] = c.get(sid, 0) + 1
        return (sid, c[sid], dict(c))

    def record_event(self, stream):
        return dict(self.clock(stream.id))

    def wait_event(self, stream, clock):
        if clock is not None:
            self.clocks[stream.id] = merged(self.clock(stream.id), clock)

    def wait_stream(self, stream, other):
        self.wait_event(stream, self.record_event(other))

    def synchronize_stream(self, stream):
        self.host = merged(self.host, self.clock(stream.id))

    def synchronize_event(self, clock):
        if clock is not None:
            self.host = merged(self.host, clock)

    def synchronize_device(self):
        for sid in list(self.clocks):
            self.host = merged(self.host, self.clocks[sid])


def ordered(a, b):
    """Whether stamp a happens before stamp b."""
    return b[2].get(a[0], 0) >= a[1]


def span(view):
    offset, sizes, strides = view
    if any(n == 0 for n in sizes):
        return None
    return offset, offset + sum((n - 1) * st for n, st in zip(sizes, strides))


def indices(view):
    """The view's offset as an index per dimension of its own layout, when the strides nest (each at
    least the next one's extent): a slice `t[:, a:b]` of a dense tensor. None otherwise."""
    offset, sizes, strides = view
    order = sorted(range(len(sizes)), key=lambda d: -strides[d])
    for hi, lo in zip(order, order[1:]):
        if strides[lo] == 0 or strides[hi] < strides[lo] * sizes[lo]:
            return None
    out = [0] * len(sizes)
    for d in order:
        if strides[d] > 0:
            out[d], offset = divmod(offset, strides[d])
    return out if offset == 0 else None


def overlap(a, b, numel):
    """Whether two views (offset, sizes, strides) of one buffer share an element: exact up to 2^24
    elements (the channel slices a concatenation writes from two streams interleave but do not meet),
    assumed beyond."""
    sa, sb = span(a), span(b)
    if sa is None or sb is None or sa[1] < sb[0] or sb[1] < sa[0]:
        return False
    if a[2] == b[2]:
        ia, ib = indices(a), indices(b)
        if ia is not None and ib is not None:  # slices of one layout: they meet where every dimension does
            return all(x < y + m and y < x + n for x, n, y, m in zip(ia, a[1], ib, b[1]))
    if numel > (1 << 24):
        return True
    import torch
    marks = torch.zeros(numel, dtype=torch.bool)
    marks.as_strided(a[1], a[2], a[0]).fill_(True)
    return bool(marks.as_strided(b[1], b[2], b[0]).any())


def describe(view):
    offset, sizes, strides = view
    return f"elements from {offset}, sizes {list(sizes)}, strides {list(strides)}"


def races(stamped):
    """stamped: [(step description, stamp, [(buffer, view, writes)])] in issue order. The first pair of
    steps on different streams that no dependency orders and that touch the same elements, at least one
    writing, as a sentence; or None."""
    if len({s[1][0] for s in stamped}) < 2:
        return None
    for j, (what_j, stamp_j, acc_j) in enumerate(stamped):
        for what_i, stamp_i, acc_i in stamped[:j]:
            if stamp_i[0] == stamp_j[0] or ordered(stamp_i, stamp_j):
                continue
            for bi, view_i, w_i in acc_i:
                for bj, view_j, w_j in acc_j:
                    if bi is bj and (w_i or w_j) and overlap(view_i, view_j, bi.numel):
                        return (f"a race between streams: {what_i} (stream {stamp_i[0]}) and {what_j} (stream {stamp_j[0]}) both touch "
                                f"'{bi.name}' ({describe(view_i)} and {describe(view_j)}), {'both writing' if w_i and w_j else 'one writing'}, "
                                "and no event, wait_stream or synchronize orders them")
    return None


class RecordedStream:
    """torch.cuda.Stream while a solution is recorded."""
    _count = [0]

    def __init__(self, device=None, priority=0, **kwargs):
        RecordedStream._count[0] += 1
        self.id = RecordedStream._count[0]
        self.priority = priority
        self.device = "cuda:0"
        self.cuda_stream = 0x5000 + self.id
        self.device_index = 0
        self.device_type = 1

    @staticmethod
    def priority_range():
        return (0, -5)  # what torch reports on an H100: (lowest, highest)

    def wait_stream(self, other):
        recorder().streams.wait_stream(self, other)

    def wait_event(self, event):
        event.wait(self)

    def record_event(self, event=None):
        event = event or RecordedEvent()
        event.record(self)
        return event

    def synchronize(self):
        recorder().streams.synchronize_stream(self)

    def query(self):
        return True

    def __eq__(self, other):
        return isinstance(other, RecordedStream) and other.id == self.id

    def __hash__(self):
        return self.id

    def __enter__(self):
        self._context = StreamContext(self)
        return self._context.__enter__()

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)

    def __repr__(self):
        return f"<torch.cuda.Stream device=cuda:0 cuda_stream={self.cuda_stream:#x}>"


class DefaultStream(RecordedStream):
    def __init__(self):  # noqa: super().__init__ would take an id
        self.id = 0
        self.priority = 0
        self.device = "cuda:0"
        self.cuda_stream = 0
        self.device_index = 0
        self.device_type = 1


DEFAULT_STREAM = DefaultStream()


class RecordedEvent:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.clock = None

    def record(self, stream=None):
        self.clock = recorder().streams.record_event(stream or recorder().stream)

    def wait(self, stream=None):
        recorder().streams.wait_event(stream or recorder().stream, self.clock)

    def synchronize(self):
        recorder().streams.synchronize_event(self.clock)

    def query(self):
        return True

    def elapsed_time(self, other):
        # A solution that times its variants to pick one (an autotuner) gets the same time for each, and
        # so its first: which variant a GPU would pick is not a question of correctness.
        return 1.0


class StreamContext:
    """`with torch.cuda.stream(s):` makes s the current stream (None: no change)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        self.saved = recorder().stream
        if self.stream is not None:
            recorder().stream = self.stream
        return self.stream

    def __exit__(self, *exc):
        recorder().stream = self.saved
        return False


def patch_streams(torch):
    torch.cuda.Stream = RecordedStream
    torch.cuda.ExternalStream = RecordedStream
    torch.cuda.Event = RecordedEvent
    torch.cuda.stream = StreamContext
    torch.cuda.StreamContext = StreamContext
    torch.cuda.current_stream = lambda *a, **k: recorder().stream
    torch.cuda.default_stream = lambda *a, **k: DEFAULT_STREAM
    torch.cuda.set_stream = lambda s: setattr(recorder(), "stream", s)
    torch.cuda.synchronize = lambda *a, **k: recorder().streams.synchronize_device()
