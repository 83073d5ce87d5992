"""A LLaMA-style decoder as users write one, exported with dynamic batch and sequence axes.

usage: /usr/bin/python3 bench/exports/llama_like.py OUT.onnx [OPSET] [LAYERS] [--static T] [--wide]
d 512, 8 query heads sharing 2 key/value heads (grouped-query attention, K and V
repeated per group as `repeat_kv` does), rotary position embeddings (rotate_half: Slice,
Neg, Concat), RMSNorm written as Pow, ReduceMean, Add, Sqrt, Div, a causal mask, and a
SwiGLU MLP (`down(silu(gate(x)) * up(x))`, hidden 1408); no biases, as in LLaMA. Exported
by torch.onnx.export at OPSET (default 14) from an input of [1, 64, 512]; `--static T`
exports a fixed [1, T, 512] input instead. `--wide`: d 2048, 16 query heads over 4 key/value
heads, hidden 5632, from an input of [1, 8, 2048] (16 layers: 0.7B parameters, 2.9 GB as
external data, for bench/peak_memory.sh). For bench/RESULTS.md.
"""
import math
import sys

import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        return self.weight * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary(t, hd, device=None):
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
    freqs = torch.outer(torch.arange(t).float(), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


class Attention(nn.Module):
    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    def repeat_kv(self, x):
        b, h, t, hd = x.shape
        n = self.heads // self.kv_heads
        return x[:, :, None, :, :].expand(b, h, n, t, hd).reshape(b, h * n, t, hd)

    def forward(self, x, cos, sin, mask):
        b, t, d = x.shape
        q = self.q(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.hd) + mask
        a = torch.softmax(scores, dim=-1)
        return self.o((a @ v).transpose(1, 2).reshape(b, t, d))


class Layer(nn.Module):
    def __init__(self, d, heads, kv_heads, hidden):
        super().__init__()
        self.norm1, self.att = RMSNorm(d), Attention(d, heads, kv_heads)
        self.norm2 = RMSNorm(d)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x, cos, sin, mask):
        x = x + self.att(self.norm1(x), cos, sin, mask)
        h = self.norm2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    def __init__(self, layers, d=512, heads=8, kv_heads=2, hidden=1408):
        super().__init__()
        self.hd = d // heads
        self.layers = nn.ModuleList(Layer(d, heads, kv_heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(d)

    def forward(self, x):
        t = x.shape[1]
        cos, sin = rotary(t, self.hd)
        mask = torch.full((t, t), float("-inf")).triu(1)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.norm(x)


def main():
    args = sys.argv[1:]
    static = None
    if "--static" in args:
        i = args.index("--static")
        static = int(args[i + 1])
        del args[i : i + 2]
    wide = "--wide" in args
    if wide:
        args.remove("--wide")
    out = args[0]
    opset = int(args[1]) if len(args) > 1 else 14
    layers = int(args[2]) if len(args) > 2 else 2
    torch.manual_seed(0)
    if wide:
        model, d, t = Decoder(layers, d=2048, heads=16, kv_heads=4, hidden=5632).eval(), 2048, 8
    else:
        model, d, t = Decoder(layers).eval(), 512, 64
    x = torch.randn(1, static or t, d)
    axes = None if static else {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    with torch.no_grad():
        torch.onnx.export(model, x, out, opset_version=opset, input_names=["x"], output_names=["y"], dynamic_axes=axes)


if __name__ == "__main__":
    main()
