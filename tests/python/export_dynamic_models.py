"""Writes small models exported by PyTorch with a dynamic batch axis, at several opsets,
for tests/dynamic_models.sh: what a user gets from torch.onnx.export(..., dynamic_axes=...).

usage: /usr/bin/python3 export_dynamic_models.py OUTDIR
Writes OUTDIR/NAME.onnx for each model below. Opsets above 17 (PyTorch 1.13 exports up to
17) are written by exporting at 17 and rewriting what changed: ReduceMean's axes and
Split's sizes become inputs (opset 18), and the IR version follows the opset.
"""
import os
import sys

import onnx
import onnx.shape_inference
from onnx import helper, numpy_helper
import numpy as np
import torch


class SmallCnn(torch.nn.Module):
    """Two convolutions reading one input (merged by the search), batch norms, a split
    along channels, a mean over the map, and a classifier."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(16)
        self.a = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.b = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.stem(x)))
        y = torch.relu(self.a(x)) + torch.relu(self.b(x))
        left, right = torch.split(y, [8, 8], dim=1)
        y = torch.cat([right, left], dim=1)
        return self.fc(y.mean(dim=(2, 3)))


class SmallMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(32, 64)
        self.l2 = torch.nn.Linear(32, 64)
        self.out = torch.nn.Linear(64, 8)

    def forward(self, x):
        return self.out(torch.relu(self.l1(x)) * torch.sigmoid(self.l2(x)))


class FlattenByView(torch.nn.Module):
    """A convolution, then `view(x.size(0), -1)` into a linear layer: the target shape is
    computed from the batch at run time (Shape, Gather, Concat, Reshape)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(y.view(y.size(0), -1))


