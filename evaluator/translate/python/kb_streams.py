"""CUDA streams and events as a KernelBench solution uses them, recorded (kernelbench_solution.py).

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
        self.used = set()

    def clock(self, sid):
        c = merged(self.clocks.get(sid, {}), self.host)
        self.clocks[sid] = c
        return c

    def stamp(self, sid):
        """A step issued on stream `sid`: (stream, its count there, what it comes after)."""
        c = self.clock(sid)
        c[sid] = c.get(sid, 0) + 1
        self.used.add(sid)
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


def races(stamped):
    """stamped: [(step description, stamp, [(buffer, first, last, writes)])] in issue order. The first
    pair of steps on different streams that no dependency orders and that touch the same elements,
    at least one writing, as a sentence; or None."""
    if len({s[1][0] for s in stamped}) < 2:
        return None
    for j, (what_j, stamp_j, acc_j) in enumerate(stamped):
        for what_i, stamp_i, acc_i in stamped[:j]:
            if stamp_i[0] == stamp_j[0] or ordered(stamp_i, stamp_j):
                continue
            for bi, lo_i, hi_i, w_i in acc_i:
                for bj, lo_j, hi_j, w_j in acc_j:
                    if bi is bj and (w_i or w_j) and lo_i <= hi_j and lo_j <= hi_i:
                        return (f"a race between streams: {what_i} (stream {stamp_i[0]}) and {what_j} (stream {stamp_j[0]}) both touch "
                                f"'{bi.name}', {'both writing' if w_i and w_j else 'one writing'}, and no event, wait_stream or "
                                "synchronize orders them")
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
