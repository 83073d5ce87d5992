"""The hand-made ceiling for linear layers reading one input (query, key and value
projections): the Gemms (transB=1, with a bias) that read the same tensor become one Gemm
on concatenated weights and biases, and a Split gives each its output.

Usage: /usr/bin/python3 bench/hand/merge_projections.py IN.onnx OUT.onnx
"""
import sys
from collections import defaultdict

import numpy as np
import onnx
from onnx import helper, numpy_helper


def trans_b(node):
    return any(a.name == "transB" and a.i == 1 for a in node.attribute)


def plain(node):
    """A Gemm with B transposed, no scaling and A as it is."""
    return node.op_type == "Gemm" and trans_b(node) and len(node.input) == 3 and not any(
        a.name in ("alpha", "beta", "transA") and (a.f != 1.0 if a.name != "transA" else a.i != 0)
        for a in node.attribute)


def merge(model):
    graph = model.graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    groups = defaultdict(list)
    for node in graph.node:
        if plain(node) and node.input[1] in weights and node.input[2] in weights:
            groups[node.input[0]].append(node)
    merged = 0
    for source, gemms in groups.items():
        if len(gemms) < 2:
            continue
        tag = f"merged{merged}"
        w = np.concatenate([weights[g.input[1]] for g in gemms])  # [sum out, in]
        b = np.concatenate([weights[g.input[2]] for g in gemms])
        sizes = np.array([weights[g.input[1]].shape[0] for g in gemms], np.int64)
        graph.initializer.extend([numpy_helper.from_array(w, f"{tag}_w"), numpy_helper.from_array(b, f"{tag}_b"),
                                  numpy_helper.from_array(sizes, f"{tag}_sizes")])
        first = list(graph.node).index(gemms[0])
        new = [helper.make_node("Gemm", [source, f"{tag}_w", f"{tag}_b"], [f"{tag}_y"], transB=1),
               helper.make_node("Split", [f"{tag}_y", f"{tag}_sizes"], [g.output[0] for g in gemms], axis=1)]
        for g in gemms:
            graph.node.remove(g)
        for k, n in enumerate(new):
            graph.node.insert(first + k, n)
        merged += len(gemms)
    used = {i for n in graph.node for i in n.input}
    keep = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return merged


def main():
    model = onnx.load(sys.argv[1])
    merged = merge(model)
    if merged == 0:
        sys.exit("merge_projections: no linear layers sharing an input")
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print(f"merged {merged} linear layers")


if __name__ == "__main__":
    main()
