#!/usr/bin/env python3
"""How big leaderboard.html gets and how long it takes to open, at the size a leaderboard reaches
(default: 250 problems x 10 models, k = 3, GPU-timed), side by side with a small board in one run:

    .venv/bin/python benchmarks/leaderboard_page.py [--cuset build/default/cli/cuset] [--problems 250] [--models 10] [--k 3]

It writes a synthetic leaderboard folder (problem.yaml files, each model's candidates.jsonl and
eval/results.jsonl shaped like a GPU run, every source distinct so none is stored once for many),
renders it with `cuset leaderboard --report-only`, and opens the page in headless Chromium with a
probe that records the browser's own navigation timings. Verdicts, timings and sources are synthetic;
only their shape matters."""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
parser = argparse.ArgumentParser()
parser.add_argument("--cuset", default=os.path.join(root, "build", "default", "cli", "cuset"))
parser.add_argument("--problems", type=int, default=250)
parser.add_argument("--models", type=int, default=10)
parser.add_argument("--k", type=int, default=3)
parser.add_argument("--repeats", type=int, default=5)
parser.add_argument("--keep", help="write the boards here and keep them")
args = parser.parse_args()
browser = shutil.which("chromium") or shutil.which("chromium-browser")
# Every bundled solution, so the sources differ as real ones do (and compress as real ones would).
solutions = sorted(os.path.join(d, f) for d, _, files in os.walk(os.path.join(root, "problems")) for f in files if f.endswith(".cu"))
sources = [open(f).read() for f in solutions]
problem_yaml = open(os.path.join(root, "problems", "level1", "relu", "problem.yaml")).read()
tags = ["elementwise", "activation", "reduction", "matmul", "conv", "norm", "attention", "fusion"]


