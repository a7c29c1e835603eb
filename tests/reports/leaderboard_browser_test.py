#!/usr/bin/env python3
"""leaderboard.html in a real browser (headless Chromium), checked against leaderboard.json: three
served "models" of scripted quality over a two-level suite, judged on the simulator by `cuset
leaderboard`; then the page as the browser built it, with a grid cell's candidates, a head-to-head
pair and the "solved by one model only" filter opened through the URL hash, and a problem's statement
in a second load. Every number checked is read from leaderboard.json. Saves screenshots.

usage: leaderboard_browser_test.py CUSET SOURCE_DIR WORK_DIR      (exit 77 = skipped)
"""
import html
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import e2e_support  # noqa: E402

cuset, source, work = sys.argv[1:4]
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if not browser:
    print("SKIP: chromium is not installed (scripts/install-deps.sh installs it)")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

# Level 1: relu (all solve it), elu (only strong), row_max (nobody); level 2: gated_residual (only
# strong), scale_add_clamp (only mid). Ranked strong (3 solved), mid (2), weak (1).
problems = ["level1/relu", "level1/elu", "level1/row_max", "level2/gated_residual", "level2/scale_add_clamp"]
suite = os.path.join(work, "suite")
for p in problems:
    shutil.copytree(os.path.join(source, "problems", p), os.path.join(suite, p))


def answer(problem, name):
    with open(os.path.join(source, "problems", problem, "solutions", name)) as f:
        return "Here is the kernel.\n\n```cuda\n" + f.read() + "\n```\n"


# The first rule whose key the prompt contains answers: ReLU's comes before ELU's.
keys = {"level1/relu": "ReLU", "level1/elu": "ELU", "level1/row_max": "Maximum of each row",
        "level2/gated_residual": "Gated residual", "level2/scale_add_clamp": "Per-feature affine map"}
good = {"level1/relu": answer("level1/relu", "grid_stride.cu"), "level1/elu": answer("level1/elu", "elementwise.cu"),
        "level1/row_max": answer("level1/row_max", "bad_half_warp.cu"), "level2/gated_residual": answer("level2/gated_residual", "fused.cu"),
        "level2/scale_add_clamp": answer("level2/scale_add_clamp", "bad_clamp_before_add.cu")}
mid = dict(good, **{"level1/elu": answer("level1/relu", "grid_stride.cu"), "level2/gated_residual": answer("level1/relu", "grid_stride.cu"),
                    "level2/scale_add_clamp": answer("level2/scale_add_clamp", "fused.cu")})
weak = dict(good, **{"level1/elu": "No kernel today.", "level2/gated_residual": answer("level1/relu", "grid_stride.cu"),
                     "level2/scale_add_clamp": "```cuda\n__global__ void broken( {\n```\n"})


def rules(answers):
    return [{"contains": [keys[p]], "content": answers[p]} for p in problems]


server, url = e2e_support.serve_script(work, "models", {"models": {"strong": {"rules": rules(good)}, "mid": {"rules": rules(mid)},
                                                                   "weak": {"rules": rules(weak)}}})
try:
    with open(os.path.join(work, "board.yaml"), "w") as f:
        f.write(f"""name: two-levels
out: board
problems: suite
k: 2
generation: {{temperature: 0.7, max_tokens: 2048, concurrency: 4}}
models:
  - {{name: strong, endpoint: {url}, model: strong, price: {{prompt_per_mtok: 3.0, completion_per_mtok: 15.0}}}}
  - {{name: mid, endpoint: {url}, model: mid, price: {{prompt_per_mtok: 0.5, completion_per_mtok: 1.5}}}}
  - {{name: weak, endpoint: {url}, model: weak, price: {{prompt_per_mtok: 0.1, completion_per_mtok: 0.1}}}}
eval: {{backend: sim, trials: 1, seed: 7}}
""")
    r = subprocess.run([cuset, "leaderboard", "--quiet", "--config", "board.yaml"], cwd=work, capture_output=True, text=True)
    print(r.stdout + r.stderr)
    assert r.returncode == 0, r.returncode
finally:
    server.terminate()
    server.wait()

