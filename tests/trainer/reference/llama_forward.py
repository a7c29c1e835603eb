#!/usr/bin/env python3
"""An independent Llama/Qwen2/Qwen3 forward pass (with Hugging Face's rope_scaling types) in PyTorch (the project's pinned torch), for cross-checking the
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


def frequencies(cfg, D, T):
    """Rotary frequency of each dimension pair, and the factor on cos/sin, for a T-token forward,
    following the definitions of Hugging Face's rope_scaling types (one pair at a time, in floats)."""
    theta = cfg["rope_theta"]
    base = [theta ** (-2 * i / D) for i in range(D // 2)]
    r = cfg.get("rope_scaling") or {}
    kind = r.get("rope_type", r.get("type", "default"))
    original = r.get("original_max_position_embeddings") or cfg.get("max_position_embeddings", 2048)
    if kind == "default":
        return base, 1.0
    factor = r["factor"]
    if kind == "linear":
        return [f / factor for f in base], 1.0
    if kind == "dynamic":
        if T <= original:
            return base, 1.0
        grown = theta * ((factor * T / original) - (factor - 1)) ** (D / (D - 2))
        return [grown ** (-2 * i / D) for i in range(D // 2)], 1.0
    if kind == "llama3":
        low, high = r["low_freq_factor"], r["high_freq_factor"]
        out = []
        for f in base:
            wavelength = 2 * math.pi / f
            if wavelength < original / high:
                out.append(f)
            elif wavelength > original / low:
                out.append(f / factor)
            else:
                t = (original / wavelength - low) / (high - low)
                out.append((1 - t) * f / factor + t * f)
        return out, 1.0
    if kind == "yarn":
        def rotations_dim(n):
            return D * math.log(original / (n * 2 * math.pi)) / (2 * math.log(theta))
        lo = max(math.floor(rotations_dim(r.get("beta_fast", 32))), 0)
        hi = min(math.ceil(rotations_dim(r.get("beta_slow", 1))), D - 1)
        if lo == hi:
            hi += 0.001
        out = []
        for i, f in enumerate(base):
            interpolate = min(max((i - lo) / (hi - lo), 0.0), 1.0)  # 0: keep f, 1: f / factor
            out.append(f * (1 - interpolate) + f / factor * interpolate)

        def mscale(scale, m=1.0):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0
        if r.get("attention_factor") is not None:
            attention = r["attention_factor"]
        elif r.get("mscale") and r.get("mscale_all_dim"):
            attention = mscale(factor, r["mscale"]) / mscale(factor, r["mscale_all_dim"])
        else:
            attention = mscale(factor)
        return out, attention
    raise ValueError(f"rope type {kind}")


def rope(x, freqs, scale):  # x: (heads, T, D), positions 0..T-1
    heads, T, D = x.shape
    out = torch.empty_like(x)
    for pos in range(T):
        for i in range(D // 2):
            angle = pos * freqs[i]
            c, s = scale * math.cos(angle), scale * math.sin(angle)
            a, b = x[:, pos, i].clone(), x[:, pos, i + D // 2].clone()
            out[:, pos, i] = a * c - b * s
            out[:, pos, i + D // 2] = b * c + a * s
    return out


def forward(cfg, w, ids):
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    D = cfg.get("head_dim") or C // H
    eps = cfg["rms_norm_eps"]
    T = len(ids)
    freqs, scale = frequencies(cfg, D, T)
    qk_norm = cfg.get("model_type") == "qwen3"  # Qwen3: RMSNorm over each head's q and k, before RoPE
    x = w["model.embed_tokens.weight"][ids]  # (T, C)
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)

        def proj(name):
            y = h @ w[p + f"self_attn.{name}.weight"].T
            bias = w.get(p + f"self_attn.{name}.bias")
            return y + bias if bias is not None else y

        q = proj("q_proj").reshape(T, H, D)
        k = proj("k_proj").reshape(T, Hkv, D)
        if qk_norm:
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q = rope(q.transpose(0, 1), freqs, scale)
        k = rope(k.transpose(0, 1), freqs, scale)
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
