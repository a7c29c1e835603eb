"""Records what a KernelBench solution does, on shapes only (docs/kernelbench.md); started as
`cuset_kernelbench.py capture|record|serve`.

A KernelBench solution is a Python file defining ModelNew, whose CUDA source strings are compiled by
torch.utils.cpp_extension.load_inline. The evaluator never runs it: it runs this module, in a
restricted child (`runRestricted` / the warm recorder's forked children, `libcuset_restrict.so`: Landlock,
seccomp, no network, no new processes, writes only in a private scratch folder, time and memory
limits), twice:

  capture   executes the file with a load_inline that only keeps the sources it is given, and prints
            them: the evaluator splits them into device code (for NVRTC and the simulator) and host
            code, which it builds against a shape-only stand-in of the torch extension API
            (standin/include/cuset_kb/torch.hpp) into one library per extension;
  record    executes the file again with a load_inline that loads those libraries, builds ModelNew
            per size set of the problem (on the meta device), binds its parameters to the problem's
            weights, and runs forward on tensors that have shapes and no data. Every torch op is
            recorded (as a library step, or as a new buffer for factories and views), and every
            <<<...>>> of the host code as a kernel launch. The result is a launch plan per size set.

Nothing here ever sees a trial's data: there is none. The plan is untrusted output of candidate
code like any manifest, and the evaluator validates it (recorded_plan.cpp).

Output: one JSON object on the descriptor given by --result-fd.
"""
import argparse
import ast
import functools
import importlib
import json
import math
import os
import sys
import tempfile
import traceback
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import kb_construction  # noqa: E402
import kb_recording  # noqa: E402
import kb_triton  # noqa: E402
from kb_host import StopCapture, build_failure, patch_compile, patch_cuda_api, patch_extension_api  # noqa: E402
from kb_recording import DTYPE_NAMES, DTYPES, OnRecordingDevice, Rec, Recording, view_json  # noqa: E402
from kb_sandbox import RESULT, Verdict, finish, install_audit_hook, install_seccomp, unsupported  # noqa: E402


def run_solution(path, source, problem_ns=None, kb=None):
    """Executes the solution as KernelBench does: in the problem file's namespace, after it (one dict),
    so the problem's module-level names (batch_size, a constant) are the solution's too. A solution that
    repeats a size constant of the problem with the problem's value gets the value of the size set being
    recorded (the importer scales the problem's constants for the simulator; KernelBench's solution
    would see the constant it repeats)."""
    ns = dict(problem_ns or {})
    ns.update({"__name__": "kernelbench_solution", "__file__": path})
    try:
        code = compile(scaled_like_problem(source, path, problem_ns, kb), path, "exec")
        exec(code, ns)
    except ModuleNotFoundError as e:
        raise unsupported(f"the solution imports '{e.name}', which this translation does not provide (only load_inline CUDA solutions "
                          "are translated)")
    except (Verdict, StopCapture):
        raise
    except SyntaxError as e:  # KernelBench reports a file that does not load as a compilation failure
        raise Verdict("compile_error", f"the solution is not valid Python: {e.msg} (line {e.lineno})")
    except Exception as e:  # noqa: BLE001
        raise uncaught(e, "the solution's module code failed", path) from e
    if "ModelNew" not in ns:
        raise Verdict("invalid_submission", "the solution defines no ModelNew")
    return ns


def knob_values(tree, kb):
    """knob -> the integer a module's size constant holds as written, read from its AST."""
    return {knob.key: kb.constant_int(knob.node()) for knob in kb.int_constants(tree)}


def scaled_like_problem(source, path, problem_ns, kb):
    scaled = (problem_ns or {}).get("__cuset_scaled__")
    if not scaled:
        return source
    tree = ast.parse(source, path)
    for knob in kb.int_constants(tree):
        if knob.key in scaled and kb.constant_int(knob.node()) == scaled[knob.key][0]:
            knob.set(scaled[knob.key][1])
    ast.fix_missing_locations(tree)
    return tree


def problem_namespace(problem, size_set, kb):
    """The problem file's namespace at the size set, with `__cuset_scaled__`: knob -> (full value, this set's)."""
    origin = problem.get("origin")
    if not origin:
        return None
    overrides = (origin.get("size_overrides") or {}).get(size_set)
    if overrides is None and size_set != "full":
        overrides = recomputed_overrides(origin, problem["size_sets"][size_set].get("sizes", {}), kb)
    ns = kb.load(origin["source"], origin["file"], overrides)
    if overrides:
        full = knob_values(ast.parse(origin["source"], origin["file"]), kb)
        ns["__cuset_scaled__"] = {k: (full[k], v) for k, v in overrides.items() if k in full}
    return ns


