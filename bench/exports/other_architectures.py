"""Architectures beyond the encoders, decoders and CNNs of the other scripts, written as
PyTorch users write them and exported with torch.onnx.export, dynamic axes, no grad mode
turned off (PyTorch 1.13's fast path of nn.TransformerEncoderLayer cannot be exported under
torch.no_grad()). For bench/RESULTS.md.

usage: /usr/bin/python3 bench/exports/other_architectures.py DIR [NAME ...] [--static]
  seq2seq       nn.Transformer (2 + 2 layers, d 256) between token embeddings and a vocabulary
                head, causal target mask: src [batch, src_len], tgt [batch, tgt_len] (opset 14)
  whisper_like  two Conv1d over mel frames, pre-norm encoder, decoder with cross-attention,
                the head tied to the embedding: mel [batch, 80, frames], tokens [batch, n]
  unet_like     a diffusion UNet's blocks: GroupNorm, SiLU, a timestep embedding added per
                channel, attention over positions, nearest upsampling: x [batch, 4, 32, 32],
                t [batch] (opset 17)
  t5_like       RMS norm without mean, linears without bias, a relative position bias from an
                embedding: ids [batch, n]
  wav2vec_like  Conv1d feature extractor with GroupNorm, a weight-normed grouped positional
                Conv1d, encoder: wav [batch, samples]
  tv_lraspp, tv_deeplabv3_mbv3, tv_fcn_resnet50, tv_convnext_tiny: torchvision's (untrained),
                x [batch, 3, h, w] at 224 x 224, the segmentation maps as the output (opset 17)
  tv_r3d_18     torchvision's video ResNet (3-D convolutions): x [batch, 3, 8, 112, 112]
Exported at src 64 and tgt 16 tokens, 1000 frames and 16 tokens, 32 x 32, 128 tokens and
16000 samples: --static writes each with no dynamic axes (NAME.static.onnx), at those sizes.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class Seq2Seq(nn.Module):  # BART/Marian-like: nn.Transformer with embeddings
    def __init__(s, vocab=1000, d=256, heads=4, layers=2):
        super().__init__()
        s.emb = nn.Embedding(vocab, d)
        s.t = nn.Transformer(d, heads, layers, layers, 4 * d, dropout=0.0, batch_first=True)
        s.head = nn.Linear(d, vocab, bias=False)
    def forward(s, src, tgt):
        n = tgt.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        return s.head(s.t(s.emb(src), s.emb(tgt), tgt_mask=mask))

class WhisperLike(nn.Module):
    def __init__(s, mels=80, d=256, heads=4, layers=2, vocab=1000):
        super().__init__()
        s.c1 = nn.Conv1d(mels, d, 3, padding=1); s.c2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        s.pos = nn.Parameter(torch.randn(1, 1500, d) * 0.02)
        s.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, heads, 4 * d, 0.0, "gelu", batch_first=True, norm_first=True), layers)
        s.emb = nn.Embedding(vocab, d)
        s.dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(d, heads, 4 * d, 0.0, "gelu", batch_first=True, norm_first=True), layers)
    def forward(s, mel, tokens):
        x = F.gelu(s.c2(F.gelu(s.c1(mel)))).transpose(1, 2)
        x = s.enc(x + s.pos[:, : x.shape[1]])
        n = tokens.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        y = s.dec(s.emb(tokens), x, tgt_mask=mask)
        return y @ s.emb.weight.t()

class ResBlock(nn.Module):
    def __init__(s, c, tdim):
        super().__init__()
        s.n1 = nn.GroupNorm(8, c); s.c1 = nn.Conv2d(c, c, 3, padding=1)
        s.t = nn.Linear(tdim, c)
        s.n2 = nn.GroupNorm(8, c); s.c2 = nn.Conv2d(c, c, 3, padding=1)
    def forward(s, x, temb):
        h = s.c1(F.silu(s.n1(x))) + s.t(F.silu(temb))[:, :, None, None]
        return x + s.c2(F.silu(s.n2(h)))

class SpatialAttn(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.n = nn.GroupNorm(8, c); s.q = nn.Conv2d(c, c, 1); s.k = nn.Conv2d(c, c, 1); s.v = nn.Conv2d(c, c, 1); s.o = nn.Conv2d(c, c, 1)
    def forward(s, x):
        b, c, h, w = x.shape
        y = s.n(x)
        q = s.q(y).reshape(b, c, h * w).transpose(1, 2); k = s.k(y).reshape(b, c, h * w); v = s.v(y).reshape(b, c, h * w).transpose(1, 2)
        a = torch.softmax(q @ k / math.sqrt(c), -1)
        return x + s.o((a @ v).transpose(1, 2).reshape(b, c, h, w))

class TinyUNet(nn.Module):  # diffusion UNet-like
    def __init__(s, c=64, tdim=128):
        super().__init__()
        s.tdim = tdim
        s.tmlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        s.inp = nn.Conv2d(4, c, 3, padding=1)
        s.d1 = ResBlock(c, tdim); s.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
        s.d2 = ResBlock(2 * c, tdim); s.a = SpatialAttn(2 * c); s.m = ResBlock(2 * c, tdim)
        s.up = nn.Conv2d(2 * c, c, 3, padding=1)
        s.u1 = ResBlock(c, tdim); s.out = nn.Conv2d(c, 4, 3, padding=1)
    def forward(s, x, t):
        half = s.tdim // 2
        f = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        e = t[:, None].float() * f[None]
        temb = s.tmlp(torch.cat([torch.sin(e), torch.cos(e)], -1))
        h = s.d1(s.inp(x), temb)
        skip = h
        h = s.m(s.a(s.d2(s.down(h), temb)), temb)
        h = s.up(F.interpolate(h, scale_factor=2.0, mode="nearest")) + skip
        return s.out(s.u1(h, temb))

class T5Like(nn.Module):  # RMS norm without mean, no biases, relative position bias
    def __init__(s, vocab=1000, d=256, heads=4, layers=2, buckets=32):
        super().__init__()
        s.h = heads; s.d = d
        s.emb = nn.Embedding(vocab, d); s.rel = nn.Embedding(buckets, heads)
        s.buckets = buckets
        s.qkvo = nn.ModuleList([nn.ModuleList([nn.Linear(d, d, bias=False) for _ in range(4)]) for _ in range(layers)])
        s.ff = nn.ModuleList([nn.ModuleList([nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)]) for _ in range(layers)])
        s.g1 = nn.ParameterList([nn.Parameter(torch.ones(d)) for _ in range(layers)])
        s.g2 = nn.ParameterList([nn.Parameter(torch.ones(d)) for _ in range(layers)])
    def norm(s, x, g):
        return g * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))
    def forward(s, ids):
        x = s.emb(ids); b, n, _ = x.shape
        pos = torch.arange(n)
        rel = (pos[None, :] - pos[:, None]).abs().clamp(max=s.buckets - 1)
        bias = s.rel(rel).permute(2, 0, 1)[None]
        for (q, k, v, o), (f1, f2), g1, g2 in zip(s.qkvo, s.ff, s.g1, s.g2):
            y = s.norm(x, g1)
            sp = lambda t: t.view(b, n, s.h, -1).transpose(1, 2)
            a = torch.softmax(sp(q(y)) @ sp(k(y)).transpose(-1, -2) + bias, -1) @ sp(v(y))
            x = x + o(a.transpose(1, 2).reshape(b, n, s.d))
            x = x + f2(F.relu(f1(s.norm(x, g2))))
        return x

class Wav2VecLike(nn.Module):
    def __init__(s, d=256, heads=4, layers=2):
        super().__init__()
        s.fe = nn.ModuleList([nn.Conv1d(1, 128, 10, 5, bias=False), nn.Conv1d(128, 128, 3, 2, bias=False), nn.Conv1d(128, 128, 2, 2, bias=False)])
        s.gn = nn.GroupNorm(128, 128)
        s.ln = nn.LayerNorm(128); s.proj = nn.Linear(128, d)
        s.posconv = nn.utils.weight_norm(nn.Conv1d(d, d, 16, padding=8, groups=8), dim=2)
        s.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, heads, 4 * d, 0.0, "gelu", batch_first=True), layers)
    def forward(s, wav):
        x = wav[:, None]
        for i, c in enumerate(s.fe):
            x = c(x)
            if i == 0: x = s.gn(x)
            x = F.gelu(x)
        x = s.proj(s.ln(x.transpose(1, 2)))
        p = F.gelu(s.posconv(x.transpose(1, 2))[:, :, :-1]).transpose(1, 2)
        return s.enc(x + p)


class MainOutput(nn.Module):
    """A torchvision segmentation model's "out" map alone (the models return a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        y = self.model(x)
        return y["out"] if isinstance(y, dict) else y


