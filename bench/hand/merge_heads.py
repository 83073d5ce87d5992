"""The hand-made ceiling for several heads Gemm -> Relu -> Gemm reading one feature: the
first layers become one Gemm on concatenated weights and biases, the second layers one
Gemm on a block-diagonal weight, and a Split gives each head its output.

Usage: /usr/bin/python3 bench/hand/merge_heads.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def heads(graph):
    """Per graph output: (first Gemm, Relu, second Gemm), when it is such a head."""
    made = {out: node for node in graph.node for out in node.output}
    found = []
    for output in graph.output:
        second = made.get(output.name)
        relu = made.get(second.input[0]) if second is not None and second.op_type == "Gemm" else None
        first = made.get(relu.input[0]) if relu is not None and relu.op_type == "Relu" else None
        if first is None or first.op_type != "Gemm":
            return None
        found.append((first, relu, second))
    return found


def trans_b(node):
    return any(a.name == "transB" and a.i == 1 for a in node.attribute)


def merge(model):
    graph = model.graph
    found = heads(graph)
    if not found or len({f.input[0] for f, _, _ in found}) != 1 or not all(trans_b(f) and trans_b(s) for f, _, s in found):
        return 0
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    w1 = np.concatenate([weights[f.input[1]] for f, _, _ in found])  # [sum hidden, d]
    b1 = np.concatenate([weights[f.input[2]] for f, _, _ in found])
    seconds = [weights[s.input[1]] for _, _, s in found]  # each [out_i, hidden_i]
    w2 = np.zeros((sum(w.shape[0] for w in seconds), sum(w.shape[1] for w in seconds)), np.float32)
    row = col = 0
    for w in seconds:
        w2[row:row + w.shape[0], col:col + w.shape[1]] = w
        row, col = row + w.shape[0], col + w.shape[1]
    b2 = np.concatenate([weights[s.input[2]] for _, _, s in found])
    inits = {"heads_w1": w1, "heads_b1": b1, "heads_w2": w2, "heads_b2": b2,
             "heads_split": np.array([w.shape[0] for w in seconds], np.int64)}
    feature = found[0][0].input[0]
    nodes = [helper.make_node("Gemm", [feature, "heads_w1", "heads_b1"], ["heads_h"], transB=1),
             helper.make_node("Relu", ["heads_h"], ["heads_r"]),
             helper.make_node("Gemm", ["heads_r", "heads_w2", "heads_b2"], ["heads_y"], transB=1),
             helper.make_node("Split", ["heads_y", "heads_split"], [o.name for o in graph.output], axis=1)]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(numpy_helper.from_array(v.astype(v.dtype), k) for k, v in inits.items())
    return len(found)


def main():
    model = onnx.load(sys.argv[1])
    merged = merge(model)
    if merged == 0:
        sys.exit("merge_heads: no heads of one feature to merge")
    onnx.save(model, sys.argv[2])
    print(f"merged {merged} heads")


if __name__ == "__main__":
    main()
