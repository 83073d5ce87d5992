#!/usr/bin/python3
"""Patterns as users write them in PyTorch, exported with torch.onnx.export, each with its
hand merge written as a second PyTorch module that computes the same (same weights).

Usage: patterns.py OUT_DIR [NAME ...] [--opset N] [--seed S]
Writes OUT_DIR/NAME.onnx and OUT_DIR/NAME.hand.onnx for each pattern (all by default;
no hand file where the export is already the best form anyone here knows: GPT-2's block,
whose Q, K and V are one product, and the encoder) and prints the names written. Run
with /usr/bin/python3 (Debian's torch 1.13).
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRAMLP(nn.Module):
    """A base linear layer with a low-rank adapter, base(x) + 2 B(A(x)), then ReLU and a
    second layer; the hand merge folds the adapter into the base weight."""

    def __init__(self, d=768, r=16):
        super().__init__()
        self.base, self.out = nn.Linear(d, d), nn.Linear(d, d)
        self.a, self.b = nn.Linear(d, r, bias=False), nn.Linear(r, d, bias=False)

    def forward(self, x):
        return self.out(torch.relu(self.base(x) + 2.0 * self.b(self.a(x))))

    def merged(self):
        m = nn.Sequential(nn.Linear(self.base.in_features, self.base.out_features), nn.ReLU(), self.out)
        with torch.no_grad():
            m[0].weight.copy_(self.base.weight + 2.0 * self.b.weight @ self.a.weight)
            m[0].bias.copy_(self.base.bias)
        return m


class LoRAAttention(nn.Module):
    """Q, K and V projections each with a low-rank adapter, then attention over 12 heads;
    the hand merge folds the adapters and joins the projections into one."""

    def __init__(self, d=768, r=16, heads=12):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.adapters = nn.ModuleList(nn.Sequential(nn.Linear(d, r, bias=False), nn.Linear(r, d, bias=False))
                                      for _ in range(3))

    def attend(self, q, k, v):
        b, t, d = q.shape
        split = lambda z: z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        a = torch.softmax(split(q) @ split(k).transpose(-1, -2) / 8.0, -1)
        return self.o((a @ split(v)).transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        q, k, v = (p(x) + 2.0 * a(x) for p, a in zip((self.q, self.k, self.v), self.adapters))
        return self.attend(q, k, v)

    def merged(self):
        return _MergedAttention(self, [p.weight + 2.0 * a[1].weight @ a[0].weight
                                       for p, a in zip((self.q, self.k, self.v), self.adapters)])


class QKVAttention(LoRAAttention):
    """Separate Q, K and V nn.Linear layers, then attention; the hand merge is one
    projection to 3d split in three."""

    def forward(self, x):
        return self.attend(self.q(x), self.k(x), self.v(x))

    def merged(self):
        return _MergedAttention(self, [self.q.weight, self.k.weight, self.v.weight])


class _MergedAttention(nn.Module):
    def __init__(self, src, weights):
        super().__init__()
        self.src = src
        self.qkv = nn.Linear(weights[0].shape[1], 3 * weights[0].shape[0])
        with torch.no_grad():
            self.qkv.weight.copy_(torch.cat(weights, 0))
            self.qkv.bias.copy_(torch.cat([self.src.q.bias, self.src.k.bias, self.src.v.bias]))

    def forward(self, x):
        q, k, v = self.qkv(x).split(self.qkv.out_features // 3, -1)  # static sizes: one Split
        return self.src.attend(q, k, v)


class Heads(nn.Module):
    """Eight heads Linear(256,128)-ReLU-Linear(128,16) on one input, their outputs joined
    by torch.cat (or returned apart); the hand merge is one wide first layer, split for
    the second layers (a block-diagonal second layer does 8x the work and measured slower)."""

    def __init__(self, n=8, d=256, h=128, o=16, joined=True):
        super().__init__()
        self.joined = joined
        self.first = nn.ModuleList(nn.Linear(d, h) for _ in range(n))
        self.second = nn.ModuleList(nn.Linear(h, o) for _ in range(n))

    def forward(self, x):
        return self.join([s(torch.relu(f(x))) for f, s in zip(self.first, self.second)])

    def join(self, outs):
        return torch.cat(outs, -1) if self.joined else tuple(outs)

    def merged(self):
        return _MergedHeads(self)


class _MergedHeads(nn.Module):
    def __init__(self, src):
        super().__init__()
        self.src, self.h = src, src.first[0].out_features
        self.first = nn.Linear(src.first[0].in_features, len(src.first) * self.h)
        with torch.no_grad():
            self.first.weight.copy_(torch.cat([f.weight for f in src.first], 0))
            self.first.bias.copy_(torch.cat([f.bias for f in src.first]))

    def forward(self, x):
        hidden = torch.relu(self.first(x)).split(self.h, -1)
        return self.src.join([s(h) for s, h in zip(self.src.second, hidden)])


class Experts(nn.Module):
    """A dense mixture of four experts Linear(512,1024)-ReLU-Linear(1024,512), weighted by
    a softmax gate; the hand merge is one wide first layer and one stacked second layer
    of the gate-scaled hidden units."""

    def __init__(self, n=4, d=512, h=1024):
        super().__init__()
        self.gate = nn.Linear(d, n)
        self.first = nn.ModuleList(nn.Linear(d, h) for _ in range(n))
        self.second = nn.ModuleList(nn.Linear(h, d) for _ in range(n))

    def forward(self, x):
        g = torch.softmax(self.gate(x), -1)
        return sum(g[..., i:i + 1] * s(torch.relu(f(x))) for i, (f, s) in enumerate(zip(self.first, self.second)))

    def merged(self):
        return _MergedExperts(self)


class _MergedExperts(nn.Module):
    def __init__(self, src):
        super().__init__()
        self.gate, self.n, self.h = src.gate, len(src.first), src.first[0].out_features
        self.first = nn.Linear(src.first[0].in_features, self.n * self.h)
        self.second_w = nn.Parameter(torch.cat([s.weight.t() for s in src.second], 0).detach().clone())
        self.second_b = nn.Parameter(torch.stack([s.bias for s in src.second], 0).detach().clone())
        with torch.no_grad():
            self.first.weight.copy_(torch.cat([f.weight for f in src.first], 0))
            self.first.bias.copy_(torch.cat([f.bias for f in src.first]))

    def forward(self, x):
        g = torch.softmax(self.gate(x), -1)
        hidden = torch.relu(self.first(x)).view(*x.shape[:-1], self.n, self.h) * g.unsqueeze(-1)
        return hidden.reshape(*x.shape[:-1], self.n * self.h) @ self.second_w + g @ self.second_b


class GRUCell(nn.Module):
    """A GRU cell written gate by gate (separate linear layers per gate), over 6 steps;
    the hand merge computes each side's three gates in one product."""

    def __init__(self, d=256, steps=6):
        super().__init__()
        self.steps = steps
        self.wx = nn.ModuleList(nn.Linear(d, d) for _ in range(3))
        self.wh = nn.ModuleList(nn.Linear(d, d) for _ in range(3))

    def step(self, x, h, wx, wh):
        (xr, xz, xn), (hr, hz, hn) = wx(x), wh(h)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        return (1 - z) * torch.tanh(xn + r * hn) + z * h

    def forward(self, x):
        h = torch.zeros_like(x[0])
        split = lambda layers: (lambda v: [layer(v) for layer in layers])
        for t in range(self.steps):
            h = self.step(x[t], h, split(self.wx), split(self.wh))
        return h

    def merged(self):
        return _MergedGRU(self)