class HeadsByView(torch.nn.Module):
    """Q, K and V linear layers on [batch, 8, 48], each viewed as heads by
    `view(b, t, h, d // h)`: the target is concatenated from Shape(x), and ONNX's own
    inference (1.12) cannot tell the view's shape, as it propagates no Div."""

    def __init__(self, d=48, heads=4):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = (torch.nn.Linear(d, d) for _ in range(3))
        self.out = torch.nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = (f(x).view(b, t, self.heads, d // self.heads).transpose(1, 2) for f in (self.q, self.k, self.v))
        a = torch.softmax(q @ k.transpose(-1, -2), -1) @ v
        return self.out(a.transpose(1, 2).reshape(b, t, d))


class ImageSizes(torch.nn.Module):
    """SqueezeNet's stem, exported with dynamic height and width as well: a convolution
    without padding and a pooling window, which no 1x1 image fits."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, stride=2)
        self.pool = torch.nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.a = torch.nn.Conv2d(16, 16, 1)
        self.b = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.stem(x)))
        y = torch.cat([torch.relu(self.a(x)), torch.relu(self.b(x))], 1)
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1))


class ReflectionStem(torch.nn.Module):
    """A style-transfer network's stem, with dynamic height and width: a reflecting pad of
    3, which ONNX's inference lets through at a 1x1 image and ONNX Runtime refuses below 4."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.ReflectionPad2d(3), torch.nn.Conv2d(3, 8, 7),
                                        torch.nn.InstanceNorm2d(8, affine=True), torch.nn.ReLU(),
                                        torch.nn.Conv2d(8, 8, 3, padding=1))

    def forward(self, x):
        return self.body(x)


class AudioStem(torch.nn.Module):
    """A speech model's feature encoder, with a dynamic length (opset 17: LayerNormalization):
    1-D convolutions, which ONNX infers an empty output for at 1 sample, then a linear layer."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Sequential(torch.nn.Conv1d(1, 16, 10, 5), torch.nn.GELU(), torch.nn.Conv1d(16, 16, 3, 2),
                                        torch.nn.GELU())
        self.norm = torch.nn.LayerNorm(16)
        self.proj = torch.nn.Linear(16, 32)

    def forward(self, x):
        return self.proj(self.norm(self.conv(x.unsqueeze(1)).transpose(1, 2)))


class NormMlp(torch.nn.Module):
    """A transformer's feed-forward half: LayerNorm (decomposed below opset 17), a GELU MLP
    and the residual sum, on [batch, 8, 32]. ONNX Runtime's optimizer fuses it into its own
    LayerNormalization, Gelu and residual normalizations."""

    def __init__(self, d=32):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up, self.down = torch.nn.Linear(d, 2 * d), torch.nn.Linear(2 * d, d)
        self.out_norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        return self.out_norm(x + self.down(torch.nn.functional.gelu(self.up(self.norm(x)))))


class PositionsAdded(torch.nn.Module):
    """Position embeddings added to [batch, seq, 32] as BERT adds them: the embeddings of
    the first seq position ids (seq read from the input's shape), then a Linear."""

    def __init__(self, d=32, rows=64):
        super().__init__()
        self.register_buffer("position_ids", torch.arange(rows).expand((1, -1)))
        self.positions = torch.nn.Embedding(rows, d)
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        return self.proj(x + self.positions(self.position_ids[:, :x.shape[1]]))


class CachedDecoder(torch.nn.Module):
    """One decoder layer with its key/value cache, as LLM exports for ONNX Runtime write it:
    token ids and an attention mask over the cached and the new tokens (total = past +
    seq), the cache read and written back; Q, K and V as one Linear, then split.
    `heads_from_shape`: each head's width computed from the activation's shape, the scores
    scaled by its square root and the heads merged again to the activation's shape (as
    GPT-2's and LLaMA's exports compute them), which leaves Reshapes of computed targets."""

    def __init__(self, d=32, heads=2, vocab=50, heads_from_shape=False):
        super().__init__()
        self.d, self.heads, self.heads_from_shape = d, heads, heads_from_shape
        self.emb = torch.nn.Embedding(vocab, d)
        self.qkv, self.o = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, ids, attention_mask, past_k, past_v):
        b, t = ids.shape
        x = self.emb(ids)
        width = x.shape[2] // self.heads if self.heads_from_shape else -1
        q, k, v = (z.view(b, t, self.heads, width).transpose(1, 2) for z in self.qkv(x).split(self.d, dim=2))
        k, v = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -1e4
        scale = q.shape[-1] ** 0.5 if self.heads_from_shape else 4.0
        a = torch.softmax(q @ k.transpose(-1, -2) / scale + mask, -1) @ v
        merged = x.shape if self.heads_from_shape else (b, t, self.d)
        return self.head(x + self.o(a.transpose(1, 2).reshape(merged))), k, v


def export_cached_decoder(path, heads_from_shape=False):
    torch.manual_seed(3)
    b, t, past, heads, d = 1, 2, 3, 2, 32
    args = (torch.randint(0, 50, (b, t)), torch.ones(b, past + t, dtype=torch.int64),
            torch.rand(b, heads, past, d // heads), torch.rand(b, heads, past, d // heads))
    cache = {0: "batch", 2: "past"}
    torch.onnx.export(CachedDecoder(heads_from_shape=heads_from_shape).eval(), args, path, opset_version=14,
                      input_names=["input_ids", "attention_mask", "past_k", "past_v"],
                      output_names=["logits", "present_k", "present_v"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
                                    "past_k": cache, "past_v": cache, "logits": {0: "batch", 1: "seq"},
                                    "present_k": {0: "batch", 2: "total"}, "present_v": {0: "batch", 2: "total"}})


class Wrapped(torch.nn.Module):
    """`inner` as a submodule, so that the export can write it as a function."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


def export_as_functions(model, x, path, modules):
    """`model` at opset 15 (the first to have functions) with each module of a type in
    `modules` written as a model-local function, its calls in the graph."""
    torch.manual_seed(0)
    torch.onnx.export(model.eval(), (x,), path, opset_version=15, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      export_modules_as_functions=modules)


def float16_copy(src, dst):
    """The model converted to float16 throughout, as onnxconverter-common's
    convert_float_to_float16(keep_io_types=False) does: float initializers, inputs, outputs
    and value infos, and Casts to float."""
    model = onnx.load(src)
    g = model.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == onnx.TensorProto.FLOAT:
            g.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            v.type.tensor_type.elem_type = onnx.TensorProto.FLOAT16
    for node in g.node:
        for a in node.attribute:
            if node.op_type == "Cast" and a.name == "to" and a.i == onnx.TensorProto.FLOAT:
                a.i = onnx.TensorProto.FLOAT16
    onnx.save(model, dst)


def export(model, x, path, opset, axes=None, out_axes=None):
    torch.manual_seed(0)
    model.eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    torch.onnx.export(model, (x,), path, opset_version=opset, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": axes or {0: "batch"}, "output": out_axes or {0: "batch"}},
                      do_constant_folding=True)


def axes_to_input(model, node, name):
    """Moves an ints attribute into a new int64 initializer read as the node's input."""
    attr = next((a for a in node.attribute if a.name == name), None)
    if attr is None:
        return
    values = list(attr.ints)
    node.attribute.remove(attr)
    init = numpy_helper.from_array(np.array(values, dtype=np.int64), node.output[0] + "_" + name)
    model.graph.initializer.append(init)
    while len(node.input) < 2:
        node.input.append("")
    node.input[1] = init.name


IR_VERSION = {18: 8, 19: 9, 20: 9, 21: 10}


def bump_opset(src, dst, opset):
    """Opset 17 -> `opset`: Reduce* axes and Split's split as inputs (18)."""
    model = onnx.load(src)
    for node in model.graph.node:
        if node.op_type.startswith("Reduce") and node.op_type != "ReduceSum":
            axes_to_input(model, node, "axes")
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            imp.version = opset
    model.ir_version = IR_VERSION[opset]
    onnx.save(model, dst)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    image = torch.rand(1, 3, 16, 16)
    for opset in (11, 13, 17):
        torch.manual_seed(opset)
        export(SmallCnn(), image, os.path.join(out, f"cnn_opset{opset}.onnx"), opset)
    torch.manual_seed(1)
    export(SmallMlp(), torch.rand(1, 32), os.path.join(out, "mlp_opset13.onnx"), 13)
    export(FlattenByView(), torch.rand(1, 3, 8, 8), os.path.join(out, "view_opset13.onnx"), 13)
    export(HeadsByView(), torch.rand(1, 8, 48), os.path.join(out, "heads_view_opset13.onnx"), 13)
    export(NormMlp(), torch.rand(1, 8, 32), os.path.join(out, "norm_mlp_opset14.onnx"), 14)
    export(PositionsAdded(), torch.rand(1, 8, 32), os.path.join(out, "positions_opset14.onnx"), 14,
           {0: "batch", 1: "seq"}, {0: "batch", 1: "seq"})
    # As users often pass a file through ONNX's shape inference first: what it cannot tell
    # (the positions' slice and what follows) declared with no shape.
    positions = onnx.load(os.path.join(out, "positions_opset14.onnx"))
    inferred = onnx.shape_inference.infer_shapes(positions, data_prop=True)
    onnx.save(inferred, os.path.join(out, "positions_inferred_opset14.onnx"))
    export_cached_decoder(os.path.join(out, "cached_decoder_opset14.onnx"))
    export_cached_decoder(os.path.join(out, "cached_decoder_heads_from_shape_opset14.onnx"), heads_from_shape=True)
    # The same small CNN plainly and as a function; two NormMlp blocks as three functions.
    torch.manual_seed(15)
    cnn = Wrapped(SmallCnn())
    export(cnn, image, os.path.join(out, "cnn_opset15.onnx"), 15)
    export_as_functions(cnn, image, os.path.join(out, "cnn_function_opset15.onnx"), {SmallCnn})
    torch.manual_seed(16)
    blocks = torch.nn.Sequential(NormMlp(), NormMlp())
    export_as_functions(blocks, torch.rand(1, 8, 32), os.path.join(out, "norm_mlp_functions_opset15.onnx"),
                        {NormMlp, torch.nn.LayerNorm})
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(2)
    swin = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                           num_classes=10)
    export(swin, torch.rand(1, 3, 40, 40), os.path.join(out, "swin_opset14.onnx"), 14)
    export(ImageSizes(), torch.rand(1, 3, 32, 32), os.path.join(out, "image_sizes_opset12.onnx"), 12,
           {0: "batch", 2: "height", 3: "width"})
    image_axes = {0: "batch", 2: "height", 3: "width"}
    export(ReflectionStem(), torch.rand(1, 3, 32, 32), os.path.join(out, "reflection_opset13.onnx"), 13, image_axes,
           image_axes)
    export(AudioStem(), torch.rand(1, 400), os.path.join(out, "audio_opset17.onnx"), 17, {0: "batch", 1: "length"},
           {0: "batch", 1: "frames"})
    for opset in (18, 21):
        bump_opset(os.path.join(out, "cnn_opset17.onnx"), os.path.join(out, f"cnn_opset{opset}.onnx"), opset)
    float16_copy(os.path.join(out, "cnn_opset13.onnx"), os.path.join(out, "cnn_float16.onnx"))
    float16_copy(os.path.join(out, "cnn_opset21.onnx"), os.path.join(out, "cnn_float16_opset21.onnx"))
    # Weights as external data, as every model over 2 GB stores them.
    model = onnx.load(os.path.join(out, "cnn_opset13.onnx"))
    onnx.save_model(model, os.path.join(out, "cnn_external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="cnn_external.onnx.data", size_threshold=256)


if __name__ == "__main__":
    main()
