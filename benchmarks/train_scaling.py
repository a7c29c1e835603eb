#!/usr/bin/env python3
"""Data-parallel `cuset train` on one machine: steps/s with 1 process and with 2 ranks (`cuset launch`),
and the gradient all-reduce time per step for the tiny model and a ~100M-parameter one.

usage: benchmarks/train_scaling.py [CUSET] [--steps N] [--big-steps N] [--skip-big]

Every run trains the same global batch (batch.size 4), so a step is the same work at every world
size. One process gets all cores (threads 0); each of 2 ranks gets half (the trainer divides the
cores among the ranks of a node). The first step (model init, the tokenizer, Gloo's connection) is
left out of the rates: rates are from metrics.jsonl's per-step records 2..N. `allreduce_s_per_step`
is the bucketed all-reduce of the gradients alone; `rank_wait_s_per_step` is the time a rank waited
for the slower one first (uneven sequence lengths), reported apart so it is not mistaken for
communication.
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.dirname(here)
parser = argparse.ArgumentParser()
parser.add_argument("cuset", nargs="?", default=os.path.join(source, "build/default/cli/cuset"))
parser.add_argument("--steps", type=int, default=12)
parser.add_argument("--big-steps", type=int, default=4)
parser.add_argument("--skip-big", action="store_true")
args = parser.parse_args()

with open(os.path.join(source, "configs", "tiny.yaml")) as f:
    tiny = f.read().replace("threads: 2", "threads: 0").replace("../data/sft-tiny.jsonl", os.path.join(source, "data", "sft-tiny.jsonl"))
tiny = tiny.replace("log_every: 10", "log_every: 1").replace("save_every: 50", "save_every: 100000")
# ~100M parameters: 12 layers of hidden 768 (Qwen2 shape, full attention heads), short sequences; only
# the gradient volume matters for the all-reduce.
big = (tiny.replace("hidden_size: 256", "hidden_size: 768").replace("intermediate_size: 688", "intermediate_size: 2816")
       .replace("num_hidden_layers: 4", "num_hidden_layers: 12").replace("num_attention_heads: 8", "num_attention_heads: 12")
       .replace("num_key_value_heads: 4", "num_key_value_heads: 12").replace("max_tokens: 640", "max_tokens: 128"))


def parameters(h, inter, layers, vocab=768):
    return layers * (4 * h * h + 4 * h + 3 * h * inter + 2 * h) + vocab * h + h  # attention (+ q/k/v biases), MLP, norms; tied head


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(work, name, text, steps, ranks):
    config = os.path.join(work, name + ".yaml")
    with open(config, "w") as f:
        f.write(text.replace("max: 150", f"max: {steps}"))
    out = os.path.join(work, f"{name}-{ranks}")
    cmd = ["train", "--config", config, "--out", out, "-q"]
    if ranks > 1:
        cmd = ["launch", "--nproc", str(ranks), "--master-port", str(free_port()), "--", *cmd]
    subprocess.run([args.cuset, *cmd], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open(os.path.join(out, "metrics.jsonl")) as f:
        records = [json.loads(line) for line in f][1:]  # without the first step
    mean = lambda key: sum(r.get(key, 0.0) for r in records) / len(records)
    return {"tokens_per_s": mean("tokens_per_s"), "allreduce": mean("allreduce_s_per_step"), "wait": mean("rank_wait_s_per_step")}


work = tempfile.mkdtemp(prefix="cuset-train-scaling-")
try:
    cores = os.cpu_count()
    print(f"{cores} cores; global batch 4; steps 2..N of each run\n")
    print("| model | parameters | ranks | tokens/s | speedup | all-reduce per step | waiting for the slower rank |")
    print("|---|---|---|---|---|---|---|")
    jobs = [("tiny", tiny, args.steps, parameters(256, 688, 4))]
    if not args.skip_big:
        jobs.append(("100M", big, args.big_steps, parameters(768, 2816, 12)))
    for name, text, steps, count in jobs:
        one = run(work, name, text, steps, 1)
        two = run(work, name, text, steps, 2)
        for ranks, r in ((1, one), (2, two)):
            speed = f"{r['tokens_per_s'] / one['tokens_per_s']:.2f}x"
            comm = f"{r['allreduce'] * 1e3:.1f} ms" if ranks > 1 else "-"
            wait = f"{r['wait'] * 1e3:.1f} ms" if ranks > 1 else "-"
            print(f"| {name} | {count / 1e6:.1f} M | {ranks} | {r['tokens_per_s']:.0f} | {speed} | {comm} | {wait} |")
        bytes_ = 4 * count
        print(f"|  |  |  |  |  | {bytes_ / 1e6:.0f} MB of fp32 gradients: {bytes_ / two['allreduce'] / 1e9:.2f} GB/s |  |")
finally:
    shutil.rmtree(work, ignore_errors=True)
