"""KernelBench's construction of the two models, reproduced for real on the CPU.

KernelBench's eval_kernel_against_ref seeds (42), builds Model, seeds again, builds ModelNew, and never
copies weights: ModelNew's parameters are whatever its own __init__ draws after that seed. The recording
binds each of ModelNew's parameters to the problem's weight (so CuSeT's own trials judge the kernels on
the same values); this module says where KernelBench's construction would not give both the same
values: a bias drawn with another bound, parameters created in another order, a parameter left at zero
or drawn by the GPU's generator. Findings only: nothing here changes a plan.
"""
import torch
from torch.overrides import TorchFunctionMode

from kb_recording import called_from_torch_nn

KERNELBENCH_SEED = 42  # eval_kernel_against_ref's seed_num

# Draws that take the generator of the tensor's device: on a GPU, CUDA's, which the same seed starts
# elsewhere than the CPU's.
RANDOM_FACTORIES = {torch.rand, torch.randn, torch.randint, torch.randperm, torch.rand_like, torch.randn_like, torch.randint_like}
RANDOM_IN_PLACE = {torch.Tensor.uniform_, torch.Tensor.normal_, torch.Tensor.random_, torch.Tensor.bernoulli_,
                   torch.Tensor.exponential_, torch.Tensor.geometric_, torch.Tensor.cauchy_, torch.Tensor.log_normal_}


def names_gpu(device):
    return device is not None and str(device).startswith("cuda")


class OnHost(TorchFunctionMode):
    """A CUDA-less torch builds the models on the CPU: devices named "cuda" become the CPU and moves to
    the GPU change nothing. Tensors made on "cuda" are remembered, and draws into them: KernelBench's
    GPU draws those from CUDA's generator, not the CPU one that draws Model's.

    What the recording binds to a weight is a parameter's value as its initialisers left it (torch.nn's
    own code, a random fill, a zero_ of a fresh tensor); a later in-place change in the solution's own
    __init__ (a folded batch norm's `weight.data.mul_(s)`) the plan replays on the trial's weight. So the
    value to compare with Model's is the one just before the first such change: kept here."""

    def __init__(self):
        super().__init__()
        self.on_gpu = set()     # storages made on "cuda"
        self.gpu_drawn = set()  # storages filled by a draw on "cuda"
        self.before_change = {}  # storage -> its contents before the solution's first in-place change

    @staticmethod
    def storage(t):
        return t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) and t.device.type == "cpu" else None

    def value_bound(self, t):
        """`t` as the recording binds it: before the solution's own in-place changes."""
        kept = self.before_change.get(self.storage(t))
        if kept is None:
            return t
        return torch.empty(0, dtype=t.dtype).set_(kept, t.storage_offset(), t.shape, t.stride())

    def keep_before_change(self, func, args):
        name = getattr(func, "__name__", "")
        in_place = name == "__setitem__" or (name.endswith("_") and not name.startswith("_"))
        if not in_place or not args or not isinstance(args[0], torch.Tensor) or func in RANDOM_IN_PLACE or name == "zero_":
            return
        key = self.storage(args[0])
        if key is not None and key not in self.before_change and not called_from_torch_nn():
            self.before_change[key] = args[0].untyped_storage().clone()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        self.keep_before_change(func, args)
        if func is torch.Tensor.cuda:
            return args[0]
        if func is torch.Tensor.to:
            rest = [a for a in args[1:] if not (isinstance(a, (str, torch.device)) and names_gpu(a))]
            if names_gpu(kwargs.get("device")):
                kwargs.pop("device")
            return func(args[0], *rest, **kwargs)
        gpu = names_gpu(kwargs.get("device"))
        if gpu:
            kwargs["device"] = "cpu"
        out = func(*args, **kwargs)
        if gpu and isinstance(out, torch.Tensor):
            self.on_gpu.add(self.storage(out))
            if func in RANDOM_FACTORIES:
                self.gpu_drawn.add(self.storage(out))
        elif func in RANDOM_IN_PLACE and self.storage(args[0]) in self.on_gpu:
            self.gpu_drawn.add(self.storage(args[0]))
        return out


def named_tensors(model):
    """name -> tensor, named as the importer names Model's weights (and module_tensors ModelNew's):
    parameters, buffers, then plain tensor attributes as `module.path.attr`."""
    found = {}
    for name, t in list(model.named_parameters(remove_duplicate=False)) + list(model.named_buffers(remove_duplicate=False)):
        found.setdefault(name, t)
    for prefix, m in model.named_modules():
        for k, v in list(vars(m).items()):
            if isinstance(v, torch.Tensor) and k not in m._parameters and k not in m._buffers:
                found.setdefault(f"{prefix}.{k}" if prefix else k, v)
    return found


def built(cls, init, mode):
    torch.manual_seed(KERNELBENCH_SEED)
    with torch.no_grad(), mode:
        return cls(*init)


def describe(mine, theirs, others):
    """How ModelNew's values differ from Model's, in words a person acts on."""
    a, b = mine.detach().double().flatten(), theirs.detach().double().flatten()
    if torch.equal(a.sort().values, b.sort().values):
        return "the same values in another order"
    elsewhere = next((n for n, t in others.items() if t.numel() == b.numel() and torch.equal(t.detach().double().flatten(), b)), None)
    if elsewhere is not None:
        return f"Model's values are ModelNew's '{elsewhere}' (parameters created in another order)"
    if a.numel() and torch.all(a == a[0]):
        return f"{a[0].item():g} everywhere, where Model's lie in [{b.min().item():.4g}, {b.max().item():.4g}]"
    return (f"ModelNew's lie in [{a.min().item():.4g}, {a.max().item():.4g}], Model's in [{b.min().item():.4g}, {b.max().item():.4g}] "
            f"(largest difference {(a - b).abs().max().item():.3g})")


def construction_differences(model_cls, model_new_cls, init, bound, used):
    """[{parameter, weight, how}] for each of ModelNew's parameters bound to a weight the plan reads
    whose value after KernelBench's construction is not Model's. Raises what building either model on
    the CPU raised."""
    model = built(model_cls, init, OnHost())
    mode = OnHost()
    model_new = built(model_new_cls, init, mode)
    theirs, mine = named_tensors(model), named_tensors(model_new)
    found = []
    for name, weight in bound:
        if weight not in used or name not in mine or weight not in theirs:
            continue
        a, b = mode.value_bound(mine[name]), theirs[weight]
        if a.numel() != b.numel() or not a.is_floating_point() or not b.is_floating_point():
            continue
        if mode.storage(a) in mode.gpu_drawn:
            how = "drawn by the GPU's random generator (made on device='cuda' in __init__), where Model draws on the CPU's"
        elif torch.allclose(a.detach().double().flatten(), b.detach().double().flatten(), rtol=1e-6, atol=1e-7):
            continue
        else:
            how = describe(a, b, {n: t for n, t in mine.items() if n != name and t.is_floating_point()})
        found.append({"parameter": name, "weight": weight, "how": how})
    return found