def write_board(out, problems, models, k):
    random.seed(3)
    ids = []
    for p in range(problems):
        level = 1 + p % 3
        ident = "level%d/p%03d" % (level, p)
        ids.append(ident)
        os.makedirs(os.path.join(out, "problems", ident))
        text = problem_yaml.replace("name: relu", "name: p%03d" % p).replace("level: 1", "level: %d" % level)
        text = text.replace("tags: [elementwise, activation]", "tags: [%s, %s]" % (tags[p % 8], tags[(p // 8) % 8]))
        open(os.path.join(out, "problems", ident, "problem.yaml"), "w").write(text)
    config = "name: synthetic\nout: board\nproblems: problems\nk: %d\nmodels:\n" % k
    for m in range(models):
        name = "model-%02d" % m
        config += "  - {name: %s, endpoint: 'http://127.0.0.1:9/v1', model: %s, price: {prompt_per_mtok: %.2f, completion_per_mtok: %.2f}}\n" % (
            name, name, 0.2 * (m + 1), 0.8 * (m + 1))
        skill = 0.3 + 0.05 * m
        run = os.path.join(out, "board", "models", name, "eval")
        os.makedirs(run)
        with open(os.path.join(run, "results.jsonl"), "w") as res, open(os.path.join(out, "board", "models", name, "candidates.jsonl"), "w") as cand:
            for ident in ids:
                for s in range(k):
                    ok = random.random() < skill
                    r = {"problem": ident, "sample": s, "model": name, "backend": "cuda", "verdict": "correct" if ok else random.choice(
                        ["wrong_answer", "compile_error", "runtime_error"]), "source_hash": "%s-%s-%d" % (name, ident, s),
                         "source": random.choice(sources) + "\n// %s %s sample %d\n" % (name, ident, s),
                         "reason": "" if ok else "trial 2 of 5: y: 3 of 100 elements differ (3%); first at [1]: got 1, want 2"}
                    if ok:
                        c = random.lognormvariate(0, 0.6)
                        r["timing"] = {"kind": "cuda_cupti", "samples_ms": [c * (1 + random.gauss(0, 0.01)) for _ in range(30)],
                                       "reference_samples_ms": [1.0] * 30}
                    res.write(json.dumps(r) + "\n")
                    cand.write(json.dumps({"problem": ident, "sample": s, "request_key": "%s-%d" % (ident, s),
                                           "usage": {"prompt_tokens": 900, "completion_tokens": 1200 + 10 * m}}) + "\n")
        json.dump({"backend": "cuda", "seed": "5", "started": "2026-12-03T00:00:00Z", "environment": {"gpu": "synthetic", "git_revision": "synthetic"}},
                  open(os.path.join(run, "run.json"), "w"))
    open(os.path.join(out, "board.yaml"), "w").write(config + "eval: {backend: cuda, trials: 5, seed: 7}\n")


# Reads the browser's navigation timings back out of the dumped DOM.
PROBE = ("<script>window.addEventListener('load',function(){setTimeout(function(){var n=performance.getEntriesByType('navigation')[0];"
         "document.body.setAttribute('data-probe',JSON.stringify({dcl:n.domContentLoadedEventEnd,load:n.loadEventEnd,"
         "cells:document.querySelectorAll('#grid-table td.cell').length}));},0);});</script>")


def headless(url, profile, extra=()):
    start = time.perf_counter()
    dom = subprocess.run(["timeout", "120", browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + profile]
                         + list(extra) + ["--dump-dom", url], capture_output=True, text=True).stdout
    return time.perf_counter() - start, dom


def open_page(html, hash_, profile):
    probe = html.replace(".html", ".probe.html")
    text = open(html).read()
    open(probe, "w").write(text.replace("</body>", PROBE + "</body>"))
    wall, dom = headless("file://" + probe + hash_, profile)
    marker = 'data-probe="'
    at = dom.find(marker)
    if at < 0:
        raise SystemExit("the probe did not report (did the page's script fail?)")
    end = dom.index('"', at + len(marker))
    return wall, json.loads(dom[at + len(marker):end].replace("&quot;", '"'))


# What opening a cell costs beyond drawing it: inflating its problem's sources, with the page's own
# code path (atob, DecompressionStream, JSON.parse) in Node's V8, since the browser's clocks stand still
# under the virtual-time budget a dump needs to wait for it. Median and slowest over every problem.
INFLATE = r"""
const fs = require('fs');
const html = fs.readFileSync(process.argv[1], 'utf8');
const open = '<script type="application/json" id="leaderboard-sources">';
const at = html.indexOf(open) + open.length;
const packed = JSON.parse(html.slice(at, html.indexOf('</script>', at)));
(async () => {
  const times = [];
  for (const problem of Object.keys(packed)) {
    const t0 = performance.now();
    const text = atob(packed[problem]);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    JSON.parse(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text());
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({median: times[times.length >> 1], max: times[times.length - 1]}));
})();
"""


def inflate_times(html):
    node = shutil.which("node")
    if not node:
        return None
    return json.loads(subprocess.run([node, "-e", INFLATE, html], capture_output=True, text=True, check=True).stdout)


def measure(label, problems, models, k, work):
    out = os.path.join(work, label)
    write_board(out, problems, models, k)
    start = time.perf_counter()
    subprocess.run([args.cuset, "leaderboard", "--config", "board.yaml", "--report-only", "--quiet"], cwd=out, check=True, stdout=subprocess.DEVNULL)
    render = time.perf_counter() - start
    html = os.path.join(out, "board", "leaderboard.html")
    profile = os.path.join(work, "profile")
    runs = [open_page(html, "", profile) for _ in range(args.repeats)]
    # A cell opened through the URL: its sources inflated (a virtual-time budget lets the dump wait).
    if 'data-loaded="1"' not in headless("file://" + html + "#cell=level1%2Fp000|model-00", profile, ["--virtual-time-budget=60000"])[1]:
        raise SystemExit("the opened cell's source was not inflated")
    return {"label": label, "render_s": render, "html_mb": os.path.getsize(html) / 1e6,
            "json_mb": os.path.getsize(os.path.join(out, "board", "leaderboard.json")) / 1e6,
            "wall_s": statistics.median(r[0] for r in runs), "dcl_ms": statistics.median(r[1]["dcl"] for r in runs),
            "load_ms": statistics.median(r[1]["load"] for r in runs), "cells": runs[0][1]["cells"],
            "inflate_ms": inflate_times(html)}


if not browser:
    raise SystemExit("chromium is not installed (scripts/install-deps.sh installs it)")
work = args.keep or tempfile.mkdtemp(prefix="cuset-leaderboard-page-")
if args.keep:
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
small = measure("small", 3, 2, args.k, work)
big = measure("large", args.problems, args.models, args.k, work)
print("| board | cells | page | leaderboard.json | cuset render | DOMContentLoaded | load | a cell's sources inflated (median / slowest) | headless wall |")
print("|---|---|---|---|---|---|---|---|---|")
for b, shape in ((small, "3 x 2"), (big, "%d x %d" % (args.problems, args.models))):
    inflate = "%.1f / %.1f ms" % (b["inflate_ms"]["median"], b["inflate_ms"]["max"]) if b["inflate_ms"] else "no node"
    print("| %s (k = %d) | %d | %.2f MB | %.2f MB | %.2f s | %.0f ms | %.0f ms | %s | %.2f s |" % (
        shape, args.k, b["cells"], b["html_mb"], b["json_mb"], b["render_s"], b["dcl_ms"], b["load_ms"], inflate, b["wall_s"]))
print("large / small: page %.0fx, load %.1fx, headless wall %.2fx" % (big["html_mb"] / small["html_mb"], big["load_ms"] / small["load_ms"],
                                                                   big["wall_s"] / small["wall_s"]))
if not args.keep:
    shutil.rmtree(work)
