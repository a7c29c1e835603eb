#!/usr/bin/env python3
"""The two ways a Triton kernel could run on the CPU, measured on ../shared/triton-solutions (issue #64,
decision 139; docs/benchmarks.md "Triton on the CPU").

For up to N solutions per (problem, GPU verdict) of llmkernel's level-L corpus:
  interpreter  the KernelBench problem scaled down with the importer's own scaling (until its inputs
               hold at most 2^16 elements), the solution run in its namespace under Triton's
               interpreter (TRITON_INTERPRET=1) on CPU tensors, each in a forked child (an unmasked
               out-of-bounds access there corrupts the process); its outputs against the reference at
               KernelBench's float32 tolerance (1e-4) and at the corpus's own (atol 1e-3, rtol 1e-2),
               and the time of one forward;
  ptx          every kernel it launched compiled by Triton for sm_80 without a device (a second process,
               no interpreter), and the PTX opcodes it holds against those the simulator's PTX executor
               runs today (evaluator/sim/runtime/src/ptx_program.hpp's Op).
Prints one table per path; --jsonl FILE keeps the per-solution records. Not a CI test: it takes minutes.

usage: triton_cpu_paths.py [--shared ../shared] [--level 1] [--per-problem 1] [--jsonl FILE]
"""
import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
KB_PYTHON = os.path.join(HERE, "..", "evaluator", "kernelbench", "python")
# The opcodes (before the first '.') the simulator's PTX executor runs (ptx_program.hpp, enum Op).
SIM_PTX_OPS = {"mov", "cvt", "cvta", "ld", "st", "shfl", "bar", "cp", "ldmatrix", "mma", "add", "sub", "mul", "mad", "fma", "min", "max", "and",
               "or", "xor", "not", "shl", "shr", "neg", "setp", "selp", "fence", "activemask", "trap", "prmt", "lop3", "bfe", "bfi", "popc",
               "clz", "brev", "abs", "atom", "red", "stmatrix"}
TENSOR_TYPES = {"float32": "*fp32", "float16": "*fp16", "bfloat16": "*bf16", "int64": "*i64", "int32": "*i32", "bool": "*i1", "int8": "*i8",
                "uint8": "*u8"}