def torchvision_model(name):
    tv = torchvision.models
    seg = dict(weights=None, weights_backbone=None)
    return MainOutput({
        "tv_lraspp": lambda: tv.segmentation.lraspp_mobilenet_v3_large(**seg),
        "tv_deeplabv3_mbv3": lambda: tv.segmentation.deeplabv3_mobilenet_v3_large(**seg, aux_loss=False),
        "tv_fcn_resnet50": lambda: tv.segmentation.fcn_resnet50(**seg, aux_loss=False),
        "tv_convnext_tiny": lambda: tv.convnext_tiny(weights=None),
        "tv_r3d_18": lambda: tv.video.r3d_18(weights=None),
    }[name]())


def inputs_of(name):
    """Each model's factory, example inputs, input names, dynamic axes and opset."""
    if name.startswith("tv_"):
        image = {0: "batch", 2: "h", 3: "w"}
        video = name == "tv_r3d_18"
        return (lambda: torchvision_model(name), (torch.randn(1, 3, 8, 112, 112) if video else torch.randn(1, 3, 224, 224),),
                ["x"], {"x": {0: "batch"} if video else image}, 17)
    return {
        "seq2seq": (Seq2Seq, (torch.randint(0, 1000, (1, 64)), torch.randint(0, 1000, (1, 16))), ["src", "tgt"],
                    {"src": {0: "batch", 1: "src_len"}, "tgt": {0: "batch", 1: "tgt_len"}}, 14),
        "whisper_like": (WhisperLike, (torch.randn(1, 80, 1000), torch.randint(0, 1000, (1, 16))), ["mel", "tokens"],
                         {"mel": {0: "batch", 2: "frames"}, "tokens": {0: "batch", 1: "n"}}, 14),
        "unet_like": (TinyUNet, (torch.randn(1, 4, 32, 32), torch.tensor([10])), ["x", "t"],
                      {"x": {0: "batch"}, "t": {0: "batch"}}, 17),
        "t5_like": (T5Like, (torch.randint(0, 1000, (1, 128)),), ["ids"], {"ids": {0: "batch", 1: "n"}}, 14),
        "wav2vec_like": (Wav2VecLike, (torch.randn(1, 16000),), ["wav"], {"wav": {0: "batch", 1: "samples"}}, 14),
    }[name]


NAMES = ["seq2seq", "whisper_like", "unet_like", "t5_like", "wav2vec_like", "tv_lraspp", "tv_deeplabv3_mbv3",
         "tv_fcn_resnet50", "tv_convnext_tiny", "tv_r3d_18"]

if __name__ == "__main__":
    out_dir, args = sys.argv[1], sys.argv[2:]
    static = "--static" in args
    os.makedirs(out_dir, exist_ok=True)
    for name in [a for a in args if a != "--static"] or NAMES:
        factory, example, names, axes, opset = inputs_of(name)
        torch.manual_seed(0)
        model = factory().eval()
        path = os.path.join(out_dir, f"{name}.static.onnx" if static else f"{name}.onnx")
        torch.onnx.export(model, example, path, input_names=names, output_names=["out"],
                          dynamic_axes=None if static else axes, opset_version=opset)
        print(name)
