"""A two-layer GPT as users write one, exported with dynamic batch and sequence axes.

usage: /usr/bin/python3 bench/exports/gpt_dynamic.py OUT.onnx [OPSET]
d 384, 6 heads, separate Q, K and V nn.Linear layers viewed as heads by
`view(b, t, h, d // h)` with `b, t, d = x.shape` (a Reshape to a target computed from
Shape(x), which ONNX 1.12's inference cannot type), LayerNorm and a GELU MLP; exported by
torch.onnx.export at OPSET (default 13) from an input of [1, 64, 384]. For
bench/RESULTS.md, "Dynamic-axes exports".
"""
import math
import sys

import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = (f(x).view(b, t, self.heads, hd).transpose(1, 2) for f in (self.q, self.k, self.v))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd), -1)
        return self.o((a @ v).transpose(1, 2).reshape(b, t, d))


class Layer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.att, self.ln2 = nn.LayerNorm(d), Attention(d, heads), nn.LayerNorm(d)
        self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.att(self.ln1(x))
        return x + self.proj(nn.functional.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, d=384, heads=6, layers=2):
        super().__init__()
        self.layers = nn.ModuleList(Layer(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.ln(x)


def main():
    torch.manual_seed(0)
    opset = int(sys.argv[2]) if len(sys.argv) > 2 else 13
    axes = {0: "batch", 1: "seq"}
    torch.onnx.export(Gpt().eval(), (torch.randn(1, 64, 384),), sys.argv[1], opset_version=opset, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": axes, "y": axes})


if __name__ == "__main__":
    main()