board_dir = os.path.join(work, "board")
board = json.load(open(os.path.join(board_dir, "leaderboard.json")))
page = os.path.join(board_dir, "leaderboard.html")
assert [m["model"] for m in board["models"]] == ["strong", "mid", "weak"], [m["model"] for m in board["models"]]
problem = {p["id"]: p for p in board["problems"]}
assert sorted(problem) == sorted(problems), sorted(problem)
# The scripted answers made the board this test needs.
assert problem["level2/scale_add_clamp"]["solved_by"] == ["mid"], problem["level2/scale_add_clamp"]
assert problem["level1/row_max"]["solved_by"] == [], problem["level1/row_max"]
assert [lv["level"] for lv in board["levels"]] == ["1", "2"], board["levels"]
# No scripted answer can crash: a runtime_error here is the judge's fault (two jobs building one source
# once replaced a library a sandboxed worker was about to load).
crashed = [c for c in board["candidates"] if c["verdict"] == "runtime_error"]
assert not crashed, crashed


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def all(self, pred):
        for c in self.children:
            if isinstance(c, Node):
                if pred(c):
                    yield c
                yield from c.all(pred)

    def find(self, pred):
        return next(self.all(pred), None)

    def by_id(self, ident):
        return self.find(lambda n: n.attrs.get("id") == ident)

    def classes(self):
        return (self.attrs.get("class") or "").split()


class Tree(html.parser.HTMLParser):
    VOID = {"meta", "br", "input", "img", "link", "hr", "col", "area", "base", "source", "wbr"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.at = self.root
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.at)
        self.at.children.append(node)
        if tag not in self.VOID:
            self.at = node

    def handle_startendtag(self, tag, attrs):
        self.at.children.append(Node(tag, attrs, self.at))

    def handle_endtag(self, tag):
        at = self.at
        while at is not self.root and at.tag != tag:
            at = at.parent
        if at is not self.root:
            self.at = at.parent

    def handle_data(self, data):
        self.at.children.append(data)


def fail(message):
    print("leaderboard browser test FAILED: " + message, file=sys.stderr)
    sys.exit(1)


def browse(args, log):
    with open(log, "w") as err:
        r = subprocess.run(["timeout", "120", browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            "--user-data-dir=" + os.path.join(work, "profile"), "--enable-logging=stderr", "--v=0"] + args,
                           stdout=subprocess.PIPE, stderr=err, text=True)
    if ":CONSOLE" in open(log).read():
        fail("the page logged to the console:\n" + "\n".join(line for line in open(log) if ":CONSOLE" in line))
    return r.stdout


def percent(v):
    return "%.1f%%" % (100 * v)


def cell_text(c):
    if c["c"] > 0:
        return ("%.2fx · %d/%d" % (c["best_speedup"], c["c"], c["n"])) if "best_speedup" in c else "%d/%d" % (c["c"], c["n"])
    return "%s · 0/%d" % (c["best"] or "none", c["n"])


# One load: mid's candidates for the problem only mid solves, strong against mid, and the grid
# filtered to the problems one model alone solves.
opened = ("level2/scale_add_clamp", "mid")
hash_ = "cell=level2%2Fscale_add_clamp|mid&h2h=strong|mid&solvers=one"
# A virtual-time budget lets the browser finish inflating the sources before it dumps the page.
dom = browse(["--virtual-time-budget=20000", "--dump-dom", "file://" + page + "#" + hash_], os.path.join(work, "browser.log"))
open(os.path.join(work, "dom.html"), "w").write(dom)
tree = Tree(dom).root

# 1. Per level: the table and the chart say what leaderboard.json says.
levels = tree.by_id("levels")
if levels is None:
    fail("no per-level table")
rows = [[td.text().strip() for td in tr.all(lambda n: n.tag == "td")] for tr in levels.all(lambda n: n.tag == "tr")]
rows = [r for r in rows if r]
want = [["level " + lv["level"], m["model"], str(m["problems"]), percent(m["pass_at_1"]), percent(m["pass_at_k"])]
        for lv in board["levels"] for m in lv["models"]]
if rows != want:
    fail("per-level table %s, leaderboard.json says %s" % (rows, want))
bars = {t.text() for t in tree.by_id("levels-chart").all(lambda n: n.tag == "title")}
for lv in board["levels"]:
    for m in lv["models"]:
        bar = "level %s · %s: %s" % (lv["level"], m["model"], percent(m["pass_at_1"]))
        if bar not in bars:
            fail("the per-level chart has no bar '%s' (it has %s)" % (bar, sorted(bars)))

# 2. The grid: every cell's text, and the filter left only the problems one model solves.
grid = tree.by_id("grid-table")
models = [m["model"] for m in board["models"] if m["evaluated"]]
for tr in grid.all(lambda n: n.tag == "tr" and "data-id" in n.attrs):
    p = problem[tr.attrs["data-id"]]
    cells = [td for td in tr.all(lambda n: n.tag == "td" and "cell" in n.classes())]
    got = [td.text().strip() for td in cells]
    if got != [cell_text(p["cells"][m]) for m in models]:
        fail("grid row %s shows %s, leaderboard.json says %s" % (p["id"], got, [cell_text(p["cells"][m]) for m in models]))
    if [td.attrs.get("class") for td in cells] != ["cell v-" + p["cells"][m]["best"] for m in models]:
        fail("grid row %s is coloured %s" % (p["id"], [td.attrs.get("class") for td in cells]))
    hidden = "hidden" in tr.attrs
    if hidden != (len(p["solved_by"]) != 1):
        fail("with 'solved by one model only', %s (solved by %s) is %s" % (p["id"], p["solved_by"], "hidden" if hidden else "shown"))
