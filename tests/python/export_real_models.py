"""Exports models as a new user's PyTorch code would, each holding operators outside the
optimizer's library, for tests/real_models.sh: a segmentation network (Resize, hard
swish), a video network (3-D convolutions), a recurrent language model (int64 token ids,
an embedding, nn.LSTM), a hand-written transformer decoder block (causal and padding
masks as booleans, Where, Expand) and a small model with Mod, Where, Expand and a Slice
whose bound is computed. Sizes are small so that the self-check runs in seconds.

usage: /usr/bin/python3 export_real_models.py OUTDIR [NAME ...]
Writes OUTDIR/NAME.onnx.
"""
import math
import os
import sys

import torch
import torchvision


def segmentation():
    model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)
    return model, (torch.rand(1, 3, 64, 64) * 2 - 1,)


def video():
    return torchvision.models.video.r3d_18(weights=None), (torch.rand(1, 3, 4, 32, 32) * 2 - 1,)


class LstmLanguageModel(torch.nn.Module):
    def __init__(self, vocab=50, width=32, hidden=48):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.lstm = torch.nn.LSTM(width, hidden, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, ids):
        hidden, _ = self.lstm(self.embed(ids))
        return self.head(torch.relu(hidden))


def language_model():
    return LstmLanguageModel(), (torch.randint(0, 4, (2, 8)),)


class DecoderBlock(torch.nn.Module):
    """Masked self-attention and a feed-forward layer, written out by hand."""

    def __init__(self, width=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)
        self.norm1 = torch.nn.LayerNorm(width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.ff = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(), torch.nn.Linear(4 * width, width))

    def attention(self, x):
        b, t, w = x.shape
        q, k, v = self.qkv(x).split(w, dim=-1)
        q, k, v = (y.reshape(b, t, self.heads, w // self.heads).transpose(1, 2) for y in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(w // self.heads)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        padding = (x.sum(-1) > -1e9)[:, None, None, :]  # a boolean computed from the data
        mask = causal.expand(b, self.heads, t, t) & padding
        scores = torch.where(mask, scores, torch.full_like(scores, -1e4))
        y = torch.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, w))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.ff(self.norm2(x))


def decoder_block():
    return DecoderBlock(), (torch.rand(2, 8, 64) * 2 - 1,)


class ModWhereExpandSlice(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 16)
        self.fc2 = torch.nn.Linear(16, 16)

    def forward(self, x):
        y = torch.relu(self.fc1(x))
        z = torch.fmod(y * 3, 0.7)
        w = torch.where(x > 0, z, y.expand(2, 4, 16)[0])
        n = x.size(1) - 3  # a bound computed from the input's shape
        return self.fc2(w)[:, :n] + self.fc2(torch.relu(w))[:, :n]


def mod_where_expand_slice():
    return ModWhereExpandSlice(), (torch.rand(4, 16) * 2 - 1,)


def swin_tiny():
    """torchvision's Swin Transformer, small: each map padded to a multiple of its window by
    `(w - W % w) % w`, the shifted windows' mask built with ScatterND on Range."""
    from torchvision.models.swin_transformer import SwinTransformer
    model = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                            num_classes=10)
    return model, (torch.rand(1, 3, 40, 40),)


# name -> (builder, opset)
MODELS = {
    "lraspp_mobilenet": (segmentation, 11),
    "r3d_18": (video, 13),
    "lstm_lm": (language_model, 14),
    "decoder_block": (decoder_block, 17),
    "mod_where_slice": (mod_where_expand_slice, 13),
    "swin_tiny": (swin_tiny, 14),
}


def export(name, outdir):
    builder, opset = MODELS[name]
    torch.manual_seed(0)
    model, inputs = builder()
    model.eval()
    path = os.path.join(outdir, name)
    with torch.no_grad():
        torch.onnx.export(model, inputs, path + ".onnx.tmp", opset_version=opset, do_constant_folding=True,
                          input_names=[f"input{i}" for i in range(len(inputs))])
    os.replace(path + ".onnx.tmp", path + ".onnx")  # the .onnx appears last: its presence means complete


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in sys.argv[2:] or list(MODELS):
        export(name, outdir)
        print("exported", name, flush=True)


if __name__ == "__main__":
    main()
