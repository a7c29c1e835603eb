"""The reference archives an import writes (kb_tracer.py): the Model scripted or traced with
its parameters as explicit inputs, the input transform traced, and an archive run as the harness runs it.
"""
import copy

import torch
import torch.nn as nn

from kb_distributions import Draws
from kb_problem_file import Skip, first_line


def has_rnn(model):
    return any(isinstance(m, nn.RNNBase) for m in model.modules())


def outputs_of(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    raise Skip(f"forward returns {type(out).__name__}, not a tensor or a tuple of tensors")


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


# ---------------------------------------------------------------------------------------------------
# The archives.

class TracedReference(nn.Module):
    """forward(*inputs, *parameters): the model with its parameters swapped for explicit inputs."""

    def __init__(self, inst):
        super().__init__()
        self.inst = [inst]  # a list keeps the model out of the traced module's attributes

    def forward(self, *tensors):
        inst = self.inst[0]
        n = len(inst.tensor_items())
        return inst.run_eager(list(tensors[:n]), list(tensors[n:]))


class TracedTransform(nn.Module):
    def __init__(self, ns):
        super().__init__()
        self.ns = [ns]

    def forward(self, *raws):
        with Draws() as d:
            d.mode = "replay"
            d.replay = list(raws)
            items = list(self.ns[0]["get_inputs"]())
        return tuple(t for t in items if isinstance(t, torch.Tensor))


def script_reference(inst, path):
    if has_rnn(inst.model):  # a scripted RNN reads its flat weight list, which attributes set from C++ would not update
        return "it has an RNN, whose flat weight list attributes set from C++ would not update"
    model = copy.deepcopy(inst.model) if not inst.meta else inst.model
    try:
        sm = torch.jit.script(model)
        # The archive carries no weights: every parameter and buffer is set from the drawn inputs before
        # each call, so empty placeholders keep 10^9-parameter models small on disk.
        set_attributes(sm, [n for n, _ in inst.params], [torch.zeros(0, dtype=t.dtype) for _, t in inst.params])
        sm.save(path)
    except Exception as e:  # noqa: BLE001 - any TorchScript error (frontend, or serialising: NetVLAD's) means: trace instead
        return first_line(e, 200)
    return None


def set_attributes(sm, names, tensors):
    """Sets each dotted attribute path (`layers.0.weight`) of a scripted module."""
    for name, t in zip(names, tensors):
        owner, _, leaf = name.rpartition(".")
        m = sm
        for part in owner.split(".") if owner else []:
            m = getattr(m, part)
        setattr(m, leaf, t)


def run_archive(sm, inst, attributes, inputs, params, scripted):
    if scripted:
        set_attributes(sm, attributes, params)
        with torch.no_grad():
            return sm(*inst.call_args(inputs))
    with torch.no_grad():
        return sm(*inputs, *params)
