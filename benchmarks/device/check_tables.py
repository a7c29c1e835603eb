#!/usr/bin/env python3
"""The device check's tables (check.sh), printed by each stage as soon as it is done.

usage: check_tables.py suite RUN_DIR        problem | verdict | reference us | candidate us | speedup | spread
       check_tables.py agreement OUT_DIR    the agreement corpus judged on the GPU and on the simulator

Each reads what the stage left and says so when it left nothing (a stage that failed or timed out),
so a later stage's table still prints.
"""
import json
import os
import re
import statistics
import sys


def suite(run):
    if not os.path.exists(os.path.join(run, "run.json")):
        print(f"no evaluation results in {run}: see the stage's log")
        return
    results = os.path.join(run, "results.jsonl")
    rows = [json.loads(l) for l in open(results) if l.strip()] if os.path.exists(results) else []
    info = json.load(open(os.path.join(run, "run.json")))
    dev = info.get("cuda", {}).get("device", {})
    print(f"device: {dev.get('name')}  SMs {dev.get('sm_count')}  measured D2D bandwidth {dev.get('measured_bandwidth_gbs', 0):.0f} GB/s "
          f"(theoretical {dev.get('theoretical_bandwidth_gbs', 0):.0f})  references on {info.get('cuda', {}).get('references_on')}")
    print(f"{'problem':34} {'verdict':15} {'ref us':>10} {'cand us':>10} {'speedup':>8} {'spread':>7} {'KB cand us':>10} {'KB speedup':>10}")
    for r in rows:
        t = r.get("timing", {})
        cand = t.get("median_ms"); ref = t.get("reference_median_ms")
        s = t.get("samples_ms") or []
        spread = statistics.pstdev(s) / statistics.mean(s) if len(s) > 1 and statistics.mean(s) > 0 else float("nan")
        f = lambda v: f"{v * 1000:10.1f}" if v else f"{'-':>10}"
        sp = f"{t['speedup']:8.2f}" if "speedup" in t else f"{'-':>8}"
        # KernelBench's own cuda_event measurement of the same iterations (--kernelbench-timing), when asked for.
        kb = t.get("kernelbench", {})
        kb_cand = f(kb.get("candidate", {}).get("mean_ms"))
        kb_sp = f"{kb['speedup']:10.2f}" if "speedup" in kb else f"{'-':>10}"
        print(f"{r['problem']:34} {r['verdict']:15} {f(ref)} {f(cand)} {sp} {spread:7.2%} {kb_cand} {kb_sp}  {r.get('reason', '')[:60]}")
    # Triton's autotuning on the GPU: each configuration's times and the choice, from the result's log.
    for r in rows:
        log = r.get("compile_log", "")
        if "--- autotuning on the GPU" in log:
            print(f"{r['problem']} sample {r.get('sample')}: {log[log.index('--- autotuning on the GPU'):].strip()}")



def agreement(out):
    def verdicts(backend):
        path = os.path.join(out, f"agree-{backend}", "results.jsonl")
        rows = [json.loads(l) for l in open(path) if l.strip()] if os.path.exists(path) else []
        return {os.path.basename(r.get("origin", "")): r for r in rows}
    gpu, sim = verdicts("cuda"), verdicts("sim")
    print(f"{'agreement file':48} {'rule expects':15} {'GPU':15} {'sim':15} agree")
    agree = total = 0
    for root, _, files in sorted(os.walk("tests/agreement")):
        for f in sorted(x for x in files if x.endswith(".cu")):
            m = re.search(r"// @expect: (\w+)", open(os.path.join(root, f)).read())
            want = m.group(1) if m else "?"
            g = gpu.get(f, {}).get("verdict", "-"); s = sim.get(f, {}).get("verdict", "-")
            total += 1; agree += g == s
            verdict = "no GPU result" if g == "-" else "yes" if g == s else "NO  " + gpu.get(f, {}).get("reason", "")[:50]
            print(f"{f:48} {want:15} {g:15} {s:15} {verdict}")
    print(f"sim agrees with the GPU on {agree}/{total}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("suite", "agreement"):
        sys.exit(__doc__)
    {"suite": suite, "agreement": agreement}[sys.argv[1]](sys.argv[2])
