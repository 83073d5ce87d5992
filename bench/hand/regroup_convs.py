"""The hand-made ceiling for grouped convolutions with narrow groups (ResNeXt-50's 4
channels, RegNetX's 8): each grouped Conv whose groups have fewer than WIDTH input
channels is regrouped, m of its groups joined into one with a block-diagonal weight (zeros
between the blocks), m the least divisor of the group count that makes the groups at
least WIDTH wide, where one leaves more than one group (a dense convolution costs the
group count times the work: RegNetX-200MF's stages of 3, 7 and 19 groups made dense ran
it at 0.74x in ONNX Runtime). Work grows m times; the runtime's blocked kernels may run
the wider groups faster.

Usage: /usr/bin/python3 bench/hand/regroup_convs.py IN.onnx OUT.onnx [WIDTH (default 16)]
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def attribute(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def joined_groups(groups, width, target):
    """The least m dividing the group count with m * width >= target."""
    for m in range(2, groups):
        if groups % m == 0 and m * width >= target:
            return m
    return 1


def block_diagonal(w, groups, m):
    """Weight [C_out, C_in/g, kh, kw] of g groups as one of g/m groups of m joined blocks."""
    c_out, width = w.shape[0], w.shape[1]
    per_group = c_out // groups
    out = np.zeros((c_out, width * m) + w.shape[2:], w.dtype)
    for o in range(c_out):
        slot = (o // per_group) % m
        out[o, slot * width:(slot + 1) * width] = w[o]
    return out


def main():
    model = onnx.load(sys.argv[1])
    target = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    weights = {i.name: i for i in model.graph.initializer}
    regrouped = 0
    for node in model.graph.node:
        groups = attribute(node, "group", 1)
        if node.op_type != "Conv" or groups == 1 or node.input[1] not in weights:
            continue
        w = numpy_helper.to_array(weights[node.input[1]])
        m = joined_groups(groups, w.shape[1], target)
        if w.shape[1] >= target or m == 1:
            continue
        weights[node.input[1]].CopyFrom(numpy_helper.from_array(block_diagonal(w, groups, m), node.input[1]))
        for a in node.attribute:
            if a.name == "group":
                a.i = groups // m
        regrouped += 1
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print(f"regrouped {regrouped} convolutions to groups of at least {target} channels")


if __name__ == "__main__":
    main()
