"""Helpers shared by the Python end-to-end tests (tests/models, tests/refine, tests/scale, tests/kernelbench): the scripted OpenAI-
compatible server and a tiny checkpoint of the built-in model."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kernelbench_test_start(argv):
    """(cuset, source, work) of a KernelBench end-to-end test's `CUSET SOURCE_DIR WORK_DIR`, with WORK_DIR
    made empty; exits 77 (skip) without torch."""
    cuset, source, work = argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    require_torch()
    return cuset, source, work


def require_torch():
    """Exits 77 (ctest's skip) unless this interpreter has torch (KernelBench import and recording need it)."""
    if subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode != 0:
        print(f"SKIP: {sys.executable} has no torch (scripts/install-deps.sh makes the project's .venv)")
        sys.exit(77)


def cuset_runner(cuset):
    """run(*args, check=True): `cuset ARGS` with output captured; a failure ends the test with it."""
    def run(*args, check=True):
        p = subprocess.run([cuset, *args], capture_output=True, text=True)
        if check and p.returncode != 0:
            sys.exit(f"FAIL: cuset {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p
    return run


def require_slurm():
    """Exits 77 (ctest's skip) unless a Slurm cluster answers `sinfo` (CI starts one with
    scripts/start-local-slurm.sh)."""
    try:
        up = subprocess.run(["sinfo", "-h", "-o", "%a"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        up = None
    if up is None or up.returncode != 0 or "up" not in up.stdout:
        print("SKIP: no Slurm cluster answers sinfo (CI starts one with scripts/start-local-slurm.sh)")
        sys.exit(77)


def tiny_train_config(work, steps, save_every):
    """configs/tiny.yaml for data-parallel tests: sequences up to 320 tokens, a record every step, and
    `threads: 0` (one process takes every core, each of a node's ranks its share). Returns (path, text)."""
    with open(os.path.join(SOURCE, "configs", "tiny.yaml")) as f:
        text = f.read()
    for old, new in (("threads: 2", "threads: 0"), ("../data/sft-tiny.jsonl", os.path.join(SOURCE, "data", "sft-tiny.jsonl")),
                     ("max_tokens: 640", "max_tokens: 320"), ("max: 150", f"max: {steps}"), ("log_every: 10", "log_every: 1"),
                     ("save_every: 50", f"save_every: {save_every}")):
        assert old in text, f"configs/tiny.yaml no longer has `{old}`"
        text = text.replace(old, new)
    path = os.path.join(work, "tiny-dp.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path, text


def free_port():
    """A TCP port free on this host now (for MASTER_PORT)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metrics_by_step(run_dir):
    """A training run's metrics.jsonl records, by step."""
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return {rec["step"]: rec for rec in map(json.loads, f)}


def assert_same_curve(got, want, steps, what):
    """Every step's loss within 1e-4 relative of the reference's: data-parallel runs must follow the
    single-process curve."""
    for step in steps:
        a, b = got[step]["loss"], want[step]["loss"]
        assert abs(a - b) <= 1e-4 * abs(b), f"{what}: step {step}: loss {a} vs {b}"


def serve_script(work, name, script):
    """Starts tests/models/openai_test_server.py with `script` (a dict); returns (process, API base URL).
    Requests are logged to WORK/NAME.log."""
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(script, f)
    port_file = os.path.join(work, name + ".port")
    if os.path.exists(port_file):
        os.remove(port_file)
    proc = subprocess.Popen([sys.executable, os.path.join(SOURCE, "tests/models/openai_test_server.py"), "--script", path,
                             "--port-file", port_file, "--log", os.path.join(work, name + ".log")])
    for _ in range(200):
        if os.path.exists(port_file):
            break
        time.sleep(0.025)
    with open(port_file) as f:
        return proc, "http://127.0.0.1:%s/v1" % f.read().strip()


def chat_requests(work, name):
    """How many chat-completion requests the server NAME has seen."""
    path = os.path.join(work, name + ".log")
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return sum(1 for line in f if json.loads(line)["path"].endswith("/chat/completions"))


def train_tiny(cuset, work):
    """A checkpoint of the built-in model trained for two steps: WORK/tiny/final. It writes no kernels;
    it stands for a checkpoint folder wherever one is accepted."""
    config = os.path.join(work, "tiny.yaml")
    with open(config, "w") as f:
        f.write(f"""seed: 7
threads: 1
model:
  config: {{model_type: qwen2, hidden_size: 48, intermediate_size: 96, num_hidden_layers: 1, num_attention_heads: 4,
           num_key_value_heads: 2, tie_word_embeddings: true}}
tokenizer: {{train_vocab_size: 400}}
data: {{train: {SOURCE}/data/sft-tiny.jsonl, max_tokens: 400}}
batch: {{size: 4}}
steps: {{max: 2, log_every: 1, save_every: 2}}
""")
    subprocess.run([cuset, "train", "--quiet", "--config", config, "--out", os.path.join(work, "tiny")], check=True, capture_output=True)
    return os.path.join(work, "tiny", "final")


def copy_solutions(problems, dest):
    """The bundled solutions of `problems` (ids) as a candidates folder DEST/<level>/<name>/solutions/*.cu."""
    import shutil
    for p in problems:
        shutil.copytree(os.path.join(SOURCE, "problems", p, "solutions"), os.path.join(dest, p, "solutions"))


def verdicts(run_dir):
    """(model, problem, sample) -> (verdict, reason) of a run folder's results.jsonl."""
    out = {}
    with open(os.path.join(run_dir, "results.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            out[(r["model"], r["problem"], r["sample"])] = (r["verdict"], r["reason"])
    return out
