#!/usr/bin/env python3
"""PEFT as the reference for the C++ trainer's LoRA adapters (issue #51; docs/trainer.md "Verified
against"): adapters PEFT makes, adapters the trainer writes, and merging.

  peft_adapters.py make OUT_ROOT IDS_JSON
      A tiny Llama base made by transformers (N(0, 0.3) weights) saved to OUT_ROOT/base, an adapter on
      it made by PEFT (rank 4, alpha 8, all seven projections, B not zero) saved to OUT_ROOT/adapter,
      and the base with it merged by merge_and_unload; prints {"adapter": logits, "merged": logits}.
  peft_adapters.py logits BASE ADAPTER IDS_JSON
      PeftModel.from_pretrained(BASE, ADAPTER): prints its logits.

Exits 77 (ctest's skip) when transformers or peft cannot be imported."""
import json
import sys

try:
    import peft
    import torch
    import transformers
except ImportError as e:
    print(f"SKIP: no transformers or peft in this Python ({e}); scripts/install-deps.sh installs them")
    sys.exit(77)

transformers.logging.set_verbosity_error()
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def logits(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].tolist()


def load_base(path):
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="eager")
    return model.eval()


def main():
    mode = sys.argv[1]
    if mode == "make":
        root, ids = sys.argv[2], json.load(open(sys.argv[3]))
        config = transformers.AutoConfig.for_model("llama", vocab_size=61, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                                   num_attention_heads=4, num_key_value_heads=2, rope_theta=10000.0, max_position_embeddings=128)
        torch.manual_seed(3)
        base = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        with torch.no_grad():
            for p in base.parameters():
                p.normal_(0.0, 0.3)
        base.save_pretrained(f"{root}/base")
        model = peft.get_peft_model(load_base(f"{root}/base"),
                                    peft.LoraConfig(r=4, lora_alpha=8, target_modules=TARGETS, lora_dropout=0.0, init_lora_weights=False))
        with torch.no_grad():  # B (and A) well away from zero: the adapter changes the logits by O(1)
            for name, p in model.named_parameters():
                if "lora_" in name:
                    p.normal_(0.0, 0.2)
        model.eval()
        model.save_pretrained(f"{root}/adapter")
        out = {"adapter": logits(model, ids), "base": logits(load_base(f"{root}/base"), ids)}
        out["merged"] = logits(model.merge_and_unload(), ids)
        json.dump(out, sys.stdout)
    elif mode == "logits":
        base, adapter, ids = sys.argv[2], sys.argv[3], json.load(open(sys.argv[4]))
        model = peft.PeftModel.from_pretrained(load_base(base), adapter).eval()
        json.dump(logits(model, ids), sys.stdout)
    else:
        sys.exit(f"unknown mode {mode}")


main()
