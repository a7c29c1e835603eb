#!/usr/bin/env python3
"""The evaluator's stage folders depend on each other one way (docs/ARCHITECTURE.md).

Checks, for every file under evaluator/:
  - it includes another stage's header only when that stage is allowed below it in STAGE_USES;
  - only problem/src/torch_reference.cpp and candidate/src/library_call.cpp include LibTorch;
  - the simulator runtime (evaluator/sim/) includes no header of the project outside itself;
  - no folder holds more than 15 source files directly;
  - a Python module imports only modules of its own folder, of a folder its stage may use (PY_USES), and
    of the standard library or the project's Python environment.
Exits 1 naming every violation.
"""
import pathlib
import re
import sys

# What each stage may include, besides its own headers and common/ (the table in docs/ARCHITECTURE.md).
STAGE_USES = {
    "problem": set(),
    "timing": {"problem"},
    "candidate": {"problem"},
    "compile": {"sandbox"},  # NVRTC in helper processes
    "suite": {"problem", "timing"},
    "results": {"candidate"},
    # What runs a candidate's launches and how the run ended: below the sandbox that carries them.
    "region": {"candidate", "problem"},
    "correctness": {"region", "results", "candidate", "problem"},
    "sandbox": {"region", "candidate", "problem"},
    # The simulator's runtime (sim/runtime: libcuset_sim.so, linked into candidates' host builds and run
    # inside the sandbox) includes no stage of the evaluator: nothing candidate code runs beside reaches up.
    "sim": set(),
    "sim_backend": {"region", "sandbox", "compile", "correctness", "results", "candidate", "problem"},
    "cuda": {"region", "sandbox", "correctness", "compile", "timing", "results", "candidate", "problem"},
    # The pipeline names no candidate form: frontends implement its seam (candidate_frontend.hpp).
    "pipeline": {"region", "problem", "timing", "suite", "candidate", "compile", "results", "correctness", "sandbox", "sim_backend", "cuda"},
    "manifest": {"region", "pipeline", "candidate", "problem", "results", "correctness"},
    # KernelBench's room: its translator (below the pipeline: candidate, problem, results, sandbox,
    # compile), its importer (problem, suite), and its frontend and check (the pipeline's seam).
    "kernelbench": {"region", "pipeline", "candidate", "problem", "results", "correctness", "sim_backend", "suite", "timing", "sandbox", "compile"},
    # KernelBench's backend="triton" form: a frontend that uses KernelBench's room (static checker, recorder).
    "triton": {"pipeline", "kernelbench", "candidate", "problem", "results", "correctness", "region"},
    # The composition: the one folder that names every frontend.
    "evaluation": {"region", "pipeline", "manifest", "kernelbench", "triton", "problem", "timing", "suite", "candidate", "compile",
                   "results", "correctness", "sandbox", "sim_backend", "cuda"},
}
# Python folders whose modules another folder's Python may import (besides its own): none; KernelBench's
# recorder and importer share evaluator/kernelbench/python.
PY_USES = {}
MAX_SOURCES_PER_FOLDER = 15
PY_IMPORT = re.compile(r'^\s*(?:from\s+([A-Za-z_][\w]*)[\w.]*\s+import|import\s+([A-Za-z_][\w]*))')
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]cuset/evaluator/([a-z_]+)/')
ANY_PROJECT = re.compile(r'^\s*#\s*include\s*[<"]cuset/')
TORCH = re.compile(r'^\s*#\s*include\s*<torch/')
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cuh"}


def python_imports(evaluator: pathlib.Path) -> list:
    """Imports of a project module that lives in another folder than the importer's and not in PY_USES."""
    owner = {}  # module name -> its folder, relative to evaluator/
    for path in evaluator.rglob("*.py"):
        owner.setdefault(path.stem, set()).add(path.parent.relative_to(evaluator).as_posix())
    found = []
    for path in sorted(evaluator.rglob("*.py")):
        folder = path.parent.relative_to(evaluator).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = PY_IMPORT.match(line)
            if not m:
                continue
            module = m.group(1) or m.group(2)
            homes = owner.get(module)
            if not homes or folder in homes:
                continue
            if not homes & PY_USES.get(folder, set()):
                found.append(f"{path}:{number}: imports '{module}' of {', '.join(sorted(homes))}; the Python of {folder} may not")
    return found


def main(root: pathlib.Path) -> int:
    evaluator = root / "evaluator"
    problems = []
    for path in sorted(evaluator.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(evaluator)
        stage = rel.parts[0]
        if stage not in STAGE_USES:
            problems.append(f"{path}: folder evaluator/{stage}/ is not a known stage (add it to {__file__} and docs/ARCHITECTURE.md)")
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) != stage and m.group(1) not in STAGE_USES[stage]:
                problems.append(f"{path}:{number}: stage '{stage}' may not include stage '{m.group(1)}'")
            if stage == "sim" and ANY_PROJECT.match(line):
                problems.append(f"{path}:{number}: the simulator runtime includes nothing of the project (not even common/): it is linked into candidates")
            if TORCH.match(line) and rel.as_posix() not in ("problem/src/torch_reference.cpp", "candidate/src/library_call.cpp"):
                problems.append(f"{path}:{number}: includes LibTorch; only problem/src/torch_reference.cpp and candidate/src/library_call.cpp may")
    problems += python_imports(evaluator)
    for folder in sorted({p.parent for p in evaluator.rglob("*") if p.suffix in SOURCE_SUFFIXES}):
        count = sum(1 for p in folder.iterdir() if p.suffix in SOURCE_SUFFIXES)
        if count > MAX_SOURCES_PER_FOLDER:
            problems.append(f"{folder}: {count} source files, more than {MAX_SOURCES_PER_FOLDER}: split the stage")
    for p in problems:
        print(p)
    print(f"evaluator layering: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
