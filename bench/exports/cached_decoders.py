"""Decoders exported with their key/value cache as LLM exports for ONNX Runtime write them,
and an attention block whose input declares no shape. For bench/RESULTS.md.

usage: /usr/bin/python3 bench/exports/cached_decoders.py DIR [NAME ...]
  heads_from_shape  2 layers, d 512, 8 heads: each head's width taken from the activation's
                    shape, the scores scaled by the square root of q's width (opset 14)
  gpt2_cached       GPT-2's layout: one c_attn split in three, learned positions from the
                    cache's length, a causal mask cut from tril (opset 14; also seq 1 and opset 17)
  llama_cached      RMSNorm, rotary embeddings gathered by position_ids, 8 query heads over 2
                    key/value heads (repeat_kv after the cache), SwiGLU (opset 14; also 17)
  shapeless         Q, K and V linears and softmax attention, the input's shape removed
Each cached decoder has inputs input_ids [batch, seq], attention_mask [batch, total] and
past.i.k/v [batch, heads, past, width], outputs logits and present.i.k/v [batch, heads, total, width],
exported at seq 2 (or 1), past 5.
"""
import math
import os
import sys

import onnx
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_like import RMSNorm, rotate_half  # noqa: E402


class WidthFromShapeLayer(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.ln1, self.ln2 = h, nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def split(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.h, d // self.h).transpose(1, 2)

    def forward(self, x, mask, pk, pv):
        y = self.ln1(x)
        q, k, v = self.split(self.q(y)), self.split(self.k(y)), self.split(self.v(y))
        k, v = torch.cat([pk, k], 2), torch.cat([pv, v], 2)
        a = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5) + mask
        a = torch.softmax(a, -1) @ v
        b, h, t, dh = a.shape
        x = x + self.o(a.transpose(1, 2).reshape(b, t, h * dh))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x)))), k, v


class Gpt2Layer(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.ln1, self.ln2 = h, nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def split(self, x):
        return x.view(x.size()[:-1] + (self.h, x.size(-1) // self.h)).permute(0, 2, 1, 3)

    def forward(self, x, mask, pk, pv):
        q, k, v = self.c_attn(self.ln1(x)).split(x.size(-1), dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        k, v = torch.cat([pk, k], -2), torch.cat([pv, v], -2)
        a = torch.matmul(q, k.transpose(-1, -2)) / (float(v.size(-1)) ** 0.5)
        qlen, klen = q.size(-2), k.size(-2)
        causal = torch.tril(torch.ones(klen, klen, dtype=torch.bool))[klen - qlen : klen, :klen]
        a = torch.softmax(torch.where(causal, a, torch.tensor(-1e4)) + mask, -1) @ v
        a = a.permute(0, 2, 1, 3).contiguous()
        x = x + self.o(a.view(a.size()[:-2] + (a.size(-2) * a.size(-1),)))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x)))), k, v


class LlamaLayer(nn.Module):
    def __init__(self, d, heads, kv_heads=2, hidden=704):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.q, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.k, self.v = (nn.Linear(d, kv_heads * self.hd, bias=False) for _ in range(2))
        self.gate, self.up = (nn.Linear(d, hidden, bias=False) for _ in range(2))
        self.down = nn.Linear(hidden, d, bias=False)

    def repeat_kv(self, x):
        b, h, t, hd = x.shape
        n = self.heads // self.kv_heads
        return x[:, :, None, :, :].expand(b, h, n, t, hd).reshape(b, h * n, t, hd)

    def forward(self, x, mask, pk, pv, cos, sin):
        y = self.n1(x)
        b, t, d = y.shape
        q = self.q(y).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k(y).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(y).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = torch.cat([pk, k], 2), torch.cat([pv, v], 2)
        a = torch.softmax(q @ self.repeat_kv(k).transpose(2, 3) / math.sqrt(self.hd) + mask, -1)
        x = x + self.o((a @ self.repeat_kv(v)).transpose(1, 2).reshape(b, t, d))
        h = self.n2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h)), k, v