def recomputed_overrides(origin, sizes, kb):
    """For a problem imported before origin.size_overrides was recorded: the importer's scaling whose
    constants give this size set's sizes."""
    full_ns = kb.load(origin["source"], origin["file"])
    knobs = kb.size_knobs(full_ns, origin["source"], origin["file"])
    for _, _, over in kb.small_size_attempts(knobs):
        applied = {**knobs, **over}
        if all(applied[k] == v for k, v in sizes.items() if k in knobs):
            return over
    raise Verdict("unsupported", "cannot tell which constants the import scaled for this size set: re-import the suite (it records them)")


def forward_arguments(problem, size_set, ns, kb):
    """(init args, [forward argument: input name or a number])."""
    inputs = problem["size_sets"][size_set]["inputs"]
    params = set(problem.get("parameters") or [])
    if ns is None:
        return [], [("input", i["name"]) for i in inputs if i["name"] not in params]
    with kb.OnMeta():
        init = list(ns["get_init_inputs"]())
        items = list(ns["get_inputs"]())
    names = kb.forward_arg_names(functools.partial(ns["Model"].forward, None), items)  # as a bound method: no self
    args = []
    known = {i["name"] for i in inputs}
    for n, item in zip(names, items):
        if f"{n}_input" in known:  # the importer renamed an argument named like a buffer (GRU's h0)
            n = f"{n}_input"
        if isinstance(item, torch.Tensor):
            if n not in known:
                raise Verdict("error", f"the problem has no input '{n}' for forward's argument")
            args.append(("input", n))
        else:
            args.append(("value", item))
    return init, args


def module_tensors(model):
    """ModelNew's parameters, buffers and plain tensor attributes (which the importer lifts into weights of
    Model too), in creation order: named_parameters, then named_buffers, then attributes."""
    seen = set()
    found = []
    for kind, items in (("parameter", model.named_parameters(remove_duplicate=False)), ("buffer", model.named_buffers(remove_duplicate=False))):
        for name, t in items:
            if id(t) not in seen:
                seen.add(id(t))
                found.append((name, kind, t))
    for prefix, m in model.named_modules():
        for k, v in list(vars(m).items()):
            if isinstance(v, Rec) and id(v) not in seen and k not in m._parameters and k not in m._buffers:
                seen.add(id(v))
                found.append((f"{prefix}.{k}" if prefix else k, "attribute", v))
    return found