class _MergedGRU(nn.Module):
    def __init__(self, src):
        super().__init__()
        self.src = src
        d = self.d = src.wx[0].in_features
        self.wx, self.wh = nn.Linear(d, 3 * d), nn.Linear(d, 3 * d)
        with torch.no_grad():
            for mine, theirs in ((self.wx, src.wx), (self.wh, src.wh)):
                mine.weight.copy_(torch.cat([l.weight for l in theirs], 0))
                mine.bias.copy_(torch.cat([l.bias for l in theirs]))

    def forward(self, x):
        h = torch.zeros_like(x[0])
        for t in range(self.src.steps):
            h = self.src.step(x[t], h, lambda v: self.wx(v).split(self.d, -1), lambda v: self.wh(v).split(self.d, -1))
        return h


class DetectionHeads(nn.Module):
    """Class and box 3x3 convolutions on one feature map; the hand merge is one
    convolution split in two."""

    def __init__(self, c=256, classes=90, boxes=36):
        super().__init__()
        self.cls, self.box = nn.Conv2d(c, classes, 3, padding=1), nn.Conv2d(c, boxes, 3, padding=1)

    def forward(self, x):
        return self.cls(x), self.box(x)

    def merged(self):
        return _MergedConvs(self)


class _MergedConvs(nn.Module):
    def __init__(self, src):
        super().__init__()
        self.sizes = [src.cls.out_channels, src.box.out_channels]
        self.conv = nn.Conv2d(src.cls.in_channels, sum(self.sizes), 3, padding=1)
        with torch.no_grad():
            self.conv.weight.copy_(torch.cat([src.cls.weight, src.box.weight], 0))
            self.conv.bias.copy_(torch.cat([src.cls.bias, src.box.bias]))

    def forward(self, x):
        return tuple(self.conv(x).split(self.sizes, 1))


class Tower(nn.Module):
    """One MLP tower (512-1024-512) applied to two inputs; the hand merge runs it once on
    the two stacked."""

    def __init__(self, d=512, h=1024):
        super().__init__()
        self.tower = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, d))

    def forward(self, a, b):
        return self.tower(a), self.tower(b)

    def merged(self):
        return _StackedTower(self.tower)


class _StackedTower(nn.Module):
    def __init__(self, tower):
        super().__init__()
        self.tower = tower

    def forward(self, a, b):
        return tuple(self.tower(torch.cat([a, b], 0)).split([a.shape[0], b.shape[0]], 0))


