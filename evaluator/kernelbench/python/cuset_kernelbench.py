#!/usr/bin/env python3
"""CuSeT's KernelBench Python, one entry point (docs/kernelbench.md; process roles:
evaluator/sandbox/include/cuset/evaluator/sandbox/process_roles.hpp). Every module of this folder is
reached from here, and the evaluator starts only this file:

  trace    one KernelBench problem file into a CuSeT problem (kb_tracer.py; `cuset import kernelbench`)
  capture  a solution's load_inline sources (kb_recorder.py; the translator's first run)
  record   a solution's launch plan per size set (kb_recorder.py; the translator's second run)
  serve    the recorder kept warm: one fork per capture or record request (kb_server.py)

Each command takes the arguments its module's parser names (`cuset_kernelbench.py COMMAND --help`).
"""
import sys

USAGE = "usage: cuset_kernelbench.py {trace,capture,record,serve} ..."


def run(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "trace":
        import kb_tracer
        sys.argv = [argv[0]] + argv[2:]
        kb_tracer.main()
    elif command in ("capture", "record"):
        import kb_recorder
        kb_recorder.main()
    elif command == "serve":
        import kb_recorder
        kb_recorder.serve()
    else:
        print(USAGE, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    run(sys.argv)
