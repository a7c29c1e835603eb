#!/usr/bin/env python3
"""`cuset leaderboard` over two served "models" of different scripted quality, end to end:
ranking, resume (no request repeated), the comparison with a base leaderboard and its exit code.

usage: leaderboard_e2e.py CUSET SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = sys.argv[1:4]
problems = ["level1/relu", "level1/elu", "level1/row_max"]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
suite = os.path.join(work, "suite")
for p in problems:
    shutil.copytree(os.path.join(source, "problems", p), os.path.join(suite, p))


def solution(problem, name):
    with open(os.path.join(source, "problems", problem, "solutions", name)) as f:
        return "Here is the kernel.\n\n```cuda\n" + f.read() + "\n```\n"


good = [{"contains": ["ReLU"], "content": solution("level1/relu", "grid_stride.cu")},
        {"contains": ["ELU"], "content": solution("level1/elu", "elementwise.cu")},
        {"contains": ["Maximum of each row"], "content": solution("level1/row_max", "block_reduce.cu")}]
bad = [{"contains": ["ReLU"], "content": solution("level1/elu", "elementwise.cu")},  # ELU for ReLU: wrong answer
       {"contains": ["ELU"], "content": "I would write a kernel, but not today."},
       {"contains": ["Maximum of each row"], "content": solution("level1/row_max", "bad_half_warp.cu")}]


# The built-in model too: it writes no kernels; what is tested is that a checkpoint sits in the same
# leaderboard as served models.
e2e_support.train_tiny(cuset, work)


def serve(name, models):
    return e2e_support.serve_script(work, name, {"api_key": "sk-nightly", "models": models})


def chat_requests(name):
    return e2e_support.chat_requests(work, name)


def config(name, url):
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(f"""name: {name}
out: {name}
problems: suite
k: 2
generation: {{temperature: 0.7, max_tokens: 2048, concurrency: 4}}
models:
  - name: strong
    endpoint: {url}
    model: good
    api_key_env: CUSET_E2E_KEY
    price: {{prompt_per_mtok: 1.0, completion_per_mtok: 2.0}}
  - name: weak
    endpoint: {url}
    model: bad
    api_key_env: CUSET_E2E_KEY
    prompt: cuset
  - name: tiny
    checkpoint: tiny/final
    max_tokens: 24