def chosen_labels(root, level, per_problem):
    chosen, seen = [], collections.Counter()
    with open(os.path.join(root, "labels_derived.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if f"/level{level}/" not in r["kernel"] or r["correct"] is None:
                continue
            key = (r["kernel"].split("/")[2], r["correct"])
            if seen[key] < per_problem:
                seen[key] += 1
                chosen.append(r)
    return chosen


# --------------------------------------------------------------------------------------------------
# The interpreter path (this process imports Triton with TRITON_INTERPRET=1).

def interpreter_run(label, args):
    import torch
    import torch.nn as nn
    from torch.overrides import TorchFunctionMode
    import triton.runtime.interpreter as interp
    import kb_problem_file as kb

    class OnCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, fargs=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if "cuda" in str(kwargs.get("device", "")):
                kwargs["device"] = "cpu"
            return func(*fargs, **kwargs)

    torch.set_num_threads(1)
    torch.Tensor.cuda = lambda self, *a, **k: self
    nn.Module.cuda = lambda self, *a, **k: self
    launches = {}
    run_grid = interp.GridExecutor.__call__

    def record(self, *call_args, **kwargs):
        values = dict(zip(self.arg_names, call_args))
        values.update({k: v for k, v in kwargs.items() if k in self.arg_names})
        sig, const = {}, {}
        for name in self.arg_names:
            v = values.get(name)
            if name in self.constexprs or v is None:
                sig[name], const[name] = "constexpr", v if isinstance(v, (int, float, bool, str)) or v is None else None
            elif isinstance(v, torch.Tensor):
                sig[name] = TENSOR_TYPES.get(str(v.dtype).replace("torch.", ""), "*fp32")
            elif isinstance(v, bool):
                sig[name] = "i1"
            elif isinstance(v, int):
                sig[name] = "i32" if -2**31 <= v < 2**31 else "i64"
            else:
                sig[name] = "fp32"
        launches.setdefault(self.fn.__name__, {"signature": sig, "constexprs": const})
        return run_grid(self, *call_args, **kwargs)

    interp.GridExecutor.__call__ = record
    out = {"kernel": label["kernel"], "gpu_correct": label["correct"]}
    path = os.path.join(args.kb, f"level{args.level}", label["kernel"].split("/")[2] + ".py")
    if not os.path.exists(path):
        return dict(out, status="problem_missing")
    source = open(path).read()
    knobs = kb.size_knobs(kb.load(source, path), source, path)
    over = None
    for _, _, attempt in kb.small_size_attempts(knobs):
        try:
            ns = kb.load(source, path, attempt)
            with kb.OnMeta():
                if sum(x.numel() for x in ns["get_inputs"]() if isinstance(x, torch.Tensor)) <= 1 << 16:
                    over = attempt
                    break
        except Exception:  # noqa: BLE001 - a scaling the problem refuses is passed over
            continue
    if over is None:
        return dict(out, status="no_small_size")
    ns = kb.load(source, path, over)
    file = os.path.join(args.root, label["kernel"])
    signal.alarm(args.timeout)
    try:
        with OnCpu():
            sns = dict(ns, __name__="solution")
            exec(compile(open(file).read(), file, "exec"), sns)
            init = ns["get_init_inputs"]()
            torch.manual_seed(42)
            ref = ns["Model"](*init)
            torch.manual_seed(42)
            new = sns["ModelNew"](*init)
            torch.manual_seed(7)
            inputs = ns["get_inputs"]()
            with torch.no_grad():
                want = ref(*inputs)
                start = time.perf_counter()
                got = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                out["forward_s"] = time.perf_counter() - start
        signal.alarm(0)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        if len(want) != len(got) or any(tuple(a.shape) != tuple(b.shape) for a, b in zip(want, got)):
            out["status"] = "shape_mismatch"
        else:
            kb_close = all(torch.allclose(a.float(), b.float(), atol=1e-4, rtol=1e-4) for a, b in zip(want, got))
            corpus_close = all(torch.allclose(a.float(), b.float(), atol=1e-3, rtol=1e-2) for a, b in zip(want, got))
            out["status"] = "close" if kb_close else "close_at_corpus_tolerance" if corpus_close else "wrong"
    except Exception as e:  # noqa: BLE001 - the solution's failure is its record
        signal.alarm(0)
        tb = traceback.extract_tb(e.__traceback__)
        out["status"] = "timeout" if "Timeout" in repr(e) else "error"
        out["error"] = f"{type(e).__name__}: {str(e).strip()[:160]}" + (f" ({os.path.basename(tb[-1].filename)})" if tb else "")
    out["launches"] = launches
    return out


class Timeout(Exception):
    pass


def raise_timeout(*_):
    raise Timeout()


def interpreter_pass(labels, args):
    os.environ["TRITON_INTERPRET"] = "1"
    sys.path.insert(0, KB_PYTHON)
    signal.signal(signal.SIGALRM, raise_timeout)
    records = []
    for i, label in enumerate(labels):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            try:
                data = json.dumps(interpreter_run(label, args))
            except BaseException as e:  # noqa: BLE001
                data = json.dumps({"kernel": label["kernel"], "gpu_correct": label["correct"], "status": "error", "error": repr(e)[:200]})
            os.write(wfd, data.encode())
            os._exit(0)
        os.close(wfd)
        with os.fdopen(rfd, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        record = json.loads(data) if data else {"kernel": label["kernel"], "gpu_correct": label["correct"], "status": "crashed",
                                                "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}
        records.append(record)
        print(f"\rinterpreter: {i + 1}/{len(labels)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return records


# --------------------------------------------------------------------------------------------------
# The PTX path (a child process without the interpreter: Triton's compiler for sm_80).

def ptx_pass_child(records_file, root):
    os.environ.pop("TRITON_INTERPRET", None)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    for line in open(records_file):
        r = json.loads(line)
        out = {}
        launches = r.get("launches") or {}
        ns = {"__name__": "solution"}
        if launches:
            try:
                file = os.path.join(root, r["kernel"])
                exec(compile(open(file).read(), file, "exec"), ns)
            except Exception as e:  # noqa: BLE001
                launches = {name: {"error": f"load: {type(e).__name__}"} for name in launches}
        for name, launch in launches.items():
            fn = ns.get(name)
            while fn is not None and not isinstance(fn, triton.runtime.JITFunction) and hasattr(fn, "fn"):
                fn = fn.fn  # an Autotuner or Heuristics wraps the kernel
            if "signature" not in launch or fn is None:
                out[name] = {"error": launch.get("error", "kernel not found")}
                continue
            start = time.perf_counter()
            try:
                k = triton.compile(ASTSource(fn=fn, signature=launch["signature"], constexprs=launch["constexprs"]), target=GPUTarget("cuda", 80, 32))
                ops = collections.Counter()
                for text in k.asm["ptx"].splitlines():
                    text = text.strip()
                    if not text or text.startswith(("//", ".", "{", "}", ")", "$", "ret")) or text.endswith(":"):
                        continue
                    words = text.split()
                    ops[(words[1] if words[0].startswith("@") else words[0]).rstrip(";")] += 1
                out[name] = {"ops": dict(ops), "compile_s": time.perf_counter() - start}
            except Exception as e:  # noqa: BLE001 - a kernel Triton refuses fails on a GPU too
                out[name] = {"error": f"{type(e).__name__}"}
        print(json.dumps({"kernel": r["kernel"], "ptx": out}), flush=True)


def quantile(values, q):
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(HERE, "..", "..", "shared"))
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--per-problem", type=int, default=1, help="solutions per (problem, GPU verdict)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per interpreted forward")
    ap.add_argument("--jsonl")
    ap.add_argument("--ptx-pass-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.root = os.path.join(args.shared, "triton-solutions", "llmkernel")
    args.kb = os.path.join(args.shared, "kernelbench", "KernelBench")
    if args.ptx_pass_child:
        return ptx_pass_child(args.ptx_pass_child, args.root)
    if not os.path.isdir(args.root):
        print(f"no corpus at {args.root} (--shared)", file=sys.stderr)
        return 77
    labels = chosen_labels(args.root, args.level, args.per_problem)
    records = interpreter_pass(labels, args)
    records_file = args.jsonl or os.path.join(os.environ.get("TMPDIR", "/tmp"), f"triton_cpu_paths_{os.getpid()}.jsonl")
    with open(records_file, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    child = subprocess.run([sys.executable, __file__, "--shared", args.shared, "--ptx-pass-child", records_file], capture_output=True, text=True)
    ptx = {json.loads(line)["kernel"]: json.loads(line)["ptx"] for line in child.stdout.splitlines() if line.startswith("{")}

    print(f"\nInterpreter path, level {args.level}: {len(records)} solutions (GPU verdicts from the corpus)")
    table = collections.Counter((r["gpu_correct"], r["status"]) for r in records)
    statuses = sorted({s for _, s in table})
    print(f"{'GPU verdict':<12}" + "".join(f"{s:>27}" for s in statuses))
    for gpu in (True, False):
        print(f"{'correct' if gpu else 'failed':<12}" + "".join(f"{table[(gpu, s)]:>27}" for s in statuses))
    times = [r["forward_s"] for r in records if "forward_s" in r]
    print(f"one forward: median {quantile(times, 0.5):.2f} s, p90 {quantile(times, 0.9):.2f} s, max {max(times, default=float('nan')):.2f} s "
          f"({len(times)} ran)")
    errors = collections.Counter(r.get("error", f"signal {r.get('signal')}")[:80] for r in records if r["status"] in ("error", "crashed"))
    for text, n in errors.most_common(8):
        print(f"  {n:>3} {text}")

    kernels = [k for per in ptx.values() for k in per.values()]
    compiled = [k for k in kernels if "ops" in k]
    missing = collections.Counter(op for k in compiled for op in {o.split(".")[0] for o in k["ops"]} - SIM_PTX_OPS)
    runnable = sum(1 for k in compiled if not ({o.split(".")[0] for o in k["ops"]} - SIM_PTX_OPS))
    print(f"\nPTX path (sm_80, no device): {len(kernels)} kernels launched, {len(compiled)} compiled, "
          f"{runnable} use only opcodes the simulator runs today")
    print("opcodes it lacks, by kernels using them: " + ", ".join(f"{op} {n}" for op, n in missing.most_common()))
    compile_s = [k["compile_s"] for k in compiled]
    print(f"compile per kernel: median {quantile(compile_s, 0.5):.2f} s, max {max(compile_s, default=float('nan')):.2f} s (cached by content in use)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