count = tree.by_id("grid-filters").find(lambda n: "count" in n.classes()).text()
only_one = sum(1 for p in board["problems"] if len(p["solved_by"]) == 1)
if count != "%d of %d problems shown" % (only_one, len(problems)):
    fail("filter count says '%s'" % count)

# 3. The opened cell: each of its candidates with verdict, reason and source.
detail = tree.by_id("detail")
if detail is None or "hidden" in detail.attrs or detail.attrs.get("data-view") != "cell":
    fail("the URL hash did not open the cell")
if detail.find(lambda n: n.tag == "h3").text() != "mid on level2/scale_add_clamp":
    fail("the opened cell is titled '%s'" % detail.find(lambda n: n.tag == "h3").text())
cell = problem[opened[0]]["cells"][opened[1]]
shown = list(detail.all(lambda n: n.tag == "details"))
if len(shown) != len(cell["candidates"]):
    fail("the cell shows %d candidates, leaderboard.json has %d" % (len(shown), len(cell["candidates"])))
for box, index in zip(shown, cell["candidates"]):
    c = board["candidates"][index]
    verdict = box.find(lambda n: n.tag == "span" and any(k.startswith("v-") for k in n.classes())).text()
    pre = box.find(lambda n: n.tag == "pre" and "source" in n.classes())
    if pre.attrs.get("data-loaded") != "1":
        fail("candidate %d's source was not inflated: %s" % (index, pre.text()[:200]))
    src = pre.text()
    if verdict != c["verdict"] or src != board["sources"][c["source"]]:
        fail("candidate %d shows verdict %s and a source that %s leaderboard.json's" % (index, verdict, "matches" if src == board["sources"][c["source"]] else "differs from"))
    reason = box.find(lambda n: "reason" in n.classes())
    if (reason.text() if reason else "") != c["reason"]:
        fail("candidate %d's reason is not leaderboard.json's" % index)
if not any("open" in b.attrs for b in shown):
    fail("no candidate of the opened cell is expanded")

# 4. Head to head: strong against mid, both lists as leaderboard.json has them.
view = tree.by_id("h2h-view")
if view is None or view.attrs.get("data-a") != "strong" or view.attrs.get("data-b") != "mid":
    fail("the head-to-head view is not strong against mid")
pair = next(x for x in board["head_to_head"] if {x["a"], x["b"]} == {"strong", "mid"})
strong_only, mid_only = (pair["a_only"], pair["b_only"]) if pair["a"] == "strong" else (pair["b_only"], pair["a_only"])
for ident, want_ids in (("h2h-a-only", strong_only), ("h2h-b-only", mid_only)):
    got = [li.text() for li in view.by_id(ident).all(lambda n: n.tag == "li")]
    if got != (want_ids or ["none"]):
        fail("%s lists %s, leaderboard.json says %s" % (ident, got, want_ids))
if strong_only != ["level1/elu", "level2/gated_residual"] or mid_only != ["level2/scale_add_clamp"]:
    fail("unexpected head to head in leaderboard.json: %s" % pair)
matrix = {(td.attrs["data-a"], td.attrs["data-b"]): td.text() for td in tree.by_id("h2h-matrix").all(lambda n: "data-a" in n.attrs)}
if matrix[("strong", "mid")] != str(len(strong_only)) or matrix[("mid", "strong")] != str(len(mid_only)):
    fail("the head-to-head matrix says %s" % matrix)

# 5. The cost chart: one point per priced model at its pass@k.
points = {t.text() for t in tree.by_id("cost-chart").all(lambda n: n.tag == "title")}
for m in board["models"]:
    point = "%s: %s at %s" % (m["model"], percent(m["pass_at_k"]), "%.4g" % m["cost"])
    if point not in points:
        fail("the cost chart has no point '%s' (it has %s)" % (point, sorted(points)))

# 6. What the numbers cover and the settings, as words and tables.
covers = tree.by_id("covers").text()
for needle in ("k = 2", "level 1: 3", "level 2: 2", "sim backend", "1 correctness trial", "evaluation seed 7"):
    if needle not in covers:
        fail("'What these numbers cover' lacks '%s'" % needle)
settings = {tr.find(lambda n: n.tag == "th").text(): tr.find(lambda n: n.tag == "td").text() for tr in tree.by_id("settings").all(lambda n: n.tag == "tr")}
if settings.get("backend") != "sim" or settings.get("samples per problem (k)") != "2":
    fail("settings table: %s" % settings)