eval: {{backend: sim, trials: 1, seed: 7}}
""")
    return path


def run(args, expect):
    env = dict(os.environ, CUSET_E2E_KEY="sk-nightly")
    r = subprocess.run([cuset, "leaderboard", "--quiet"] + args, cwd=work, env=env, capture_output=True, text=True)
    print(r.stdout + r.stderr)
    assert r.returncode == expect, "exit %d, expected %d" % (r.returncode, expect)
    return r.stdout


server, url = serve("nightly", {"good": {"rules": good}, "bad": {"rules": bad}})
try:
    base = config("base", url)
    run(["--config", base], 0)
    board = json.load(open(os.path.join(work, "base", "leaderboard.json")))
    rows = {m["model"]: m for m in board["models"]}
    assert [m["model"] for m in board["models"]][0] == "strong", board["models"]
    assert rows["tiny"]["evaluated"] and rows["tiny"]["generation"]["samples"] == 6 and "completion_tokens" not in rows["tiny"]["generation"]
    assert rows["tiny"]["source"]["prompt"] == "cuset" and "checkpoint" in rows["tiny"]["source"]
    assert rows["strong"]["rank"] == 1 and rows["strong"]["pass_at_1"] == 1.0, rows["strong"]
    assert rows["weak"]["pass_at_1"] == 0.0 and rows["weak"]["pass_at_k"] == 0.0, rows["weak"]
    assert rows["strong"]["generation"]["samples"] == 6 and rows["strong"]["generation"]["completion_tokens"] > 0
    assert rows["strong"]["cost"] > 0 and "cost" not in rows["weak"]
    shares = rows["weak"]["verdict_shares"]
    assert shares.get("wrong_answer", 0) > 0 and shares.get("invalid_submission", 0) > 0, shares
    assert rows["weak"]["source"]["prompt"] == "cuset" and rows["strong"]["source"]["prompt"] == "kernelbench"
    for f in ("leaderboard.md", "leaderboard.html", "models/strong/eval/report.html", "models/weak/eval/summary.json"):
        assert os.path.exists(os.path.join(work, "base", f)), f
    html = open(os.path.join(work, "base", "leaderboard.html")).read()
    assert 'href="models/strong/eval/report.html"' in html
    for root, _, files in os.walk(os.path.join(work, "base")):
        for f in files:
            assert "sk-nightly" not in open(os.path.join(root, f), errors="replace").read(), f
    sent = chat_requests("nightly")

    # A rerun sends nothing and evaluates nothing again.
    out = run(["--config", base], 0)
    assert chat_requests("nightly") == sent, "a rerun sent requests"
    assert "0 models evaluated, 3 already current" in out, out

    # Tonight: the same models compared with the base: no regression.
    tonight = config("tonight", url)
    run(["--config", tonight, "--compare", "base", "--fail-on-regression"], 0)
finally:
    server.terminate()
    server.wait()

# The strong model got worse: the nightly job fails with exit 3.
server, url = serve("worse", {"good": {"rules": bad}, "bad": {"rules": bad}})
try:
    worse = config("worse", url)
    out = run(["--config", worse, "--compare", "base", "--fail-on-regression"], 3)
    board = json.load(open(os.path.join(work, "worse", "leaderboard.json")))
    rows = {m["model"]: m for m in board["models"]}
    assert board["regression"] and rows["strong"]["comparison"]["regression"], rows["strong"]
    assert rows["strong"]["comparison"]["counts"]["worse"] == 3, rows["strong"]["comparison"]
    assert not rows["weak"]["comparison"]["regression"]
    assert "REGRESSION" in open(os.path.join(work, "worse", "leaderboard.md")).read()
finally:
    server.terminate()
    server.wait()

# `cuset generate --endpoint` itself, killed with SIGKILL mid-run and resumed: every sample exactly
# once, and no finished sample requested again (at most the requests in flight at the kill repeat).
server, url = e2e_support.serve_script(work, "slow", {"delay_s": 0.15, "api_key": "sk-nightly", "models": {"good": {"rules": good}}})
try:
    out_file = os.path.join(work, "killed.jsonl")
    gen = [cuset, "generate", "--quiet", "--endpoint", url, "--model", "good", "--api-key-env", "CUSET_E2E_KEY", "--problems", suite,
           "-k", "8", "--no-n", "--concurrency", "2", "--out", out_file]
    env = dict(os.environ, CUSET_E2E_KEY="sk-nightly")
    proc = subprocess.Popen(gen, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Killed once the first sample is recorded (24 samples at 0.15 s, 2 at a time, take over 1.7 s).
    for _ in range(1000):
        if os.path.exists(out_file) and "\n" in open(out_file).read():
            break
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    done_before = sum(1 for line in open(out_file) if line.endswith("\n"))
    assert 0 < done_before < 24, done_before
    # A request the killed process sent may be logged by the server a moment later (a loaded machine):
    # count once the log stops growing.
    sent_before = chat_requests("slow")
    for _ in range(50):
        time.sleep(0.1)
        if chat_requests("slow") == sent_before:
            break
        sent_before = chat_requests("slow")
    r = subprocess.run(gen, env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "--resume" in r.stderr, r.stderr  # not overwritten without --resume
    r = subprocess.run(gen + ["--resume"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"24 samples for 3 problems ({done_before} reused, {24 - done_before} requested" in r.stdout, r.stdout
    records = [json.loads(line) for line in open(out_file)]
    assert sorted((x["problem"], x["sample"]) for x in records) == sorted((p, i) for p in problems for i in range(8))
    assert chat_requests("slow") == sent_before + 24 - done_before, (chat_requests("slow"), sent_before, done_before)
    assert sent_before <= done_before + 2, (sent_before, done_before)  # what was in flight at the kill
    # Built-in-model options are refused with --endpoint.
    r = subprocess.run(gen + ["--device", "cpu"], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "--device" in r.stderr and "--endpoint" in r.stderr, r.stderr
finally:
    server.terminate()
    server.wait()

# A model whose endpoint is down is reported, the others still ranked, and the exit code says so.
broken = config("broken", "http://127.0.0.1:9/v1").replace(".yaml", ".yaml")
text = open(broken).read().replace("concurrency: 4}", "concurrency: 4, max_retries: 0}")
open(broken, "w").write(text)
out = run(["--config", broken], 1)
board = json.load(open(os.path.join(work, "broken", "leaderboard.json")))
served = [m for m in board["models"] if "endpoint" in m["source"]]
assert len(served) == 2 and all(not m["evaluated"] and "connection failed" in m["error"] for m in served), board["models"]
assert [m["evaluated"] for m in board["models"] if m["model"] == "tiny"] == [True]
print("leaderboard e2e: ok")
