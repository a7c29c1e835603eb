#!/usr/bin/env python3
"""Records what a KernelBench solution does, on shapes only (docs/kernelbench.md).

A KernelBench solution is a Python file defining ModelNew, whose CUDA source strings are compiled by
torch.utils.cpp_extension.load_inline. The evaluator never runs it: it runs this script, in a
sandboxed child (`cuset __kb-translate`: no network, no new processes, no writes, time and memory
limits), twice:

  capture   executes the file with a load_inline that only keeps the sources it is given, and prints
            them: the evaluator splits them into device code (for NVRTC and the simulator) and host
            code, which it builds against a shape-only stand-in of the torch extension API
            (shim/include/cuset_kb/torch.hpp) into one library per extension;
  record    executes the file again with a load_inline that loads those libraries, builds ModelNew
            per size set of the problem (on the meta device), binds its parameters to the problem's
            weights, and runs forward on tensors that have shapes and no data. Every torch op is
            recorded (as a library step, or as a new buffer for factories and views), and every
            <<<...>>> of the host code as a kernel launch. The result is a launch plan per size set.

Nothing here ever sees a trial's data: there is none. The plan is untrusted output of candidate
code like any manifest, and the evaluator validates it (kernelbench_plan.cpp).

Output: one JSON object on the descriptor given by --result-fd.
"""
import argparse
import functools
import importlib
import json
import os
import sys
import traceback
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import kb_recording  # noqa: E402
from kb_host import StopCapture, patch_cuda_api, patch_extension_api  # noqa: E402
from kb_recording import DTYPE_NAMES, DTYPES, OnRecordingDevice, Rec, Recording, view_json  # noqa: E402
from kb_sandbox import RESULT, Verdict, finish, install_audit_hook, install_seccomp, unsupported  # noqa: E402


def run_solution(path, source):
    ns = {"__name__": "kernelbench_solution", "__file__": path}
    try:
        exec(compile(source, path, "exec"), ns)
    except ModuleNotFoundError as e:
        raise unsupported(f"the solution imports '{e.name}', which this translation does not provide (only load_inline CUDA solutions "
                          "are translated)")
    except (Verdict, StopCapture):
        raise
    except SyntaxError as e:  # KernelBench reports a file that does not load as a compilation failure
        raise Verdict("compile_error", f"the solution is not valid Python: {e.msg} (line {e.lineno})")
    if "ModelNew" not in ns:
        raise Verdict("invalid_submission", "the solution defines no ModelNew")
    return ns


def problem_namespace(problem, size_set, kb):
    origin = problem.get("origin")
    if not origin:
        return None
    overrides = (origin.get("size_overrides") or {}).get(size_set)
    if overrides is None and size_set != "full":
        overrides = recomputed_overrides(origin, problem["size_sets"][size_set].get("sizes", {}), kb)
    return kb.load(origin["source"], origin["file"], overrides)


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


def bind_parameters(model, problem, size_set, inputs):
    """ModelNew's parameters and buffers, each bound to the problem's weight of its name (or the one
    weight of its shape): the kernels then see the trial's fresh weights."""
    params = [p for p in (problem.get("parameters") or [])]
    free = {p: inputs[p] for p in params if p in inputs}
    modules = dict(model.named_modules())
    bound = []
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        owner_name, _, leaf = name.rpartition(".")
        owner = modules[owner_name]
        target = free.get(name)
        if target is not None and (tuple(target.shape) != tuple(t.shape) or target.dtype != t.dtype):
            target = None
        if target is None:
            same = [k for k, v in free.items() if tuple(v.shape) == tuple(t.shape) and v.dtype == t.dtype]
            if len(same) == 1:
                target = free[same[0]]
                name = same[0]
        if target is None:
            if name.endswith("num_batches_tracked"):
                continue
            raise unsupported(f"ModelNew's {'parameter' if leaf in owner._parameters else 'buffer'} '{name}' {tuple(t.shape)} matches no "
                              "weight of the problem by name or shape, so the kernels could not be given the trial's weights")
        free.pop(name, None)
        if leaf in owner._parameters:
            owner._parameters[leaf] = target
        else:
            target.buffer.module_buffer = True
            kb_recording.current().module_buffer_tensors.setdefault(target.buffer.id, []).append(target)
            owner._buffers[leaf] = target
        bound.append(name)
    return bound


