#!/usr/bin/env python3
"""Hugging Face transformers as the reference for the C++ model (issue #51; docs/trainer.md "Verified
against"): tiny models with random weights made by transformers itself, and checkpoints read back by it.

  transformers_logits.py make SPEC OUT_ROOT
      SPEC: {"families": {NAME: config.json fields}, "lengths": [7, 80], "ids": [...]}. For each family:
      AutoModelForCausalLM.from_config (float32, eager attention), weights drawn N(0, 0.3) (logits of
      O(1): a convention mismatch shows), save_pretrained to OUT_ROOT/NAME (safetensors), and prints
      {NAME: {LENGTH: logits of ids[:LENGTH], "loss", "grad_norm", "greedy"}} as JSON: the mean next-token
      cross-entropy of the batch [ids[0:16], ids[16:32]] and the norm of its gradient over every
      parameter, and the 32 tokens generate() picks greedily after ids[:5].
  transformers_logits.py logits SPEC DIR...
      Each DIR loaded with AutoModelForCausalLM.from_pretrained; prints {DIR: {LENGTH: logits}}.

Exits 77 (ctest's skip) when transformers cannot be imported."""
import json
import sys

try:
    import torch
    import transformers
except ImportError as e:
    print(f"SKIP: no transformers in this Python ({e}); scripts/install-deps.sh installs it")
    sys.exit(77)

transformers.logging.set_verbosity_error()


def load(directory):
    return transformers.AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32, attn_implementation="eager").eval()


def logits_of(model, ids, lengths):
    out = {}
    with torch.no_grad():
        for n in lengths:
            out[str(n)] = model(torch.tensor([ids[:n]])).logits[0].tolist()
    return out


def training_step(model, ids):
    batch = torch.tensor([ids[0:16], ids[16:32]])
    model.zero_grad()
    loss = model(input_ids=batch, labels=batch).loss
    loss.backward()
    norm = torch.sqrt(sum(p.grad.double().pow(2).sum() for p in model.parameters() if p.grad is not None))
    model.zero_grad()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def greedy(model, prompt):
    model.generation_config.eos_token_id = None  # 32 tokens whatever they are
    ids = torch.tensor([prompt])
    with torch.no_grad():  # every prompt token attended (an inferred mask would drop the pad id's)
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=32, do_sample=False)
    return out[0, len(prompt):].tolist()


def main():
    mode, spec_path = sys.argv[1], sys.argv[2]
    spec = json.load(open(spec_path))
    result = {}
    if mode == "make":
        root = sys.argv[3]
        for name, fields in spec["families"].items():
            fields = dict(fields)
            model_type = fields.pop("model_type")
            config = transformers.AutoConfig.for_model(model_type, **fields)
            torch.manual_seed(11)
            model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32, attn_implementation="eager")
            with torch.no_grad():
                for p in model.parameters():
                    p.normal_(0.0, 0.3)
            model.save_pretrained(f"{root}/{name}")
            # Each measurement on the model as loaded: dynamic NTK's frequencies in transformers keep
            # the longest length a model instance has seen, so one forward would change the next's.
            result[name] = logits_of(load(f"{root}/{name}"), spec["ids"], spec["lengths"])
            result[name].update(training_step(load(f"{root}/{name}"), spec["ids"]))
            result[name]["greedy"] = greedy(load(f"{root}/{name}"), spec["ids"][:5])
    elif mode == "logits":
        for directory in sys.argv[3:]:
            result[directory] = logits_of(load(directory), spec["ids"], spec["lengths"])
    else:
        sys.exit(f"unknown mode {mode}")
    json.dump(result, sys.stdout)


main()
