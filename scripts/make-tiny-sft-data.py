#!/usr/bin/env python3
"""Builds data/sft-tiny.jsonl from the bundled problems' reference solutions: several instruction
phrasings per problem, each answered by the solution (launch manifest + kernel) in a fenced block.
Deterministic; rerun after adding problems: .venv/bin/python scripts/make-tiny-sft-data.py > data/sft-tiny.jsonl"""
import glob
import json
import os

import yaml

PHRASINGS = [
    "Write a CUDA kernel for this problem.\n\n{desc}\n\nInputs: {ins}\nOutputs: {outs}\n"
    "Answer with the kernel and its /*@cuset launch manifest.",
    "Implement {name} as a CUDA kernel. {desc}",
    "Problem {id}: {desc}\nGive a correct, fast CUDA implementation with a launch manifest.",
    "CUDA task: {desc} Inputs are {ins}; produce {outs}.",
]

root = os.path.join(os.path.dirname(__file__), "..", "problems")
for path in sorted(glob.glob(os.path.join(root, "level*", "*", "problem.yaml"))):
    problem = yaml.safe_load(open(path))
    folder = os.path.dirname(path)
    pid = f"level{problem['level']}/{problem['name']}"

    def tensors(section):
        return ", ".join(f"{n} ({t['dtype']}, shape [{', '.join(map(str, t['shape']))}])" for n, t in problem[section].items())

    for solution in sorted(glob.glob(os.path.join(folder, "solutions", "*.cu"))):
        if os.path.basename(solution).startswith("bad_"):
            continue
        source = open(solution).read().strip()
        for phrasing in PHRASINGS:
            instruction = phrasing.format(desc=problem["description"], ins=tensors("inputs"), outs=tensors("outputs"),
                                          name=problem["name"], id=pid)
            print(json.dumps({"instruction": instruction, "response": f"```cuda\n{source}\n```"}))
