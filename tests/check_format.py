#!/usr/bin/env python3
"""Every C++ source of the project is formatted as .clang-format says (clang-format 14).

Usage: check_format.py ROOT [--fix]. Prints each file clang-format would change and exits 1; with --fix
rewrites them instead. Data is left alone: problems/ (candidate kernels whose line numbers expectations
name) and test fixtures (kernels and solutions judged as written). Exits 77 (ctest: skipped) when no
clang-format 14 is installed.
"""
import pathlib
import shutil
import subprocess
import sys

SUFFIXES = {".cpp", ".hpp", ".h"}
SKIP_TOP = {"build", "problems", "runs", "data", ".venv", ".deps", ".git"}
SKIP_PARTS = {"fixtures", "corpus", "solutions", "node_modules"}


def sources(root: pathlib.Path):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix not in SUFFIXES or not path.is_file() or rel.parts[0] in SKIP_TOP or rel.parts[0].startswith("build"):
            continue
        if SKIP_PARTS.intersection(rel.parts[:-1]):
            continue
        yield path


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    fix = "--fix" in sys.argv
    tool = shutil.which("clang-format-14") or shutil.which("clang-format")
    if not tool or "version 14." not in subprocess.run([tool, "--version"], capture_output=True, text=True).stdout:
        print("check_format: clang-format 14 is not installed (apt-get install clang-format-14); skipped")
        return 77
    style = f"--style=file:{root / '.clang-format'}"
    files = list(sources(root))
    if fix:
        subprocess.run([tool, style, "-i", *map(str, files)], check=True)
        return 0
    unformatted = []
    for path in files:
        formatted = subprocess.run([tool, style, str(path)], capture_output=True, check=True).stdout
        if formatted != path.read_bytes():
            unformatted.append(path.relative_to(root))
    for path in unformatted:
        print(f"{path}: not formatted (run: python3 tests/check_format.py . --fix)")
    print(f"format: {len(files)} files, {len(unformatted)} not formatted")
    return 1 if unformatted else 0


if __name__ == "__main__":
    sys.exit(main())