class CachedDecoder(nn.Module):
    def __init__(self, kind, d, heads, layers=2, vocab=1000, positions=512):
        super().__init__()
        self.kind, self.hd = kind, d // heads
        self.emb, self.pos = nn.Embedding(vocab, d), nn.Embedding(positions, d)
        make = {"heads_from_shape": WidthFromShapeLayer, "gpt2_cached": Gpt2Layer, "llama_cached": LlamaLayer}[kind]
        self.layers = nn.ModuleList(make(d, heads) for _ in range(layers))
        self.head = nn.Linear(d, vocab, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(positions).float(), inv)
        self.register_buffer("cos", torch.cat((freqs, freqs), -1).cos())
        self.register_buffer("sin", torch.cat((freqs, freqs), -1).sin())

    def forward(self, ids, attention_mask, *past):
        past_len, t = past[0].size(-2), ids.size(-1)
        x = self.emb(ids)
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -1e4
        extra = ()
        if self.kind == "gpt2_cached":
            x = x + self.pos(torch.arange(past_len, past_len + t, dtype=torch.long).unsqueeze(0))
        if self.kind == "llama_cached":
            positions = torch.arange(past_len, past_len + t)
            extra = (self.cos[positions][None, None], self.sin[positions][None, None])
            total = attention_mask.shape[1]
            mask = mask + torch.full((t, total), -1e4).triu(total - t + 1)[None, None]
        presents = []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, mask, past[2 * i], past[2 * i + 1], *extra)
            presents += [k, v]
        return (self.head(x), *presents)


def export_cached(path, kind, seq=2, opset=14):
    torch.manual_seed(0)
    d, heads, kv_heads = (512, 8, 8) if kind == "heads_from_shape" else (256, 4, 4) if kind == "gpt2_cached" else (256, 8, 2)
    model, layers, past = CachedDecoder(kind, d, heads).eval(), 2, 5
    args = (torch.randint(0, 1000, (1, seq)), torch.ones(1, past + seq, dtype=torch.int64))
    args += tuple(torch.rand(1, kv_heads, past, d // heads) for _ in range(2 * layers))
    names = [f"past.{i}.{kv}" for i in range(layers) for kv in "kv"]
    presents = [f"present.{i}.{kv}" for i in range(layers) for kv in "kv"]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
            "logits": {0: "batch", 1: "seq"}}
    axes.update({n: {0: "batch", 2: "past"} for n in names})
    axes.update({n: {0: "batch", 2: "total"} for n in presents})
    torch.onnx.export(model, args, path, opset_version=opset, input_names=["input_ids", "attention_mask"] + names,
                      output_names=["logits"] + presents, dynamic_axes=axes)


class Attention(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(d, d) for _ in range(3))

    def forward(self, x):
        return torch.softmax(self.q(x) @ self.k(x).transpose(-1, -2) / 8.0, -1) @ self.v(x)


def export_shapeless(path):
    torch.manual_seed(0)
    torch.onnx.export(Attention().eval(), torch.randn(1, 16, 64), path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "b", 1: "t"}, "y": {0: "b", 1: "t"}}, opset_version=14)
    model = onnx.load(path)
    for value in list(model.graph.input) + list(model.graph.output):
        value.type.tensor_type.ClearField("shape")
    del model.graph.value_info[:]
    onnx.save(model, path)


def main():
    out, names = sys.argv[1], sys.argv[2:] or ["heads_from_shape", "gpt2_cached", "llama_cached", "shapeless"]
    os.makedirs(out, exist_ok=True)
    for name in names:
        if name == "shapeless":
            export_shapeless(os.path.join(out, "shapeless.onnx"))
            continue
        export_cached(os.path.join(out, f"{name}.onnx"), name)
        if name != "heads_from_shape":
            export_cached(os.path.join(out, f"{name}_seq1.onnx"), name, seq=1)
            export_cached(os.path.join(out, f"{name}_opset17.onnx"), name, opset=17)


if __name__ == "__main__":
    main()
