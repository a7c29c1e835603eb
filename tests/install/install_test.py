#!/usr/bin/env python3
"""`cmake --install` into a temporary prefix, then the installed cuset on its own (docs/install.md).

  install_test.py BUILD_DIR SOURCE_DIR

1. Installs the build into a fresh prefix outside the checkout and the build folder.
2. No file under the prefix names the checkout or the build folder, except inside the path of the
   Python environment the build was configured with (an external dependency, as /usr/lib is; in a
   checkout it is the .venv that scripts/install-deps.sh makes inside it).
3. From another working directory, with the checkout and the build folder hidden (a private mount
   namespace with an empty tmpfs over each, the Python environment bound back), the installed cuset
   runs `cuset doctor`, judges a bundled manifest solution and a KernelBench solution (ModelNew +
   load_inline), both correct. Where mount namespaces are refused, the same runs happen with the trees
   in place and the test says so.
4. `cpack -G DEB` makes a package of the same install (cuset, its resource file, the recorder).
"""
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

KB_SOLUTION = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
module = load_inline(name="installed_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=source, functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.relu(x)
'''


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def python_environment(python):
    """The prefix of the configured Python environment (sys.prefix), which the install may name."""
    out = subprocess.run([python, "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def names_of_trees(prefix, trees, allowed):
    """(file, tree) for every file under prefix whose bytes name one of `trees` outside `allowed`."""
    found = []
    for path in sorted(prefix.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        for a in allowed:
            data = data.replace(a.encode(), b"")
        for tree in trees:
            if tree.encode() in data:
                found.append((path.relative_to(prefix), tree))
    return found


def hiding_prefix(source, build, venv, keep):
    """A shell prefix that runs a command with `source` and `build` hidden, or None where mount
    namespaces are refused."""
    script = []
    if venv.startswith(source + "/") or venv.startswith(build + "/"):
        script.append(f"mkdir -p {shlex.quote(keep)} && mount --bind {shlex.quote(venv)} {shlex.quote(keep)}")
    script.append(f"mount -t tmpfs none {shlex.quote(source)}")
    if not build.startswith(source + "/"):
        script.append(f"mount -t tmpfs none {shlex.quote(build)}")
    if venv.startswith(source + "/") or venv.startswith(build + "/"):
        script.append(f"mkdir -p {shlex.quote(venv)} && mount --bind {shlex.quote(keep)} {shlex.quote(venv)}")
    setup = " && ".join(script)
    for unshare in (["unshare", "--mount", "--propagation", "private"], ["unshare", "--user", "--map-root-user", "--mount"]):
        probe = subprocess.run(unshare + ["sh", "-c", setup + f" && test ! -e {shlex.quote(build)}/CMakeCache.txt"], capture_output=True)
        if probe.returncode == 0:
            return unshare, setup
    return None


def main():
    build, source = (str(pathlib.Path(p).resolve()) for p in sys.argv[1:3])
    work = pathlib.Path(tempfile.mkdtemp(prefix="cuset-install-test-"))
    try:
        prefix = work / "prefix"
        r = subprocess.run(["cmake", "--install", build, "--prefix", str(prefix)], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"cmake --install failed:\n{r.stdout}\n{r.stderr}")
        cuset = prefix / "bin" / "cuset"
        resources = json.loads((prefix / "share" / "cuset" / "resources.json").read_text())
        if resources.get("layout") != "installed":
            fail(f"the installed resource file is not an install's: {resources}")
        venv = python_environment(resources["paths"]["python"])
        print(f"installed into {prefix}; Python environment {venv}")

        leaks = names_of_trees(prefix, [source, build], [venv, os.path.realpath(venv)])
        if leaks:
            fail("files under the prefix name the checkout or the build folder:\n" +
                 "\n".join(f"  {f}: {t}" for f, t in leaks[:20]))

        run = work / "elsewhere"
        run.mkdir()
        (run / "kb.jsonl").write_text(json.dumps({"problem": "level1/relu", "sample": 0, "model": "kb", "source": KB_SOLUTION}) + "\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("CUSET_")}  # nothing pointing back at the build
        env["HOME"] = str(work)
        hide = hiding_prefix(source, build, venv, str(work / "venv-keep"))
        if hide is None:
            print("note: mount namespaces are refused here: the installed cuset runs with the trees in place "
                  "(the check above is by name only)")

        def cuset_run(*args):
            command = " ".join(shlex.quote(a) for a in [str(cuset), *args])
            argv = hide[0] + ["sh", "-c", f"{hide[1]} && cd {shlex.quote(str(run))} && exec {command}"] if hide else ["sh", "-c", f"cd {shlex.quote(str(run))} && exec {command}"]
            return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)

        doctor = cuset_run("doctor")
        print(doctor.stdout)
        if "installed:" not in doctor.stdout or "recorded by the install" not in doctor.stdout:
            fail(f"cuset doctor does not say it runs installed with the install's Python:\n{doctor.stdout}\n{doctor.stderr}")
        if doctor.returncode != 0:
            fail(f"cuset doctor: not ready (exit {doctor.returncode})\n{doctor.stderr}")

        for name, candidates in (("manifest", str(prefix / "share" / "cuset" / "problems" / "level1" / "relu")),
                                 ("kernelbench", str(run / "kb.jsonl"))):
            out = run / f"run-{name}"
            r = cuset_run("eval", "--backend", "sim", "--candidates", candidates, "--out", str(out),
                          "--cache-dir", str(work / "cache"), "--trials", "2", "--quiet")
            if r.returncode != 0:
                fail(f"cuset eval ({name}) failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
            results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
            correct = [x for x in results if x["verdict"] == "correct"]
            if not correct:
                fail(f"cuset eval ({name}): no correct verdict: " + "; ".join(f"{x['verdict']}: {x['reason']}" for x in results))
            print(f"{name}: {len(correct)} of {len(results)} correct ({'hidden trees' if hide else 'trees in place'})")
        deb = work / "deb"
        r = subprocess.run(["cpack", "-G", "DEB", "--config", str(pathlib.Path(build) / "CPackConfig.cmake"), "-B", str(deb)],
                           capture_output=True, text=True)
        packages = list(deb.glob("cuset_*.deb"))
        if r.returncode != 0 or len(packages) != 1:
            fail(f"cpack -G DEB made no package:\n{r.stdout}\n{r.stderr}")
        listing = subprocess.run(["dpkg-deb", "-c", str(packages[0])], capture_output=True, text=True).stdout
        for wanted in ("./opt/cuset/bin/cuset", "./opt/cuset/share/cuset/resources.json",
                       "./opt/cuset/share/cuset/python/kernelbench/cuset_kernelbench.py"):
            if wanted not in listing:
                fail(f"{packages[0].name} lacks {wanted}")
        print(f"{packages[0].name}: {packages[0].stat().st_size // 1024} KiB")
        print("PASS")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
