"""Exports as users write them, then passed through what users pass files through first.

usage: /usr/bin/python3 bench/exports/other_tools.py OUT_DIR
Writes, each with dynamic batch and sequence axes:
  block_keep_init.onnx  two pre-norm transformer blocks (d 128, 4 heads, opset 14) exported
                        with keep_initializers_as_inputs=True, as older exports are
  bert_like.onnx        a BERT-style encoder (word, position and type embeddings, the
                        position ids a buffer sliced to the input's length; 2 layers,
                        d 256; opset 17)
  bert_like_inferred.onnx  the same through onnx.shape_inference (data propagation on)
  gpt2_like.onnx        a GPT-2 written as Hugging Face's (Conv1D as addmm on flattened
                        rows, a causal mask sliced from a bool buffer, tied embeddings;
                        opset 13)
For bench/RESULTS.md, "Files that went through other tools first"; taso-opt's own output
of bert_like.onnx is the third file there.
"""
import math
import os
import sys

import onnx
import onnx.shape_inference
import torch
import torch.nn as nn

D, HEADS, VOCAB, LAYERS = 256, 4, 1000, 2


def heads(x, h):
    return x.view(x.size()[:-1] + (h, x.size(-1) // h)).permute(0, 2, 1, 3)


def merge_heads(a):
    a = a.permute(0, 2, 1, 3).contiguous()
    return a.view(a.size()[:-2] + (a.size(-2) * a.size(-1),))


class PreNormBlock(nn.Module):
    def __init__(self, d=128, h=4):
        super().__init__()
        self.h = h
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        y = self.n1(x)
        q, k, v = (heads(f(y), self.h) for f in (self.q, self.k, self.v))
        a = torch.softmax(q @ k.transpose(-1, -2) / 8.0, -1) @ v
        x = x + self.o(merge_heads(a))
        return x + self.down(nn.functional.gelu(self.up(self.n2(x))))


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.up, self.down = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x, mask):
        q, k, v = (heads(f(x), HEADS) for f in (self.q, self.k, self.v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(D // HEADS) + mask
        x = self.ln1(self.o(merge_heads(torch.softmax(scores, -1) @ v)) + x)
        return self.ln2(self.down(nn.functional.gelu(self.up(x))) + x)


class BertLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.words, self.positions, self.types = nn.Embedding(VOCAB, D), nn.Embedding(64, D), nn.Embedding(2, D)
        self.ln = nn.LayerNorm(D)
        self.layers = nn.ModuleList(BertLayer() for _ in range(LAYERS))
        self.pool = nn.Linear(D, D)
        self.register_buffer("position_ids", torch.arange(64).expand((1, -1)))

    def forward(self, input_ids, attention_mask, token_type_ids):
        t = input_ids.size(1)
        x = self.words(input_ids) + self.positions(self.position_ids[:, :t]) + self.types(token_type_ids)
        x = self.ln(x)
        mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pool(x[:, 0]))


class Conv1D(nn.Module):
    """Hugging Face's GPT-2 linear layer: addmm on the rows flattened."""

    def __init__(self, n_out, n_in):
        super().__init__()
        self.n_out = n_out
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        out = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return out.view(x.size()[:-1] + (self.n_out,))


class Gpt2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.attn, self.proj = Conv1D(3 * D, D), Conv1D(D, D)
        self.fc, self.out = Conv1D(4 * D, D), Conv1D(D, 4 * D)
        self.register_buffer("causal", torch.tril(torch.ones(64, 64, dtype=torch.bool)).view(1, 1, 64, 64))

    def forward(self, x):
        q, k, v = (heads(z, HEADS) for z in self.attn(self.ln1(x)).split(D, dim=2))
        w = q @ k.transpose(-1, -2) / math.sqrt(D // HEADS)
        n = k.size(-2)
        w = torch.where(self.causal[:, :, n - q.size(-2):n, :n], w, torch.tensor(torch.finfo(w.dtype).min))
        x = x + self.proj(merge_heads(torch.softmax(w, -1) @ v))
        h = self.fc(self.ln2(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + self.out(h)


class Gpt2Like(nn.Module):
    def __init__(self):
        super().__init__()
        self.words, self.positions = nn.Embedding(VOCAB, D), nn.Embedding(64, D)
        self.blocks = nn.ModuleList(Gpt2Block() for _ in range(LAYERS))
        self.ln = nn.LayerNorm(D)

    def forward(self, input_ids):
        x = self.words(input_ids) + self.positions(torch.arange(0, input_ids.size(-1)).unsqueeze(0))
        for block in self.blocks:
            x = block(x)
        return self.ln(x) @ self.words.weight.t()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    tokens = {0: "batch", 1: "seq"}
    path = lambda name: os.path.join(out, name)
    blocks = nn.Sequential(PreNormBlock(), PreNormBlock()).eval()
    torch.onnx.export(blocks, torch.randn(1, 16, 128), path("block_keep_init.onnx"), opset_version=14,
                      keep_initializers_as_inputs=True, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "b", 1: "t"}, "y": {0: "b", 1: "t"}})
    ids = torch.randint(0, VOCAB, (1, 16))
    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(BertLike().eval(), (ids, torch.ones_like(ids), torch.zeros_like(ids)), path("bert_like.onnx"),
                      opset_version=17, input_names=names, output_names=["last_hidden_state", "pooler_output"],
                      dynamic_axes={**{n: tokens for n in names}, "last_hidden_state": tokens,
                                    "pooler_output": {0: "batch"}})
    inferred = onnx.shape_inference.infer_shapes(onnx.load(path("bert_like.onnx")), data_prop=True)
    onnx.save(inferred, path("bert_like_inferred.onnx"))
    torch.onnx.export(Gpt2Like().eval(), (ids,), path("gpt2_like.onnx"), opset_version=13, input_names=["input_ids"],
                      output_names=["logits"], dynamic_axes={"input_ids": tokens, "logits": tokens})


if __name__ == "__main__":
    main()