def bind_parameters(model, problem, inputs, weights=None):
    """ModelNew's parameters and buffers, each bound to a weight of the problem: the one of its name when
    shape and dtype agree, else the first unbound one of its shape and dtype in Model's creation order.
    KernelBench builds Model and ModelNew after the same seed, so parameters created in the same order,
    shapes and initialisers are equal; from here on each bound parameter is that weight in every step
    (the trial's fresh values), and its initialiser is dropped. Parameters go to Model's parameters
    first and buffers to its buffers (a second BatchNorm's weight must not take the first's running
    mean), then whatever is left to whatever weight is left. Unbound ones keep what __init__ made them;
    one filled with random numbers is refused if a step uses it."""
    recorder = kb_recording.current()
    weights = weights or ModelWeights()
    listed = [p for p in (problem.get("parameters") or []) if p in inputs]
    free = sorted(listed, key=lambda p: (weights.rank.get(p, len(weights.rank)), listed.index(p)))
    mine = sorted(module_tensors(model), key=lambda m: m[2].buffer.id)  # ModelNew's creation order
    bound = []

    def bind(name, kind, t, pool):
        def fits(w):
            return tuple(inputs[w].shape) == tuple(t.shape) and inputs[w].dtype == t.dtype

        def fits_squeezed(w):
            # The same elements in another shape that differs only by size-1 dimensions (a (C,) bias for
            # Model's (C, 1, 1)): after KernelBench's seed the same draw gives both the same values.
            return (inputs[w].dtype == t.dtype and inputs[w].numel() == t.numel() and
                    [d for d in inputs[w].shape if d != 1] == [d for d in t.shape if d != 1])
        candidates = [w for w in free if pool(w)]
        target = (name if name in candidates and fits(name) else next((w for w in candidates if fits(w)), None) or
                  (name if name in candidates and fits_squeezed(name) else next((w for w in candidates if fits_squeezed(w)), None)))
        # BatchNorm's step counter binds to its own name only (a scalar int64 fits many a slot); bound,
        # forward's `num_batches_tracked.add_(1)` updates the trial's counter as the reference does.
        if target is None or (name.endswith("num_batches_tracked") and target != name):
            return False
        b = t.buffer
        if kind != "parameter" and b.random_from:
            return False  # a buffer computed from random draws (a scaled copy of one): the draw is what binds
        if b.derived or t.meta.storage_offset() != 0 or not t.meta.is_contiguous() or t.numel() != b.numel or b.alias is not None:
            return False  # a view of a larger tensor: it keeps what __init__ made it
        free.remove(target)
        weight = inputs[target].buffer
        recorder.bind(b, weight)
        if kind != "parameter":
            weight.module_buffer = True
            recorder.module_buffer_tensors.setdefault(weight.id, []).append(t)
        bound.append((name, target))
        return True

    def is_parameter(w):
        return weights.parameters is None or w in weights.parameters

    left = []
    for name, kind, t in mine:
        same_kind = is_parameter if kind == "parameter" else (lambda w: not is_parameter(w))
        if not bind(name, kind, t, same_kind):
            left.append((name, kind, t))
    for name, kind, t in left:
        bind(name, kind, t, lambda w: True)
    for b in recorder.random_temporaries():
        target = next((w for w in free if tuple(inputs[w].shape) == b.shape and inputs[w].dtype == b.dtype), None)
        if target is not None:
            free.remove(target)
            recorder.bind(b, inputs[target].buffer)
            bound.append((b.name, target))
    return bound


class ModelWeights:
    """Model's side of the binding: which of its weights are parameters, and the order it created them
    in (named_parameters lists a module's own parameters before its children's, which is not the
    order the seed drew them in)."""

    def __init__(self, parameters=None, rank=None):
        self.parameters = parameters  # names, or None: one pool
        self.rank = rank or {}        # name -> creation order


def model_weights(ns_problem, init):
    """Builds Model the way ModelNew is built, on a scratch recording, to learn ModelWeights."""
    if ns_problem is None:
        return ModelWeights()
    saved = kb_recording.current()
    scratch = kb_recording.start_recording()
    try:
        scratch.phase = "init"
        with torch.no_grad(), OnRecordingDevice(), Recording():
            model = ns_problem["Model"](*init)
        return ModelWeights({n for n, _ in model.named_parameters()}, {name: t.buffer.id for name, _, t in module_tensors(model)})
    except Exception:  # noqa: BLE001 - the problem's order then, in one pool
        return ModelWeights()
    finally:
        kb_recording._current[0] = saved


def record_size_set(solution_path, source, problem, size_set, kb, compare_construction=False):
    recorder = kb_recording.start_recording()
    ns_problem = problem_namespace(problem, size_set, kb)
    init, fwd = forward_arguments(problem, size_set, ns_problem, kb)
    if not problem.get("parameters"):
        # A traced reference names no attributes: its weights are the inputs forward is not given.
        given = {v for kind, v in fwd if kind == "input"}
        problem["parameters"] = [i["name"] for i in problem["size_sets"][size_set]["inputs"] if i["name"] not in given]
    ns = run_solution(solution_path, source, ns_problem, kb)

    spec = problem["size_sets"][size_set]
    inputs = {}
    for i in spec["inputs"]:
        dtype = DTYPES[i["dtype"]]
        numel = 1
        for d in i["shape"]:
            numel *= d
        b = recorder.new_buffer(dtype, numel, role="input", name=i["name"])
        inputs[i["name"]] = Rec(b, b.base.as_strided(i["shape"], torch.empty(i["shape"], device="meta").stride(), 0))
    recorder.phase = "init"
    try:
        with torch.no_grad(), OnRecordingDevice(), Recording():
            model = ns["ModelNew"](*init)
    except Verdict:
        raise
    except Exception as e:  # noqa: BLE001
        raise uncaught(e, "ModelNew(...) failed", solution_path) from e
    if not isinstance(model, nn.Module):
        raise Verdict("invalid_submission", "ModelNew is not a torch.nn.Module")
    model.train()  # KernelBench runs models as constructed
    bound = bind_parameters(model, problem, inputs, model_weights(ns_problem, init))
    recorder.finish_init()
    kb.rebuild_flat_weights(model)  # nn.RNNBase reads a flat list of its weights
    args = [inputs[v] if kind == "input" else v for kind, v in fwd]
    try:
        with torch.no_grad(), OnRecordingDevice(), Recording():  # KernelBench runs forward under no_grad
            out = model(*args)
    except Verdict:
        raise
    except Exception as e:  # noqa: BLE001 - what KernelBench would report as a runtime error
        raise uncaught(e, "forward failed", solution_path) from e
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    plan = plan_of(outs, spec)
    if compare_construction and ns_problem is not None:
        used = {b["name"] for b in plan["buffers"] if b["role"] == "input"}
        try:
            plan["construction"] = kb_construction.construction_differences(ns_problem["Model"], ns["ModelNew"], init, bound, used)
        except Exception as e:  # noqa: BLE001 - a finding left out, never a verdict
            plan["construction_unchecked"] = f"{type(e).__name__}: {str(e).strip()[:200]}"
    return plan