def record_size_set(solution_path, source, problem, size_set, kb):
    recorder = kb_recording.start_recording()
    ns_problem = problem_namespace(problem, size_set, kb)
    init, fwd = forward_arguments(problem, size_set, ns_problem, kb)
    if not problem.get("parameters"):
        # A traced reference names no attributes: its weights are the inputs forward is not given.
        given = {v for kind, v in fwd if kind == "input"}
        problem["parameters"] = [i["name"] for i in problem["size_sets"][size_set]["inputs"] if i["name"] not in given]
    ns = run_solution(solution_path, source)
    try:
        with kb.OnMeta():
            model = ns["ModelNew"](*init)
    except Verdict:
        raise
    except Exception as e:  # noqa: BLE001
        raise Verdict("runtime_error", f"ModelNew(...) failed: {type(e).__name__}: {str(e).strip()[:300]}")
    if not isinstance(model, nn.Module):
        raise Verdict("invalid_submission", "ModelNew is not a torch.nn.Module")
    model.train()  # KernelBench runs models as constructed

    spec = problem["size_sets"][size_set]
    inputs = {}
    for i in spec["inputs"]:
        dtype = DTYPES[i["dtype"]]
        numel = 1
        for d in i["shape"]:
            numel *= d
        b = recorder.new_buffer(dtype, numel, role="input", name=i["name"])
        inputs[i["name"]] = Rec(b, b.base.as_strided(i["shape"], torch.empty(i["shape"], device="meta").stride(), 0))
    bind_parameters(model, problem, size_set, inputs)
    kb.rebuild_flat_weights(model)  # nn.RNNBase reads a flat list of its weights that rebinding does not update
    args = [inputs[v] if kind == "input" else v for kind, v in fwd]
    try:
        with OnRecordingDevice(), Recording():
            out = model(*args)
    except Verdict:
        raise
    except Exception as e:  # noqa: BLE001 - what KernelBench would report as a runtime error
        where = traceback.extract_tb(e.__traceback__)
        line = next((f" (line {f.lineno})" for f in reversed(where) if f.filename == solution_path), "")
        raise Verdict("runtime_error", f"forward failed{line}: {type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}")
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return plan_of(outs, spec)


def plan_of(outs, spec):
    want = spec["outputs"]
    if len(outs) != len(want):
        raise Verdict("wrong_answer", f"forward returns {len(outs)} output(s), the problem has {len(want)}")
    outputs = []
    for o, w in zip(outs, want):
        if not isinstance(o, Rec):
            raise Verdict("wrong_answer", f"forward returns {type(o).__name__} for output '{w['name']}', not a tensor it computed")
        if list(o.shape) != list(w["shape"]) or DTYPE_NAMES.get(o.dtype) != w["dtype"]:
            raise Verdict("wrong_answer", f"output '{w['name']}' has shape {list(o.shape)} {DTYPE_NAMES.get(o.dtype, o.dtype)}, the problem's "
                                          f"is {w['shape']} {w['dtype']}")
        outputs.append({"name": w["name"], "view": view_json(o)})
    buffers = [{"name": b.name, "role": b.role, "dtype": DTYPE_NAMES[b.dtype], "numel": b.numel, "init": b.init} for b in kb_recording.current().buffers if b.used]
    return {"buffers": buffers, "steps": kb_recording.current().steps, "outputs": outputs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["capture", "record"])
    ap.add_argument("--solution", required=True)
    ap.add_argument("--problem", required=True)
    ap.add_argument("--kb-lib", required=True)
    ap.add_argument("--extensions", default=None)
    ap.add_argument("--result-fd", type=int, required=True)
    ap.add_argument("--no-seccomp", action="store_true")
    args = ap.parse_args()
    RESULT["fd"] = args.result_fd
    torch.set_num_threads(1)
    sys.path.insert(0, args.kb_lib)
    import kernelbench_trace as kb  # noqa: E402 - the importer's loader, for the problem's own file

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
    # torch 2.x imports torch._dynamo lazily, the first time one of its Python-implemented (meta) kernels
    # runs, and that import looks up and makes a cache folder (TORCHINDUCTOR_CACHE_DIR, which the
    # translator points at this run's existing folder). It is torch's own code: load it here, before the
    # sandbox closes, rather than let a recording end as a sandbox violation.
    importlib.import_module("torch._dynamo")
    # Everything this script needs is loaded: from here on the solution runs.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the solution's prints go nowhere
    if not args.no_seccomp:
        install_seccomp()
    readable = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.dirname(torch.__file__)),
                os.path.dirname(os.path.abspath(args.solution)), os.devnull, "/dev/urandom", "/proc/self"}
    readable |= {os.path.abspath(p) for p in sys.path if p}
    install_audit_hook(set(built.values()), readable)

    try:
        if args.mode == "capture":
            try:
                ns = run_solution(args.solution, source)
                some_set = "small" if "small" in problem["size_sets"] else next(iter(problem["size_sets"]))
                init, _ = forward_arguments(problem, some_set, problem_namespace(problem, some_set, kb), kb)
                with kb.OnMeta():
                    ns["ModelNew"](*init)
            except StopCapture:
                pass
            except Verdict:
                if not captured:
                    raise
            except Exception:  # noqa: BLE001 - the record run reports construction errors
                pass
            finish({"status": "captured", "extensions": captured})
        plans = {s: record_size_set(args.solution, source, problem, s, kb) for s in problem["size_sets"]}
        finish({"status": "recorded", "plans": plans})
    except Verdict as v:
        finish({"status": v.status, "reason": v.reason})
    except kb.Skip as s:
        finish({"status": "error", "reason": f"the problem's own file cannot be rebuilt: {s}"})
    except BaseException as e:  # noqa: BLE001 - a solution's sys.exit() is its failure, not the helper's end
        tb = traceback.extract_tb(e.__traceback__)
        where = f" ({os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
        finish({"status": "runtime_error", "reason": f"{type(e).__name__}: {str(e).strip()[:300]}{where}"})


if __name__ == "__main__":
    main()
