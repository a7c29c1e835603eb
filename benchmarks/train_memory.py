#!/usr/bin/env python3
"""Peak memory and step time of `cuset train` on a ~100M-parameter model, side by side in one run:
full fine-tuning, with activation checkpointing, with LoRA adapters, and data-parallel on 2 ranks with
replicated and with sharded optimizer state (per rank).

usage: benchmarks/train_memory.py [CUSET] [--steps N] [--max-tokens T]

Peak memory is each run's peak resident set (the largest rank's for 2 ranks), read from the kernel's
accounting of the finished processes (getrusage of the children, in a fresh interpreter per run).
Step time is the mean of metrics.jsonl's step_s over steps 2..N (the first step builds the model and,
for 2 ranks, connects them). Every run trains the same global batches (batch.size 4, same seed).
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.dirname(here)
parser = argparse.ArgumentParser()
parser.add_argument("cuset", nargs="?", default=os.path.join(source, "build/default/cli/cuset"))
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--max-tokens", type=int, default=512)
args = parser.parse_args()

with open(os.path.join(source, "configs", "tiny.yaml")) as f:
    tiny = f.read().replace("threads: 2", "threads: 0").replace("../data/sft-tiny.jsonl", os.path.join(source, "data", "sft-tiny.jsonl"))
# ~100M parameters: 12 layers of hidden 768 (Llama shape), a 16384-token embedding (tied), sequences up to --max-tokens.
base_text = (tiny.replace("hidden_size: 256", "hidden_size: 768").replace("intermediate_size: 688", "intermediate_size: 2048")
             .replace("num_hidden_layers: 4", "num_hidden_layers: 12").replace("num_attention_heads: 8", "num_attention_heads: 12")
             .replace("num_key_value_heads: 4", "num_key_value_heads: 12").replace("model_type: qwen2", "model_type: llama\n    vocab_size: 16384")
             .replace("max_tokens: 640", f"max_tokens: {args.max_tokens}").replace("log_every: 10", "log_every: 1")
             .replace("save_every: 50", "save_every: 100000").replace("max: 150", f"max: {args.steps}"))
assert "vocab_size: 16384" in base_text and "hidden_size: 768" in base_text, base_text
PARAMETERS = 12 * (4 * 768 * 768 + 3 * 768 * 2048 + 2 * 768) + 16384 * 768 + 768


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


MEASURE = ("import resource, subprocess, sys\n"
           "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
           "sys.stderr.write(r.stderr[-2000:])\n"
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
           "sys.exit(r.returncode)\n")


def run(work, name, text, ranks=1):
    config = os.path.join(work, name + ".yaml")
    with open(config, "w") as f:
        f.write(text)
    out = os.path.join(work, name)
    cmd = [args.cuset, "train", "--config", config, "--out", out, "-q"]
    if ranks > 1:
        cmd = [args.cuset, "launch", "--nproc", str(ranks), "--master-port", str(free_port()), "--", *cmd[1:]]
    r = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{name}: {r.stderr}")
    with open(os.path.join(out, "metrics.jsonl")) as f:
        records = [json.loads(line) for line in f][1:]
    return {"peak_mb": int(r.stdout.split()[-1]) / 1024, "step_s": sum(x["step_s"] for x in records) / len(records),
            "loss": records[-1]["loss"], "out": out}


work = tempfile.mkdtemp(prefix="cuset-train-memory-")
try:
    print(f"{os.cpu_count()} cores; {PARAMETERS / 1e6:.0f}M parameters; batch 4, sequences up to {args.max_tokens} tokens; "
          f"steps 2..{args.steps}\n")
    rows = [("full fine-tuning", "full", base_text, 1)]
    rows.append(("full, activation checkpointing", "checkpointed", base_text + "checkpointing: true\n", 1))
    results = {}
    for label, name, text, ranks in rows:
        results[label] = run(work, name, text, ranks)
    # LoRA adapts a saved base: the full run's final weights.
    lines = base_text.splitlines()
    start = lines.index("model:")
    end = next(i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" "))
    lora_lines = lines[:start] + ["model:", f"  path: {results['full fine-tuning']['out']}/final"] + lines[end:]
    lora_text = "\n".join(l for l in lora_lines if not l.startswith("tokenizer:") and not l.startswith("  train_vocab_size")) + "\n"
    lora_text += "adapter: {type: lora, r: 16, alpha: 32, dropout: 0.05}\n"
    for label, name, text, ranks in (("LoRA r=16 (all 7 projections), dropout 0.05, base float32", "lora", lora_text, 1),
                                     ("LoRA r=16, dropout 0, base float32", "lora-nodrop", lora_text.replace("dropout: 0.05", "dropout: 0.0"), 1),
                                     ("2 ranks, replicated optimizer state (per rank)", "dp", base_text, 2),
                                     ("2 ranks, sharded optimizer state (per rank)", "dp-sharded",
                                      base_text.replace("\noptimizer:\n", "\noptimizer:\n  shard_state: true\n", 1), 2)):
        results[label] = run(work, name, text, ranks)
    full = results["full fine-tuning"]
    print("| mode | peak memory | vs full | step time | vs full |")
    print("|---|---|---|---|---|")
    for label, r in results.items():
        print(f"| {label} | {r['peak_mb']:.0f} MB | {r['peak_mb'] / full['peak_mb']:.2f}x | {r['step_s']:.2f} s | {r['step_s'] / full['step_s']:.2f}x |")
finally:
    shutil.rmtree(work, ignore_errors=True)