def uncaught(e, what, solution_path):
    """The verdict of an exception that leaves the solution: an extension's failed build that it did not
    catch is that build's verdict (load_inline fails the same way); anything else a runtime error."""
    failed = build_failure(e)
    if failed is not None:
        return Verdict(failed.verdict, f"{failed.reason} (load_inline fails there too, and the solution does not catch it)")
    lines = [line for line in str(e).strip().splitlines() if line.strip()]
    msg = lines[0][:300] if lines else ""
    if len(lines) > 1 and msg.endswith(":"):
        # Triton's CompilationError: "at 34:16:", the kernel's source, then what is wrong on the last line.
        msg = f"{msg} {lines[-1].strip()[:300]}"
    return Verdict("runtime_error", f"{what}{solution_line(e, solution_path)}: {type(e).__name__}: {msg}")


def solution_line(e, solution_path):
    where = traceback.extract_tb(e.__traceback__)
    return next((f" (line {f.lineno})" for f in reversed(where) if f.filename == solution_path), "")


def plan_of(outs, spec):
    want = spec["outputs"]
    if len(outs) != len(want):
        raise Verdict("wrong_answer", f"forward returns {len(outs)} output(s), the problem has {len(want)}")
    outputs = []
    for o, w in zip(outs, want):
        if not isinstance(o, Rec):
            raise Verdict("wrong_answer", f"forward returns {type(o).__name__} for output '{w['name']}', not a tensor it computed")
        if o.buffer.root().on_host:
            raise Verdict("runtime_error", f"forward returns output '{w['name']}' in the host's memory ({o.buffer.root().on_host}): KernelBench's "
                                           "comparison with the reference on the GPU fails (\"Expected all tensors to be on the same device\")")
        if list(o.shape) != list(w["shape"]) or DTYPE_NAMES.get(o.dtype) != w["dtype"]:
            raise Verdict("wrong_answer", f"output '{w['name']}' has shape {list(o.shape)} {DTYPE_NAMES.get(o.dtype, o.dtype)}, the problem's "
                                          f"is {w['shape']} {w['dtype']}")
        outputs.append({"name": w["name"], "view": view_json(o)})
    recorder = kb_recording.current()
    steps, outputs, used, race = recorder.resolved(recorder.steps, outputs)
    buffers = [{"name": b.name, "role": b.role, "dtype": DTYPE_NAMES[b.dtype], "numel": b.numel, "init": b.init,
                **({"module_buffer": True} if b.module_buffer else {})} for b in used]
    plan = {"buffers": buffers, "steps": steps, "outputs": outputs}
    if race:
        plan["race"] = race  # a runtime_error whatever the trials show; the steps run in program order for KernelBench's check
    return plan


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["capture", "record"])
    ap.add_argument("--solution", required=True)
    ap.add_argument("--problem", required=True)
    ap.add_argument("--kb-lib", required=True)
    ap.add_argument("--extensions", default=None)
    ap.add_argument("--result-fd", type=int, required=True)
    ap.add_argument("--restrict-lib", required=True, help="libcuset_restrict.so, whose seccomp filter the recording installs")
    ap.add_argument("--scratch", default=None, help="the private folder the solution may write in (its build folders)")
    args = ap.parse_args()
    RESULT["fd"] = args.result_fd
    torch.set_num_threads(1)
    sys.path.insert(0, args.kb_lib)
    import kb_problem_file as kb  # noqa: E402 - the importer's loader, for the problem's own file

    with open(args.problem) as f:
        problem = json.load(f)
    with open(args.solution) as f:
        source = f.read()
    built = {}
    if args.extensions:
        with open(args.extensions) as f:
            built = json.load(f)
    captured = patch_extension_api(args.mode, built)
    patch_cuda_api()
    patch_compile()
    kb_triton.patch_triton()
    kb_triton.configure(problem.get("triton_capability"))  # set for a GPU's recording (the cuda backend)
    kb_recording.mark_module_tensors()
    # torch 2.x imports torch._dynamo lazily, the first time one of its Python-implemented (meta) kernels
    # runs, and that import looks up and makes a cache folder (TORCHINDUCTOR_CACHE_DIR, which the
    # translator points at this run's existing folder). It is torch's own code: load it here, before the
    # sandbox closes, rather than let a recording end as a sandbox violation.
    importlib.import_module("torch._dynamo")
    # Everything this script needs is loaded: from here on the solution runs.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the solution's prints go nowhere
    install_seccomp(args.restrict_lib)
    readable = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.dirname(torch.__file__)),
                os.path.dirname(os.path.abspath(args.solution)), os.devnull, "/dev/urandom", "/proc/self"}
    readable |= {os.path.abspath(p) for p in sys.path if p}
    if args.scratch:
        os.chdir(args.scratch)  # a relative build folder lands there
        tempfile.tempdir = args.scratch
    install_audit_hook({v for v in built.values() if isinstance(v, str)}, readable, args.scratch)

    try:
        if args.mode == "capture":
            try:
                some_set = "small" if "small" in problem["size_sets"] else next(iter(problem["size_sets"]))
                ns_problem = problem_namespace(problem, some_set, kb)
                ns = run_solution(args.solution, source, ns_problem, kb)
                init, _ = forward_arguments(problem, some_set, ns_problem, kb)
                kb_recording.current().phase = "init"
                with torch.no_grad(), OnRecordingDevice(), Recording():
                    ns["ModelNew"](*init)
            except StopCapture:
                pass
            except Verdict:
                if not captured:
                    raise
            except Exception:  # noqa: BLE001 - the record run reports construction errors
                pass
            finish({"status": "captured", "extensions": captured})
        # KernelBench's construction is compared once, at the size set with the fewest input elements.
        smallest = min(problem["size_sets"], key=lambda s: sum(math.prod(i["shape"]) for i in problem["size_sets"][s]["inputs"]))
        plans = {s: record_size_set(args.solution, source, problem, s, kb, compare_construction=s == smallest) for s in problem["size_sets"]}
        finish({"status": "recorded", "plans": plans, "triton": kb_triton.recorded_sources()})
    except Verdict as v:
        finish({"status": v.status, "reason": v.reason})
    except kb.Skip as s:
        finish({"status": "error", "reason": f"the problem's own file cannot be rebuilt: {s}"})
    except BaseException as e:  # noqa: BLE001 - a solution's sys.exit() is its failure, not the helper's end
        if build_failure(e) is not None:
            v = uncaught(e, "", args.solution)
            finish({"status": v.status, "reason": v.reason})
        tb = traceback.extract_tb(e.__traceback__)
        where = f" ({os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
        finish({"status": "runtime_error", "reason": f"{type(e).__name__}: {str(e).strip()[:300]}{where}"})


def serve():
    """The warm recorder (kb_server.py): everything main() loads, loaded once, then a fork per request."""
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["serve"])  # cuset_kernelbench.py serve
    ap.add_argument("--kb-lib", required=True)
    ap.add_argument("--restrict-lib", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    sys.path.insert(0, args.kb_lib)
    importlib.import_module("kb_problem_file")
    importlib.import_module("torch._dynamo")
    # The first meta-device ops load torch's Python decompositions and meta registrations: once here,
    # not in every fork.
    with torch.no_grad():
        x = torch.empty(1, 2, 4, 4, device="meta")
        torch.nn.functional.conv2d(x, torch.empty(2, 2, 3, 3, device="meta"))
        torch.softmax(x.flatten(1) @ torch.empty(32, 8, device="meta"), dim=-1)
    import kb_server  # noqa: E402
    kb_server.serve(args.restrict_lib, main)

