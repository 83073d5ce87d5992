"""One-operator ONNX models for bench/probe/ort_probe.js: the reference product, small
operators, and models that pass many inputs in or many outputs out.

Usage: /usr/bin/python3 bench/probe/make_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, name + ".onnx"))


def value(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ones = numpy_helper.from_array(np.ones((1, 1), np.float32), "w")
    save(out, "tiny", [helper.make_node("MatMul", ["x", "w"], ["y"])], [value("x", [1, 1])], [value("y", [1, 1])], [ones])
    weight = numpy_helper.from_array(np.full((256, 256), 0.25, np.float32), "b")
    save(out, "matmul256", [helper.make_node("MatMul", ["a", "b"], ["y"])], [value("a", [256, 256])],
         [value("y", [256, 256])], [weight])
    save(out, "softmax32", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [value("x", [32, 32])],
         [value("y", [32, 32])])
    for k in (2, 36):
        pieces = [f"y{i}" for i in range(k)]
        sizes = numpy_helper.from_array(np.ones(k, np.int64), "s")
        save(out, f"split{k}", [helper.make_node("Split", ["x", "s"], pieces, axis=1)], [value("x", [1, k])],
             [value(p, [1, 1]) for p in pieces], [sizes])
        inputs = [f"x{i}" for i in range(k)]
        save(out, f"concat{k}", [helper.make_node("Concat", inputs, ["y"], axis=1)], [value(i, [1, 1]) for i in inputs],
             [value("y", [1, k])])


if __name__ == "__main__":
    main()
