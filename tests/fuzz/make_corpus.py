"""Writes the fuzz targets' seed corpora under tests/fuzz/corpus/ from real files: tiny
PyTorch exports and hand-built models of the kinds exporters write (onnx_import,
onnx_mutate), a few rules of the shipped database in the binary and the protobuf text
form (rules), the shipped axiom files (axioms), and fixed random choices (rewrite).

usage: /usr/bin/python3 tests/fuzz/make_corpus.py   (from the source tree's root)
Deterministic: the same files on every run. Files added by merging fuzzer finds
(bench/fuzz.sh with FUZZ_MERGE=1) are left alone.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

import onnx
import torch
from onnx import TensorProto, helper

CORPUS = os.path.join("tests", "fuzz", "corpus")


class ConvNet(torch.nn.Module):
    def __init__(self, groups=1):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1, groups=groups)
        self.bn = torch.nn.BatchNorm2d(4)
        self.side = torch.nn.Conv2d(4, 2, 1)
        self.fc = torch.nn.Linear(6, 3)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.cat([torch.max_pool2d(y, 2), torch.nn.functional.avg_pool2d(self.side(x), 2)], dim=1)
        return self.fc(y.mean(dim=(2, 3)))


class ResBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 3, 3, padding=1)
        self.b = torch.nn.Conv2d(3, 3, 3, stride=2, padding=1)

    def forward(self, x):
        y = torch.relu(self.a(x) + x)
        return torch.flatten(torch.nn.functional.adaptive_avg_pool2d(self.b(y), 1), 1)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 8)
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x):
        return torch.softmax(self.norm(self.b(torch.nn.functional.gelu(self.a(x))) + x), dim=-1)


class Shapes(torch.nn.Module):
    """Split, transpose, reshape and slice bounds computed from the input's shape."""

    def forward(self, x):
        a, b = x.split([2, 2], dim=1)
        y = torch.matmul(a.transpose(1, 2), b).reshape(x.shape[0], -1)
        return y[:, : y.shape[1] // 2], torch.sigmoid(a) * torch.tanh(b)


class RnnCell(torch.nn.Module):
    """A NasRNN-like step: matrix products, gates, element-wise arithmetic."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Linear(6, 12, bias=False)
        self.u = torch.nn.Linear(6, 12, bias=False)

    def forward(self, x, h):
        g = self.w(x) + self.u(h)
        i, f = g.chunk(2, dim=-1)
        return torch.sigmoid(i) * torch.tanh(f) + h


def torch_models():
    torch.manual_seed(0)
    attention = torch.nn.MultiheadAttention(8, 2)
    lstm = torch.nn.LSTM(4, 4)
    return {
        "torch_convnet": (ConvNet(), (torch.rand(1, 4, 6, 6),), 13),
        "torch_depthwise": (ConvNet(groups=4), (torch.rand(1, 4, 6, 6),), 11),
        "torch_resblock": (ResBlock(), (torch.rand(1, 3, 8, 8),), 12),
        "torch_mlp_17": (Mlp(), (torch.rand(2, 8),), 17),
        "torch_mlp_14": (Mlp(), (torch.rand(2, 8),), 14),
        "torch_shapes": (Shapes(), (torch.rand(2, 4, 3),), 13),
        "torch_rnn_cell": (RnnCell(), (torch.rand(1, 6), torch.rand(1, 6)), 11),
        "torch_attention": (attention, (torch.rand(3, 1, 8),) * 3, 14),
        "torch_lstm": (lstm, (torch.rand(3, 1, 4),), 13),
        # Modules as model-local functions, LayerNorm's nested in Mlp's.
        "torch_mlp_functions": (torch.nn.Sequential(Mlp(), Mlp()), (torch.rand(2, 8),), 15,
                                {Mlp, torch.nn.LayerNorm}),
    }


def export_torch(name, model, args, opset, functions=None):
    model.eval()
    path = os.path.join(CORPUS, "onnx_import", name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=opset, do_constant_folding=True,
                          export_modules_as_functions=functions or False)


def tensor(name, dims, rng):
    values = [rng.uniform(-1, 1) for _ in range(max(1, eval("*".join(map(str, dims)) or "1")))]
    return helper.make_tensor(name, TensorProto.FLOAT, dims, values)


def value(name, dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)


def hand_models():
    """Odd but valid models of the kinds real exporters write."""
    rng = random.Random(1)
    lstm = helper.make_node("LSTM", ["x", "w", "r"], ["", "y_h"], hidden_size=2)
    yield "lstm_omitted_output", helper.make_graph(
        [lstm], "g", [value("x", [3, 1, 2])], [value("y_h", [1, 1, 2])],
        [tensor("w", [1, 8, 2], rng), tensor("r", [1, 8, 2], rng)])
    conv = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[1, 1], strides=[1, 1])
    yield "weight_also_input", helper.make_graph(
        [conv], "g", [value("x", [1, 2, 3, 3]), value("w", [2, 2, 1, 1])], [value("y", [1, 2, 3, 3])],
        [tensor("w", [2, 2, 1, 1], rng)])
    relu = helper.make_node("Relu", ["x"], ["y"])
    yield "zero_sized_dim", helper.make_graph([relu], "g", [value("x", [0, 3])], [value("y", [0, 3])])
    yield "empty_graph", helper.make_graph([], "g", [value("x", [2])], [value("x", [2])])
    const = helper.make_node("Constant", [], ["c"], value=tensor("v", [2, 2], rng))
    mm = helper.make_node("MatMul", ["x", "c"], ["m"])
    add = helper.make_node("Add", ["m", "b"], ["y"])
    yield "constant_matmul_add", helper.make_graph(
        [add, mm, const], "g", [value("x", [3, 2])], [value("y", [3, 2])], [tensor("b", [2], rng)])
    ident = helper.make_node("Identity", ["x"], ["y"])
    yield "int64_identity", helper.make_graph(
        [ident], "g", [value("x", [4], TensorProto.INT64)], [value("y", [4], TensorProto.INT64)])
    scores = helper.make_node("Einsum", ["q", "k"], ["s"], equation="b h i d, b h j d -> b h i j")
    softmax = helper.make_node("Softmax", ["s"], ["y"], axis=-1)
    yield "einsum_attention", helper.make_graph(
        [scores, softmax], "g", [value("q", [1, 2, 3, 4]), value("k", [1, 2, 5, 4])], [value("y", [1, 2, 3, 5])])


def runtime_saved_models():
    """Models as an ONNX Runtime session saves them optimized (ops/runtime_schemas.cc):
    its own operators, LayerNormalization in ONNX's domain before opset 17 among them."""
    rng = random.Random(2)
    ms = {"domain": "com.microsoft"}
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g"], ["n"], axis=-1, epsilon=1e-5),
        helper.make_node("FusedMatMul", ["n", "w"], ["p"], transB=1, alpha=0.5, **ms),
        helper.make_node("BiasGelu", ["p", "b"], ["a"], **ms),
        helper.make_node("SkipLayerNormalization", ["a", "p", "g"], ["s", "", "", "sum"], epsilon=1e-5, **ms),
        helper.make_node("SimplifiedLayerNormalization", ["s", "g"], ["r"], axis=-1, epsilon=1e-6),
        helper.make_node("QuickGelu", ["r"], ["q"], alpha=1.702, **ms),
        helper.make_node("FastGelu", ["q", "b"], ["f"], **ms),
        helper.make_node("Gelu", ["f"], ["e"], **ms),
        helper.make_node("Add", ["e", "sum"], ["y"]),
    ]
    yield "runtime_saved_transformer", 14, helper.make_graph(
        nodes, "g", [value("x", [2, 3, 4])], [value("y", [2, 3, 4])],
        [tensor("g", [4], rng), tensor("w", [4, 4], rng), tensor("b", [4], rng)])
    conv = helper.make_node("FusedConv", ["x", "w", "c"], ["y"], activation="Relu", pads=[1, 1, 1, 1], **ms)
    gemm = helper.make_node("FusedGemm", ["f", "m"], ["z"], transB=1, alpha=1.0, beta=1.0, activation="Relu", **ms)
    flat = helper.make_node("Flatten", ["y"], ["f"])
    yield "runtime_saved_cnn", 13, helper.make_graph(
        [conv, flat, gemm], "g", [value("x", [1, 2, 3, 3])], [value("z", [1, 5])],
        [tensor("w", [2, 2, 3, 3], rng), tensor("c", [2], rng), tensor("m", [5, 18], rng)])


