"""The hand-made ceiling for recurrent models whose steps share their weights (the LSTM of
taso-models): the products of every step's input with the same weight (Gemm nodes with
the same weight, bias and attributes, each reading a graph input) become one product of
the inputs concatenated along the rows, and a Split gives each step its rows back. The
products of the state stay, as each needs the step before.

Usage: /usr/bin/python3 bench/hand/batch_steps.py IN.onnx OUT.onnx
"""
import sys
from collections import defaultdict

import numpy as np
import onnx
from onnx import helper, numpy_helper

from merge_cell_products import topological


def input_products(graph):
    """Gemm nodes on a graph input, grouped by weight, bias and attributes."""
    inputs = {i.name for i in graph.input}
    groups = defaultdict(list)
    for node in graph.node:
        if node.op_type == "Gemm" and node.input[0] in inputs:
            attrs = tuple(sorted(helper.get_attribute_value(a) for a in node.attribute))
            groups[(tuple(node.input[1:]), attrs)].append(node)
    return [nodes for nodes in groups.values() if len(nodes) > 1]


def batched(tag, nodes, graph):
    rows = {i.name: i.type.tensor_type.shape.dim[0].dim_value for i in graph.input}
    sizes = np.array([rows[n.input[0]] for n in nodes], np.int64)
    graph.initializer.append(numpy_helper.from_array(sizes, tag + "_rows"))
    gemm = helper.make_node("Gemm", [tag + "_x"] + list(nodes[0].input[1:]), [tag + "_y"])
    gemm.attribute.extend(nodes[0].attribute)
    return [helper.make_node("Concat", [n.input[0] for n in nodes], [tag + "_x"], axis=0), gemm,
            helper.make_node("Split", [tag + "_y", tag + "_rows"], [n.output[0] for n in nodes], axis=0)]


def main():
    model = onnx.load(sys.argv[1])
    graph = model.graph
    groups = input_products(graph)
    if not groups:
        sys.exit("batch_steps: no products of graph inputs sharing a weight")
    for k, nodes in enumerate(groups):
        for node in nodes:
            graph.node.remove(node)
        graph.node.extend(batched(f"steps{k}", nodes, graph))
    topological(graph)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print(f"batched {sum(len(g) for g in groups)} products in {len(groups)} groups")


if __name__ == "__main__":
    main()
