#!/usr/bin/env python3
"""Which torch/CUDA names a load_inline build declares, for each header a solution may include: the
real torch headers (the project's torch, compiled with g++ as load_inline's cpp_sources are) against
the recorder's stand-in (evaluator/kernelbench/standin), in the same two translation units load_inline
makes (docs/kernelbench-solutions.md "The build environment"):

  cpp_sources   `#include <torch/extension.h>` first (load_inline prepends it)
  cuda_sources  `#include <torch/types.h>`, `<cuda.h>`, `<cuda_runtime.h>` first (load_inline prepends them)

Each (unit, header) pair is one file with one line per name; a name is declared when its line
compiles. Exit status 1 when the stand-in declares a name the real headers do not, or the reverse.
The real side compiles torch's headers (about 15 s a file); `--stand-in-only --expect FILE` checks the
stand-in against a table written by an earlier full run (`--write FILE`).

usage: header_declarations.py --torch-include DIR --cuda-include DIR --shim-include DIR [--pch HEADER]
                              [--jobs N] [--stand-in-only --expect FILE] [--write FILE]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

# A use of each name that compiles exactly when the name is declared (a type, a function, a macro).
NAMES = {
    "C10_CUDA_KERNEL_LAUNCH_CHECK": "#ifndef C10_CUDA_KERNEL_LAUNCH_CHECK\n#error undeclared\n#endif",
    "C10_CUDA_CHECK": "#ifndef C10_CUDA_CHECK\n#error undeclared\n#endif",
    "AT_CUDA_CHECK": "#ifndef AT_CUDA_CHECK\n#error undeclared\n#endif",
    "c10::cuda::getCurrentCUDAStream": "using T = decltype(c10::cuda::getCurrentCUDAStream());",
    "at::cuda::getCurrentCUDAStream": "using T = decltype(at::cuda::getCurrentCUDAStream());",
    "at::cuda::getDefaultCUDAStream": "using T = decltype(at::cuda::getDefaultCUDAStream());",
    "at::cuda::CUDAStream": "using T = at::cuda::CUDAStream;",
    "c10::cuda::CUDAGuard": "using T = c10::cuda::CUDAGuard;",
    "c10::cuda::OptionalCUDAGuard": "using T = c10::cuda::OptionalCUDAGuard;",
    "at::cuda::CUDAGuard": "using T = at::cuda::CUDAGuard;",
    "at::cuda::OptionalCUDAGuard": "using T = at::cuda::OptionalCUDAGuard;",
    "at::cuda::CUDAStreamGuard": "using T = at::cuda::CUDAStreamGuard;",
    "at::cuda::getCurrentDeviceProperties": "using T = decltype(at::cuda::getCurrentDeviceProperties());",
    "cudaStream_t": "using T = cudaStream_t;",
    "cudaGetLastError": "using T = decltype(cudaGetLastError());",
    "cudaMemsetAsync": "using T = decltype(&cudaMemsetAsync);",
    "torch::Tensor": "using T = torch::Tensor;",
    "at::Tensor": "using T = at::Tensor;",
    "TORCH_CHECK": "#ifndef TORCH_CHECK\n#error undeclared\n#endif",
}

UNITS = {
    "cpp_sources": "#include <torch/extension.h>\n",
    "cuda_sources": "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n",
}

HEADERS = [None, "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAGuard.h", "c10/cuda/CUDAStream.h", "c10/cuda/CUDAException.h",
           "ATen/cuda/Exceptions.h"]


def unit_source(unit, header):
    text = UNITS[unit] + (f"#include <{header}>\n" if header else "")
    lines = {}
    for i, (name, use) in enumerate(NAMES.items()):
        text += f"namespace check_{i} {{\n"
        start = text.count("\n") + 1
        text += use + "\n"
        for line in range(start, text.count("\n") + 1):
            lines[line] = name
        text += "}\n"
    return text, lines


def declared(flags, unit, header, work):
    text, lines = unit_source(unit, header)
    path = os.path.join(work, f"{unit}-{(header or 'none').replace('/', '_')}.cpp")
    with open(path, "w") as f:
        f.write(text)
    run = subprocess.run(["g++", "-std=c++20", "-fsyntax-only", "-w", "-fmax-errors=0", *flags, path], capture_output=True, text=True)
    failed = {lines[int(m.group(1))] for m in re.finditer(re.escape(path) + r":(\d+):\d+: error", run.stderr) if int(m.group(1)) in lines}
    if run.returncode != 0 and not failed:
        sys.exit(f"header_declarations: {path} failed to compile for a reason other than a name:\n{run.stderr[:3000]}")
    return sorted(n for n in NAMES if n not in failed)


def table(flags, jobs):
    with tempfile.TemporaryDirectory() as work, concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        keys = [(u, h) for u in UNITS for h in HEADERS]
        futures = {k: pool.submit(declared, flags, k[0], k[1], work) for k in keys}
        return {f"{u} + {h or '(nothing)'}": futures[(u, h)].result() for u, h in keys}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--torch-include", required=True)
    p.add_argument("--cuda-include", required=True)
    p.add_argument("--shim-include", required=True)
    p.add_argument("--pch", help="the header the host build force-includes (-include), as host_build.cpp does")
    p.add_argument("--python-include", default="")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--stand-in-only", action="store_true")
    p.add_argument("--expect")
    p.add_argument("--write")
    a = p.parse_args()

    shim = ["-I" + a.shim_include, "-I" + a.cuda_include] + (["-include", a.pch] if a.pch else [])
    stand_in = table(shim, a.jobs)
    if a.stand_in_only:
        with open(a.expect) as f:
            real = json.load(f)
    else:
        python_include = a.python_include or subprocess.run(
            [sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"], capture_output=True, text=True).stdout.strip()
        real = table(["-I" + a.torch_include, "-I" + os.path.join(a.torch_include, "torch/csrc/api/include"), "-I" + a.cuda_include,
                      "-I" + python_include, "-DTORCH_API_INCLUDE_EXTENSION_H", "-DTORCH_EXTENSION_NAME=check"], a.jobs)
        if a.write:
            with open(a.write, "w") as f:
                json.dump(real, f, indent=1)
                f.write("\n")
    differences = 0
    for key, names in real.items():
        extra = sorted(set(stand_in[key]) - set(names))
        missing = sorted(set(names) - set(stand_in[key]))
        status = "same" if not extra and not missing else "DIFFERS"
        differences += bool(extra or missing)
        print(f"{key:52} {status}" + (f"  stand-in only: {', '.join(extra)}" if extra else "") +
              (f"  torch only: {', '.join(missing)}" if missing else ""))
    print(f"{len(real) - differences} passed, {differences} failed")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
