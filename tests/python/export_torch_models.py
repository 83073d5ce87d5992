"""Exports torchvision models and a TransformerEncoderLayer to ONNX with PyTorch, plus a
fixed input and PyTorch's output for it, so the C++ tests can check import, round trip
and the reference executor against PyTorch.

usage: /usr/bin/python3 export_torch_models.py OUTDIR [NAME ...]
Writes OUTDIR/NAME.onnx, NAME.input.bin and NAME.output.bin (raw little-endian float32).
"""
import os
import sys

import torch
import torchvision


def transformer():
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=512, dropout=0.1)
    return layer, torch.rand(16, 2, 256) * 2 - 1


# Images of 64 pixels (Inception-v3's valid convolutions need 75 or more): every layer of
# the model as at 224, a twelfth of the reference executor's work in the C++ test.
def vision(ctor, size=64, **kwargs):
    def make():
        return ctor(weights=None, **kwargs), torch.rand(1, 3, size, size) * 2 - 1
    return make


# name -> (builder, opset)
MODELS = {
    "resnet50": (vision(torchvision.models.resnet50), 13),
    "resnext50": (vision(torchvision.models.resnext50_32x4d), 17),
    "inception_v3": (vision(torchvision.models.inception_v3, 96, aux_logits=False, init_weights=False), 11),
    "mobilenet_v2": (vision(torchvision.models.mobilenet_v2), 13),
    "squeezenet": (vision(torchvision.models.squeezenet1_1), 12),
    "densenet121": (vision(torchvision.models.densenet121), 14),
    # Squeeze-excitation: the scale broadcast over the map, as Mul's first operand; hard
    # swish and hard sigmoid.
    "efficientnet_b0": (vision(torchvision.models.efficientnet_b0), 17),
    "mobilenet_v3_small": (vision(torchvision.models.mobilenet_v3_small), 17),
    "transformer_layer": (transformer, 14),
    # Opset 17: layer normalization as one LayerNormalization node.
    "transformer_layer_17": (transformer, 17),
}


def export(name, outdir):
    builder, opset = MODELS[name]
    torch.manual_seed(0)
    model, x = builder()
    model.eval()
    with torch.no_grad():
        # Random batch-norm statistics, so folding them into convolutions is exercised.
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        y = model(x)
    path = os.path.join(outdir, name)
    torch.onnx.export(model, (x,), path + ".onnx.tmp", opset_version=opset, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)
    x.numpy().astype("<f4").tofile(path + ".input.bin")
    y.numpy().astype("<f4").tofile(path + ".output.bin")
    os.replace(path + ".onnx.tmp", path + ".onnx")  # the .onnx appears last: its presence means complete


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    names = sys.argv[2:] or list(MODELS)
    for name in names:
        if not os.path.exists(os.path.join(outdir, name + ".onnx")):
            export(name, outdir)
            print("exported", name, flush=True)


if __name__ == "__main__":
    main()
