#!/usr/bin/env python3
"""The same decoder and training step as CuSeT's C++ trainer, in Python PyTorch (the project's pinned torch),
for a side-by-side speed comparison. Prints one JSON line: {"ms_per_step": ...}.
Usage: train_step.py VOCAB HIDDEN INTER LAYERS HEADS KV_HEADS BATCH SEQ STEPS THREADS"""
import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

V, C, I, L, H, HKV, B, T, STEPS, THREADS = map(int, sys.argv[1:11])
torch.set_num_threads(THREADS)  # the C++ side also pins OpenBLAS to one thread; the runner sets OPENBLAS_NUM_THREADS=1 here
torch.manual_seed(0)
D = C // H


class RMSNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(C))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = RMSNorm(), RMSNorm()
        self.q = nn.Linear(C, H * D, bias=True)
        self.k = nn.Linear(C, HKV * D, bias=True)
        self.v = nn.Linear(C, HKV * D, bias=True)
        self.o = nn.Linear(H * D, C, bias=False)
        self.gate = nn.Linear(C, I, bias=False)
        self.up = nn.Linear(C, I, bias=False)
        self.down = nn.Linear(I, C, bias=False)

    def forward(self, x, cos, sin, mask):
        h = self.ln1(x)
        q = rope(self.q(h).view(B, T, H, D).transpose(1, 2), cos, sin)
        k = rope(self.k(h).view(B, T, HKV, D).transpose(1, 2), cos, sin).repeat_interleave(H // HKV, 1)
        v = self.v(h).view(B, T, HKV, D).transpose(1, 2).repeat_interleave(H // HKV, 1)
        s = (q @ k.transpose(2, 3)) / math.sqrt(D)
        s = s.masked_fill(mask, float("-inf"))
        a = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.o(a)
        h = self.ln2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, C)
        self.layers = nn.ModuleList([Layer() for _ in range(L)])
        self.norm = RMSNorm()

    def forward(self, ids):
        inv = 1.0 / (10000 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
        ang = torch.outer(torch.arange(T, dtype=torch.float32), inv)
        ang = torch.cat([ang, ang], -1)
        cos, sin = ang.cos(), ang.sin()
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.norm(x) @ self.embed.weight.T


model = Model()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.01)
ids = torch.randint(0, V, (B, T + 1))
inputs, targets = ids[:, :-1], ids[:, 1:]


def step():
    opt.zero_grad()
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()


for _ in range(3):
    step()
start = time.perf_counter()
for _ in range(STEPS):
    step()
print(json.dumps({"ms_per_step": (time.perf_counter() - start) * 1000 / STEPS}))