def write_hand_models():
    for name, graph in hand_models():
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, os.path.join(CORPUS, "onnx_import", name + ".onnx"))
    for name, opset, graph in runtime_saved_models():
        imports = [helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)]
        model = helper.make_model(graph, opset_imports=imports)
        model.ir_version = 8
        onnx.save(model, os.path.join(CORPUS, "onnx_import", name + ".onnx"))


def rules_pb2(tmp):
    subprocess.check_call(["protoc", "--python_out=" + tmp, "-Iproto", "proto/rules.proto"])
    sys.path.insert(0, tmp)
    import rules_pb2 as module
    return module


def write_rules(tmp):
    """Rules of several kinds (parametric, with a split, several outputs), a few per file."""
    pb = rules_pb2(tmp)
    from google.protobuf import text_format
    shipped = pb.RuleSet()
    with open("rules/taso_k3.pb", "rb") as f:
        shipped.ParseFromString(f.read())
    rng = random.Random(2)
    kinds = {
        "parametric": [r for r in shipped.rules if r.vars],
        "split": [r for r in shipped.rules if any(o.op == "Split" for o in r.target.ops)],
        "two_outputs": [r for r in shipped.rules if len(r.source.outputs) > 1],
        "any": list(shipped.rules),
    }
    for kind, rules in kinds.items():
        for i in range(3):
            subset = pb.RuleSet(format_version=shipped.format_version, max_ops=shipped.max_ops)
            subset.rules.extend(rng.sample(rules, min(len(rules), i + 1)))
            base = os.path.join(CORPUS, "rules", f"{kind}_{i}")
            with open(base + ".pb", "wb") as f:
                f.write(subset.SerializeToString())
            if i == 0:
                with open(base + ".txt", "w") as f:
                    f.write("t" + text_format.MessageToString(subset))


