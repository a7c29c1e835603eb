#!/usr/bin/env python3
"""`cuset refine` end to end on the sim backend, against the scripted local server:
a model that answers wrongly until the prompt carries the evaluator's mismatch feedback; the budget
and patience stops; SIGKILL mid-run and --resume repeating no finished request.

usage: refine_e2e.py CUSET SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
suite = os.path.join(work, "suite")
for p in ("level1/relu", "level1/elu"):
    shutil.copytree(os.path.join(source, "problems", p), os.path.join(suite, p))


def kernel(problem, name):
    with open(os.path.join(source, "problems", problem, "solutions", name)) as f:
        return "```cuda\n" + f.read() + "\n```\n"


relu, elu = kernel("level1/relu", "grid_stride.cu"), kernel("level1/elu", "elementwise.cu")
# Answers each problem with the other one's kernel (a wrong answer), until the prompt carries the
# evaluator's mismatch statistics ("... of 64000 elements differ ...").
learner = {"rules": [{"contains": ["Elementwise ReLU", "elements differ"], "content": relu},
                     {"contains": ["ELU (alpha", "elements differ"], "content": elu},
                     {"contains": ["ELU (alpha"], "content": relu}],
           "default": {"content": elu}}
stubborn = {"default": {"content": elu}}


def serve(name, script):
    return e2e_support.serve_script(work, name, script)


def chat_requests(name):
    return e2e_support.chat_requests(work, name)


def refine(url, model, out, *extra, expect=0, only=("level1/relu",)):
    args = [cuset, "refine", "--quiet", "--endpoint", url, "--model", model, "--problems", suite, "--out", os.path.join(work, out),
            "-n", "2", "--trials", "1", "--eval-seed", "5"]
    for p in only:
        args += ["--only", p]
    r = subprocess.run(args + list(extra), capture_output=True, text=True)
    assert r.returncode == expect, r.stdout + r.stderr
    return r


def report(out):
    return json.load(open(os.path.join(work, out, "refine.json")))


server, url = serve("main", {"models": {"learner": learner, "stubborn": stubborn}})
try:
    # Wrong in round 1, correct in round 2 once the prompt carries the evaluator's numbers.
    refine(url, "learner", "learn", "--rounds", "4")
    rep = report("learn")
    p = rep["problems"][0]
    assert p["best"]["round"] == 2 and len(p["rounds"]) == 2, p
    assert p["rounds"][0]["verdicts"] == {"wrong_answer": 2} and p["rounds"][1]["correct"] == 2, p["rounds"]
    assert "no GPU timing" in p["stop"], p["stop"]
    assert [c["rate"] for c in rep["suite"]["correct_rate_after_round"]] == [0.0, 1.0], rep["suite"]
    results = [json.loads(line) for line in open(os.path.join(work, "learn", "results.jsonl"))]
    assert sorted({r["round"] for r in results}) == [1, 2] and len(results) == 4
    reason = next(r["reason"] for r in results if r["round"] == 1)
    assert "elements differ" in reason, reason
    transcript = [json.loads(line) for line in open(os.path.join(work, "learn", "transcripts", "level1_relu.jsonl"))]
    round2 = transcript[1]["messages"]
    assert [m["role"] for m in round2] == ["system", "user", "assistant", "user"], [m["role"] for m in round2]
    assert reason in round2[-1]["content"], "the round-2 prompt must carry the evaluator's own numbers"
    assert round2[2]["content"] == transcript[0]["responses"][0]["response"]
    # best.jsonl is a candidate file `cuset eval` accepts, and its kernel is correct.
    r = subprocess.run([cuset, "eval", "--quiet", "--backend", "sim", "--problems", suite, "--candidates", os.path.join(work, "learn", "best.jsonl"),
                        "--out", os.path.join(work, "best-eval"), "--trials", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    verdicts = [json.loads(line)["verdict"] for line in open(os.path.join(work, "best-eval", "results.jsonl"))]
    assert verdicts == ["correct"], verdicts
    # A rerun without --resume is refused; with it, nothing is asked again.
    sent = chat_requests("main")
    r = refine(url, "learner", "learn", "--rounds", "4", expect=2)
    assert "--resume" in r.stderr, r.stderr
    refine(url, "learner", "learn", "--rounds", "4", "--resume")
    assert chat_requests("main") == sent
    # A changed setting is refused on resume.
    r = refine(url, "learner", "learn", "--rounds", "4", "--resume", "--feedback", "brief", expect=2)
    assert "feedback" in r.stderr, r.stderr

    # Budgets: one request, then the search stops.
    before = chat_requests("main")
    r = refine(url, "stubborn", "budget", "--rounds", "4", "--max-requests", "1")
    assert chat_requests("main") - before == 1
    assert "budget spent" in r.stdout and report("budget")["problems"][0]["stop"] == "budget spent", r.stdout
    r = refine(url, "stubborn", "tokens", "--rounds", "4", "--max-tokens-total", "10")
    assert len(report("tokens")["problems"][0]["rounds"]) == 1, report("tokens")
    # Patience: no progress in one round ends the search.
    refine(url, "stubborn", "patience", "--rounds", "5", "--patience", "1")
    p = report("patience")["problems"][0]
    assert len(p["rounds"]) == 2 and p["stop"].startswith("no improvement"), p
finally:
    server.terminate()
    server.wait()

# SIGKILL mid-run, then --resume: the same end as an uninterrupted run, and no finished request repeated.
server, url = serve("slow", {"delay_s": 0.4, "models": {"learner": learner}})
try:
    args = [cuset, "refine", "--quiet", "--endpoint", url, "--model", "learner", "--problems", suite, "--out", os.path.join(work, "killed"),
            "-n", "2", "--trials", "1", "--eval-seed", "5", "--rounds", "4", "--concurrency", "1"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Killed during the first answer (each takes 0.4 s): the answer in flight is lost.
    for _ in range(2000):
        if chat_requests("slow") >= 1:
            break
        time.sleep(0.01)
    time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    sent = chat_requests("slow")
    recorded = 0
    rounds = os.path.join(work, "killed", "rounds")
    for r in os.listdir(rounds) if os.path.isdir(rounds) else []:
        path = os.path.join(rounds, r, "candidates.jsonl")
        if os.path.exists(path):
            recorded += len({(json.loads(l)["problem"], json.loads(l)["sample"] // 2) for l in open(path) if l.endswith("\n")})
    r = subprocess.run(args + ["--resume"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lost = sent - recorded  # requests in flight at the kill, whose answers were never recorded
    assert 0 <= lost <= 1, (sent, recorded)
    assert chat_requests("slow") == 4 + lost, (chat_requests("slow"), sent, recorded)  # 2 problems x 2 rounds, n honoured
    rep = report("killed")
    assert [p["best"]["round"] for p in rep["problems"]] == [2, 2], rep["problems"]
finally:
    server.terminate()
    server.wait()
# The built-in model as the searched model (it writes no kernels; what is tested is that the loop runs
# its rounds through the local generator and records them).
e2e_support.train_tiny(cuset, work)
r = subprocess.run([cuset, "refine", "--quiet", "--model", os.path.join(work, "tiny", "final"), "--problems", suite, "--only", "level1/relu",
                    "--out", os.path.join(work, "local"), "-n", "2", "--rounds", "2", "--patience", "2", "--max-tokens", "16", "--trials", "1"],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stderr
p = report("local")["problems"][0]
assert len(p["rounds"]) == 2 and sum(p["rounds"][0]["verdicts"].values()) == 2, p
assert 0 < report("local")["info"]["tokens"] <= 2 * 2 * 16, report("local")["info"]  # 2 rounds x 2 samples x at most 16 tokens
print("refine e2e: ok")
