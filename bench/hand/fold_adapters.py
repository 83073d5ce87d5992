"""The hand-made ceiling for models with unmerged low-rank adapters: every
Add(Gemm(x, W, b), Mul(MatMul(MatMul(x, A), B), s)) (W as transB says, s a scalar
initializer) becomes Gemm(x, W + s (A B)^T, b), with A, B and s dropped.

Usage: /usr/bin/python3 bench/hand/fold_adapters.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def producers(graph):
    return {out: node for node in graph.node for out in node.output}


def fold(model):
    graph = model.graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    made = producers(graph)
    drop, folded = set(), 0
    for add in [n for n in graph.node if n.op_type == "Add"]:
        gemm, mul = (made.get(i) for i in add.input)
        if gemm is None or mul is None or gemm.op_type != "Gemm":
            gemm, mul = mul, gemm
        if gemm is None or mul is None or gemm.op_type != "Gemm" or mul.op_type != "Mul":
            continue
        up = made.get(mul.input[0])
        down = made.get(up.input[0]) if up is not None and up.op_type == "MatMul" else None
        if down is None or down.op_type != "MatMul" or down.input[0] != gemm.input[0]:
            continue
        trans_b = any(a.name == "transB" and a.i == 1 for a in gemm.attribute)
        delta = float(weights[mul.input[1]]) * (weights[down.input[1]] @ weights[up.input[1]])
        w = weights[gemm.input[1]] + (delta.T if trans_b else delta)
        for init in graph.initializer:
            if init.name == gemm.input[1]:
                init.CopyFrom(numpy_helper.from_array(w.astype(np.float32), init.name))
        gemm.output[0] = add.output[0]
        drop.update(id(n) for n in (add, mul, up, down))
        folded += 1
    kept = [n for n in graph.node if id(n) not in drop]
    del graph.node[:]
    graph.node.extend(kept)
    used = {i for n in graph.node for i in n.input}
    unused = [i for i in graph.initializer if i.name not in used]
    for i in unused:
        graph.initializer.remove(i)
    return folded


def main():
    model = onnx.load(sys.argv[1])
    folded = fold(model)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print(f"folded {folded} adapters")


if __name__ == "__main__":
    main()
