#!/usr/bin/python3
"""An independent Llama/Qwen2 forward pass in PyTorch (Debian's python3-torch), for cross-checking the
C++ model. Reads config.json and model.safetensors (parsed here from the format's definition), runs the
token ids given on the command line, and prints the logits as JSON.

Usage: llama_forward.py CHECKPOINT_DIR ID [ID ...]"""
import json
import math
import struct
import sys

import torch

DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16, "F64": torch.float64}


def load_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    data = raw[8 + n :]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        buf = bytearray(data[begin:end])
        t = torch.frombuffer(buf, dtype=DTYPES[entry["dtype"]]).reshape(entry["shape"])
        tensors[name] = t.to(torch.float64)  # reference in double precision
    return tensors


def rms_norm(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rope(x, theta):  # x: (heads, T, D), positions 0..T-1
    heads, T, D = x.shape
    out = torch.empty_like(x)
    for pos in range(T):
        for i in range(D // 2):
            angle = pos / (theta ** (2 * i / D))
            c, s = math.cos(angle), math.sin(angle)
            a, b = x[:, pos, i].clone(), x[:, pos, i + D // 2].clone()
            out[:, pos, i] = a * c - b * s
            out[:, pos, i + D // 2] = b * c + a * s
    return out


def forward(cfg, w, ids):
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    D = C // H
    eps, theta = cfg["rms_norm_eps"], cfg["rope_theta"]
    T = len(ids)
    x = w["model.embed_tokens.weight"][ids]  # (T, C)
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)

        def proj(name):
            y = h @ w[p + f"self_attn.{name}.weight"].T
            bias = w.get(p + f"self_attn.{name}.bias")
            return y + bias if bias is not None else y

        q = rope(proj("q_proj").reshape(T, H, D).transpose(0, 1), theta)
        k = rope(proj("k_proj").reshape(T, Hkv, D).transpose(0, 1), theta)
        v = proj("v_proj").reshape(T, Hkv, D).transpose(0, 1)
        outs = []
        for head in range(H):
            kv = head // (H // Hkv)
            scores = q[head] @ k[kv].T / math.sqrt(D)
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
            scores = scores.masked_fill(mask, float("-inf"))
            outs.append(torch.softmax(scores, -1) @ v[kv])
        attn = torch.stack(outs, 0).transpose(0, 1).reshape(T, H * D)
        x = x + attn @ w[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = h @ w[p + "mlp.gate_proj.weight"].T
        up = h @ w[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else w["lm_head.weight"]
    return x @ head.T


def main():
    directory, ids = sys.argv[1], [int(a) for a in sys.argv[2:]]
    cfg = json.load(open(f"{directory}/config.json"))
    weights = load_safetensors(f"{directory}/model.safetensors")
    print(json.dumps(forward(cfg, weights, ids).tolist()))


if __name__ == "__main__":
    main()