def write_axioms():
    """Each family file, and the signature as the target reads one (after an 's')."""
    for name in sorted(os.listdir("axioms")):
        if name == "signature.smt2":
            with open(os.path.join("axioms", name)) as f, open(os.path.join(CORPUS, "axioms", "s_" + name), "w") as out:
                out.write("s" + f.read())
        else:
            shutil.copy(os.path.join("axioms", name), os.path.join(CORPUS, "axioms", name))


def write_rewrite_choices():
    rng = random.Random(3)
    for i in range(24):
        with open(os.path.join(CORPUS, "rewrite", f"choices_{i:02d}"), "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(48)))


def main():
    for target in ("onnx_import", "onnx_mutate", "rules", "axioms", "rewrite"):
        os.makedirs(os.path.join(CORPUS, target), exist_ok=True)
    for name, (model, args, opset, *functions) in torch_models().items():
        export_torch(name, model, args, opset, *functions)
    write_hand_models()
    # The mutator starts from the same valid models.
    for name in os.listdir(os.path.join(CORPUS, "onnx_import")):
        shutil.copy(os.path.join(CORPUS, "onnx_import", name), os.path.join(CORPUS, "onnx_mutate", name))
    with tempfile.TemporaryDirectory() as tmp:
        write_rules(tmp)
    write_axioms()
    write_rewrite_choices()


if __name__ == "__main__":
    main()
