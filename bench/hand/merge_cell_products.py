"""The hand-made ceiling for recurrent cells such as NasRNN, where each gate adds a product
of the input and one of the state (x.Wx + h.Wh): per (x, h), the gates' products of x
become one product on concatenated weights, likewise those of h, one Add, and a Split
gives each gate its sum ("pair"); or x and h are concatenated and multiplied once by the
stacked weights ("concat").

Usage: /usr/bin/python3 bench/hand/merge_cell_products.py IN.onnx OUT.onnx [pair|concat]
"""
import sys
from collections import defaultdict

import numpy as np
import onnx
from onnx import helper, numpy_helper


def gates(graph, weights):
    """Adds of two weight products, grouped by the two tensors multiplied."""
    made = {out: node for node in graph.node for out in node.output}
    groups = defaultdict(list)
    for node in graph.node:
        if node.op_type != "Add":
            continue
        a, b = (made.get(i) for i in node.input)
        if a and b and a.op_type == b.op_type == "MatMul" and a.input[1] in weights and b.input[1] in weights:
            groups[(a.input[0], b.input[0])].append((node, a, b))
    return {k: v for k, v in groups.items() if len(v) > 1}


def merged_nodes(tag, x, h, items, weights, mode, graph):
    wx = np.concatenate([weights[a.input[1]] for _, a, _ in items], axis=1)
    wh = np.concatenate([weights[b.input[1]] for _, _, b in items], axis=1)
    sizes = np.array([weights[a.input[1]].shape[1] for _, a, _ in items], np.int64)
    graph.initializer.append(numpy_helper.from_array(sizes, tag + "_sizes"))
    if mode == "concat":
        graph.initializer.append(numpy_helper.from_array(np.concatenate([wx, wh]), tag + "_w"))
        nodes = [helper.make_node("Concat", [x, h], [tag + "_xh"], axis=1),
                 helper.make_node("MatMul", [tag + "_xh", tag + "_w"], [tag + "_sum"])]
    else:
        graph.initializer.extend([numpy_helper.from_array(wx, tag + "_wx"), numpy_helper.from_array(wh, tag + "_wh")])
        nodes = [helper.make_node("MatMul", [x, tag + "_wx"], [tag + "_x"]),
                 helper.make_node("MatMul", [h, tag + "_wh"], [tag + "_h"]),
                 helper.make_node("Add", [tag + "_x", tag + "_h"], [tag + "_sum"])]
    return nodes + [helper.make_node("Split", [tag + "_sum", tag + "_sizes"], [n.output[0] for n, _, _ in items], axis=1)]


def topological(graph):
    known = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    order, rest = [], list(graph.node)
    while rest:
        node = next(n for n in rest if all(i in known or i == "" for i in n.input))
        order.append(node)
        known |= set(node.output)
        rest.remove(node)
    del graph.node[:]
    graph.node.extend(order)


def main():
    model = onnx.load(sys.argv[1])
    mode = sys.argv[3] if len(sys.argv) > 3 else "pair"
    graph = model.graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    groups = gates(graph, weights)
    if not groups:
        sys.exit("merge_cell_products: no gates of two weight products")
    for k, ((x, h), items) in enumerate(groups.items()):
        for node, a, b in items:
            for old in (node, a, b):
                graph.node.remove(old)
        graph.node.extend(merged_nodes(f"cell{k}", x, h, items, weights, mode, graph))
    used = {i for n in graph.node for i in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    topological(graph)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print(f"merged {sum(len(v) for v in groups.values())} gates in {len(groups)} groups ({mode})")


if __name__ == "__main__":
    main()
