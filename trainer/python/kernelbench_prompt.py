#!/usr/bin/env python3
"""KernelBench's own prompt for each problem, rendered from a KernelBench checkout (docs/prompts.md).

`--prompt kernelbench-native` asks a model exactly what KernelBench asks it: the templates and the
example architectures are read from the user's checkout (src/kernelbench/prompts/prompts.toml and the
files it names, resolved against the checkout's top), and composed the way KernelBench's
prompt_constructor_toml composes them for the CUDA backend: the listed components of the option in
order, each block stripped, joined by newlines, and the placeholders filled once at the end. No text
of KernelBench's is kept in this project.

usage:  kernelbench_prompt.py REQUEST.json
        {"root": KB_ROOT, "option": "one_shot", "problems": [{"id", "source", "precision"}]}
stdout: {"prompts": {id: text}} or {"error": why}
"""
import json
import os
import sys
import tomllib


def block(text):
    return text.strip() + "\n"


def render(cfg, root, option, source, precision):
    backend = cfg["backends"]["cuda"]
    opt = cfg["options"][option]
    shared = cfg.get("shared", {})
    display = backend.get("backend_display", "CUDA")
    common = cfg["templates"]["common"]
    context = {
        "ref_arch_src": source,
        "backend": "CUDA",
        "backend_display": display,
        "problem_statement": shared.get("problem_statement", "").format(backend_display=display),
        "instruction": shared.get("instruction", "").format(backend_display=display),
    }
    levels = cfg.get("precision", {})
    chosen = levels.get(precision or cfg.get("meta", {}).get("default_precision", "fp32"), {})
    context["precision_display"] = chosen.get("precision_display", (precision or "fp32").upper())

    wanted = opt.get("requires_example")
    if wanted:
        entry = block(common["example_entry_template"]).strip()

        def read(rel):
            with open(os.path.join(root, rel)) as f:
                return f.read()

        def one(inp, out, label):
            return entry.format(example_label=label, input_code=read(inp), output_code=read(out), backend_display=display)

        pairs = backend.get("few_shot_examples") if wanted == "few_shot" else None
        if pairs:
            intro = block(common["example_intro_few_shot"]).strip()
            entries = [one(i, o, f"Example {n}:") for n, (i, o) in enumerate(pairs, 1)]
        else:
            intro = block(common["example_intro_one_shot"]).strip()
            arch = backend.get("few_shot_example_arch") or shared.get("few_shot_example_arch")
            entries = [one(arch, backend["one_shot_new_arch"], "Example:")]
        context["examples_intro"] = intro.format(backend_display=display)
        context["examples_entries"] = "\n\n".join(entries).strip()

    parts = []
    for component in opt["components"]:
        if component in ("problem_statement", "instruction"):
            parts.append(context[component])
        elif component.startswith("hardware_"):
            parts.append(block(cfg["templates"]["hardware"][component]))
        else:
            parts.append(block(common[component]))
    text = "\n".join(parts).strip() + "\n"
    return text.format(**context).strip() + "\n"


def main():
    with open(sys.argv[1]) as f:
        request = json.load(f)
    root = request["root"]
    toml_path = os.path.join(root, "src", "kernelbench", "prompts", "prompts.toml")
    try:
        with open(toml_path, "rb") as f:
            cfg = tomllib.load(f)
        prompts = {p["id"]: render(cfg, root, request.get("option", "one_shot"), p["source"], p.get("precision"))
                   for p in request["problems"]}
    except (OSError, KeyError, tomllib.TOMLDecodeError, ValueError, IndexError) as e:
        json.dump({"error": f"{toml_path}: {type(e).__name__}: {e}"}, sys.stdout)
        return
    json.dump({"prompts": prompts}, sys.stdout)


if __name__ == "__main__":
    main()