# A second load: a problem's statement.
dom2 = browse(["--dump-dom", "file://" + page + "#problem=level1%2Frelu"], os.path.join(work, "browser2.log"))
detail = Tree(dom2).root.by_id("detail")
statement = detail.find(lambda n: n.tag == "pre" and "statement" in n.classes()) if detail else None
if statement is None or "name: relu" not in statement.text() or detail.attrs.get("data-view") != "problem":
    fail("the problem link did not open relu's statement")

# With GPU timing: the same candidates given CUPTI-shaped timings (strong's kernels 2x the reference,
# mid's 1.25x, weak's 0.5x, a later sample 10% faster) and the board rewritten with --report-only:
# the fast_p curve, the speedup distribution, the speedups in the grid and head to head.
speed = {"strong": 2.0, "mid": 1.25, "weak": 0.5}
for m in models:
    path = os.path.join(board_dir, "models", m, "eval", "results.jsonl")
    records = [json.loads(line) for line in open(path)]
    for rec in records:
        if rec["verdict"] == "correct":
            x = speed[m] * (1 + 0.1 * rec["sample"])
            rec["timing"] = {"kind": "cuda_cupti", "samples_ms": [1.0 / x] * 5, "reference_samples_ms": [1.0] * 5}
    with open(path, "w") as f:
        f.writelines(json.dumps(rec) + "\n" for rec in records)
r = subprocess.run([cuset, "leaderboard", "--quiet", "--report-only", "--config", "board.yaml"], cwd=work, capture_output=True, text=True)
assert r.returncode == 0, r.stdout + r.stderr
timed = json.load(open(os.path.join(board_dir, "leaderboard.json")))
assert timed["timing"] == "gpu", timed["timing"]
tree = Tree(browse(["--virtual-time-budget=20000", "--dump-dom", "file://" + page + "#h2h=strong|mid"], os.path.join(work, "browser3.log"))).root
curve = {t.text() for t in tree.by_id("fastp-chart").all(lambda n: n.tag == "title")}
for m in timed["models"]:
    for p, v in m["fast_p"].items():
        point = "%s · p = %s: %s" % (m["model"], p, percent(v))
        if point not in curve:
            fail("the fast_p curve has no point '%s'" % point)
bins = sum(int(t.text().rsplit(": ", 1)[1]) for t in tree.by_id("speedup-chart").all(lambda n: n.tag == "title"))
solved = sum(1 for p in timed["problems"] for c in p["cells"].values() if "best_speedup" in c)
if bins != solved:
    fail("the speedup distribution counts %d problems, leaderboard.json has %d solved with a speedup" % (bins, solved))
relu = next(p for p in timed["problems"] if p["id"] == "level1/relu")
row = next(tr for tr in tree.by_id("grid-table").all(lambda n: n.attrs.get("data-id") == "level1/relu"))
got = [td.text().strip() for td in row.all(lambda n: n.tag == "td" and "cell" in n.classes())]
if got != [cell_text(relu["cells"][m]) for m in models] or "2.20x · 2/2" not in got:
    fail("timed relu row shows %s" % got)
pair = next(x for x in timed["head_to_head"] if {x["a"], x["b"]} == {"strong", "mid"})
ratio = pair["speedup_ratio"]["geomean"] if pair["a"] == "strong" else 1 / pair["speedup_ratio"]["geomean"]
if abs(ratio - 2.2 / 1.375) > 1e-9:
    fail("strong's speedup over mid's on relu is %s in leaderboard.json" % ratio)
said = tree.by_id("h2h-view").find(lambda n: "h2h-ratio" in n.classes())
if said is None or ("%.2fx as fast as mid" % ratio) not in said.text():
    fail("the head-to-head view does not give the speedup ratio %.2fx" % ratio)

# Self-contained: nothing is fetched.
if re.search(r'(src|href)="(https?:)?//', open(page).read()):
    fail("the page references the network")

# The opened cell's window is taller than the page: a headless screenshot of a scrolled page is blank.
for name, size, h in (("leaderboard-1400px.png", "1400,2600", ""), ("leaderboard-cell-1400px.png", "1400,3600", hash_),
                      ("leaderboard-phone.png", "390,2600", "")):
    browse(["--virtual-time-budget=20000", "--window-size=" + size, "--screenshot=" + os.path.join(work, name), "file://" + page + ("#" + h if h else "")],
           os.path.join(work, "shot.log"))
    if not os.path.getsize(os.path.join(work, name)):
        fail("no screenshot " + name)
print("leaderboard browser test passed; DOM and screenshots in " + work)