class GPT2Block(nn.Module):
    """A GPT-2 block as GPT-2 writes it (d 768, 12 heads, causal): layer norm, Q, K and V
    as one product, attention, output projection, residual; layer norm, MLP 768-3072-768
    with GELU's tanh form, residual. No hand merge: its products are joined already."""

    def __init__(self, d=768, heads=12, tokens=32):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("causal", torch.tril(torch.ones(tokens, tokens)).bool())

    def split_heads(self, t):
        b, n, d = t.shape
        return t.view(b, n, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x):
        q, k, v = self.c_attn(self.ln1(x)).split(x.shape[-1], -1)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        scores = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
        scores = scores.masked_fill(~self.causal, float("-inf"))
        a = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(x.shape)
        x = x + self.c_proj(a)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln2(x)), approximate="tanh"))

    def merged(self):
        return None


class Encoder12(nn.Module):
    """nn.TransformerEncoder, 12 layers of 768 wide, 12 heads, MLP 3072 (BERT-base's
    shape), each layer's weights its own (a deep copy of one layer would export one set of
    weights shared by all twelve). No hand merge: Q, K and V are one product already."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 12)
        with torch.no_grad():
            for p in self.encoder.parameters():
                p.add_(torch.randn_like(p) * 0.02)

    def forward(self, x):
        return self.encoder(x)

    def merged(self):
        return None


class EinsumAttention(nn.Module):
    """Self-attention as research code often writes it, with torch.einsum (d 256, 8 heads;
    ONNX Einsum "bhid,bhjd->bhij" and "bhij,bhjd->bhid"), then an output projection and a
    residual; the hand merge is the same module with its einsums written as matmuls."""

    def __init__(self, d=256, heads=8, use_einsum=True):
        super().__init__()
        self.heads, self.use_einsum = heads, use_einsum
        self.qkv, self.out = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
        if self.use_einsum:
            scores = torch.einsum("bhid,bhjd->bhij", q, k) / (d // self.heads) ** 0.5
            a = torch.einsum("bhij,bhjd->bhid", scores.softmax(-1), v)
        else:
            a = (q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5).softmax(-1) @ v
        return x + self.out(a.transpose(1, 2).reshape(b, n, d))

    def merged(self):
        m = EinsumAttention(self.out.in_features, self.heads, use_einsum=False)
        m.load_state_dict(self.state_dict())
        return m


# name -> (module factory, input shapes)
PATTERNS = {
    "lora_mlp_t1": (LoRAMLP, [(1, 1, 768)]),
    "lora_mlp_2d": (LoRAMLP, [(1, 768)]),
    "lora_mlp_t32": (LoRAMLP, [(1, 32, 768)]),
    "lora_attention_t1": (LoRAAttention, [(1, 1, 768)]),
    "lora_attention_t32": (LoRAAttention, [(1, 32, 768)]),
    "qkv_attention_t32": (QKVAttention, [(1, 32, 768)]),
    "heads_cat": (Heads, [(32, 256)]),
    "heads_apart": (lambda: Heads(joined=False), [(32, 256)]),
    "experts": (Experts, [(16, 512)]),
    "experts_t32": (Experts, [(1, 32, 512)]),
    "gru_cell": (GRUCell, [(6, 1, 256)]),
    "detection_heads": (DetectionHeads, [(1, 256, 32, 32)]),
    "tower_two_inputs": (Tower, [(16, 512), (16, 512)]),
    "gpt2_block": (GPT2Block, [(1, 32, 768)]),
    "encoder12_t128": (Encoder12, [(1, 128, 768)]),
    "einsum_attention_t64": (EinsumAttention, [(1, 64, 256)]),
}


def export(module, shapes, path, opset):
    inputs = tuple(torch.randn(*s) for s in shapes)
    names = [f"x{i}" for i in range(len(shapes))]
    torch.onnx.export(module.eval(), inputs, path, opset_version=opset, input_names=names)
    return inputs


def check_hand_merge(name, module, hand, shapes):
    inputs = tuple(torch.randn(*s) for s in shapes)
    with torch.no_grad():
        want, got = module(*inputs), hand(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got):
        assert torch.allclose(w, g, rtol=1e-4, atol=1e-4), f"{name}: the hand merge differs"


def main(patterns=PATTERNS, opset=13, seed=0):
    """Exports `patterns` (name -> (factory, input shapes)) as the usage says; `opset`
    and `seed` are the flags' defaults."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--opset", type=int, default=opset)
    parser.add_argument("--seed", type=int, default=seed)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.names or patterns:
        factory, shapes = patterns[name]
        torch.manual_seed(args.seed)
        module = factory().eval()
        hand = module.merged()
        export(module, shapes, os.path.join(args.out_dir, f"{name}.onnx"), args.opset)
        if hand is not None:
            check_hand_merge(name, module, hand.eval(), shapes)
            export(hand, shapes, os.path.join(args.out_dir, f"{name}.hand.onnx"), args.opset)
        print(name)


if __name__ == "__main__":
    main()
