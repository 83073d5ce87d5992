#!/usr/bin/python3
"""Exports with torch.einsum that no one here wrote, as users export them (dynamic axes,
opset 14), for bench/RESULTS.md's "Einsum as matrix products":

  einsum_self    four pre-LN blocks of einsum self-attention ("b h i d, b h j d -> b h i j"),
                 d 256, 8 heads, MLP 1024 (dynamic b, n)
  einsum_cross   Stable Diffusion's (CompVis LDM) cross-attention: heads folded into the
                 batch, "b i d, b j d -> b i j", d 320 over a 77x768 context (dynamic b, n)
  maxvit_t       torchvision's MaxViT-T (44 Einsums in its relative-position attention;
                 dynamic batch)
  maxvit_static  the same at a fixed 1x3x224x224

Usage: einsum_models.py OUT_DIR [NAME ...]   (run with /usr/bin/python3: Debian's torch 1.13)
"""
import os
import sys

import torch
import torch.nn as nn
import torchvision


class SelfAttentionBlock(nn.Module):
    def __init__(self, d=256, h=8):
        super().__init__()
        self.h, self.qkv, self.o, self.ln = h, nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
        q, k, v = [t.reshape(b, n, self.h, d // self.h).transpose(1, 2) for t in (q, k, v)]
        a = torch.einsum("b h i d, b h j d -> b h i j", q, k) * (d // self.h) ** -0.5
        o = torch.einsum("b h i j, b h j d -> b h i d", a.softmax(-1), v)
        x = x + self.o(o.transpose(1, 2).reshape(b, n, d))
        return x + self.ff(x)


class CrossAttention(nn.Module):
    def __init__(self, d=320, h=8, ctx=768):
        super().__init__()
        self.h = h
        self.q, self.k, self.v = nn.Linear(d, d, bias=False), nn.Linear(ctx, d, bias=False), nn.Linear(ctx, d, bias=False)
        self.o = nn.Linear(d, d)

    def forward(self, x, c):
        b, n, d = x.shape
        h = self.h
        q, k, v = [t.reshape(b, -1, h, d // h).permute(0, 2, 1, 3).reshape(b * h, -1, d // h)
                   for t in (self.q(x), self.k(c), self.v(c))]
        sim = torch.einsum("b i d, b j d -> b i j", q, k) * (d // h) ** -0.5
        out = torch.einsum("b i j, b j d -> b i d", sim.softmax(-1), v)
        return self.o(out.reshape(b, h, n, d // h).permute(0, 2, 1, 3).reshape(b, n, d))


def main():
    out_dir, names = sys.argv[1], sys.argv[2:] or ["einsum_self", "einsum_cross", "maxvit_t", "maxvit_static"]
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        torch.manual_seed(0)
        path = os.path.join(out_dir, f"{name}.onnx")
        if name == "einsum_self":
            model, args, names_in = nn.Sequential(*[SelfAttentionBlock() for _ in range(4)]), (torch.randn(1, 128, 256),), ["x"]
            dynamic = {"x": {0: "b", 1: "n"}}
        elif name == "einsum_cross":
            model, args, names_in = CrossAttention(), (torch.randn(1, 1024, 320), torch.randn(1, 77, 768)), ["x", "c"]
            dynamic = {"x": {0: "b", 1: "n"}, "c": {0: "b"}}
        else:
            model, args, names_in = torchvision.models.maxvit_t(), (torch.randn(1, 3, 224, 224),), ["x"]
            dynamic = {"x": {0: "batch"}} if name == "maxvit_t" else None
        torch.onnx.export(model.eval(), args, path, opset_version=14, input_names=names_in, dynamic_axes=dynamic)
        print(name)


if __name__ == "__main__":
    main()
