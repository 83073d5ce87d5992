#!/usr/bin/python3
"""Writes odd but valid ONNX models, and invalid ones, for tests/odd_models.sh.

Usage: /usr/bin/python3 tests/python/make_odd_models.py OUT_DIR

Each model is OUT_DIR/<name>.onnx; OUT_DIR/cases.tsv lists one model a line as
    name <TAB> expectation <TAB> reason
where the expectation is
    valid      taso-opt optimizes it, and the result gives the original's answers in
               ONNX Runtime;
    refusable  valid, but outside what taso-opt can check today: it is optimized as a
               valid one, or refused with one line containing the reason;
    invalid    refused with one line, an exit code from 1 to 127 and no output file.
Every float input is float32 (the ONNX Runtime runner draws random float32 inputs);
every valid model passes the ONNX checker and runs in ONNX Runtime.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
CASES = []  # (name, expectation, reason)


def tensor(name, shape, seed):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.uniform(-1, 1, shape).astype(np.float32), name)


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, initializers=(), opset=OPSET, check=True):
    graph = helper.make_graph(nodes, "odd", list(inputs), list(outputs), list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_odd_models")
    m.ir_version = 7
    if check:
        onnx.checker.check_model(m, full_check=True)
    return m


def case(out_dir, name, expectation, m, reason=""):
    data = m if isinstance(m, bytes) else m.SerializeToString()
    with open(os.path.join(out_dir, name + ".onnx"), "wb") as f:
        f.write(data)
    CASES.append((name, expectation, reason))


def valid_models(out):
    # An LSTM whose sequence output Y is omitted (outputs ["", "Y_h"]), with the optional
    # bias and sequence_lens omitted too ("") but initial_h given.
    lstm = helper.make_node("LSTM", ["x", "W", "R", "", "", "h0"], ["", "Y_h"], name="lstm", hidden_size=3)
    case(out, "lstm_omitted_output", "valid",
         model([lstm, helper.make_node("Relu", ["Y_h"], ["y"])],
               [value("x", [4, 1, 5]), value("h0", [1, 1, 3])], [value("y", [1, 1, 3])],
               [tensor("W", [1, 12, 5], 1), tensor("R", [1, 12, 3], 2)]))

    # Weights that are also graph inputs (the user may feed others): a Conv followed by
    # what fusion would fold into it, and a MatMul whose weight the cpu kernel would pack.
    case(out, "conv_weight_input", "valid",
         model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
                helper.make_node("Mul", ["n", "k"], ["scaled"]),
                helper.make_node("Relu", ["scaled"], ["y"])],
               [value("x", [1, 3, 8, 8]), value("w", [4, 3, 3, 3]), value("k", [1, 4, 1, 1])],
               [value("y", [1, 4, 8, 8])],
               [tensor("w", [4, 3, 3, 3], 3), tensor("k", [1, 4, 1, 1], 4), tensor("s", [4], 5),
                tensor("b", [4], 6), tensor("m", [4], 7),
                numpy_helper.from_array(np.full([4], 0.5, np.float32), "v")]))
    case(out, "matmul_weight_input", "valid",
         model([helper.make_node("MatMul", ["x", "w"], ["p"]), helper.make_node("Add", ["p", "b"], ["y"])],
               [value("x", [6, 8]), value("w", [8, 5])], [value("y", [6, 5])],
               [tensor("w", [8, 5], 8), tensor("b", [5], 9)]))
    # A weight also an input, declared with a symbolic size that its initializer fixes.
    case(out, "weight_input_declared_symbolic", "valid",
         model([helper.make_node("MatMul", ["x", "w"], ["y"])],
               [value("x", [6, 8]), value("w", ["k", 5])], [value("y", [6, 5])], [tensor("w", [8, 5], 10)]))
    # As older PyTorch exports write every model (keep_initializers_as_inputs).
    case(out, "all_weights_are_inputs", "valid",
         model([helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
                helper.make_node("Relu", ["c1"], ["r1"]),
                helper.make_node("Conv", ["r1", "w2", "b2"], ["y"])],
               [value("x", [1, 2, 6, 6]), value("w1", [4, 2, 3, 3]), value("w2", [3, 4, 1, 1]), value("b2", [3])],
               [value("y", [1, 3, 6, 6])],
               [tensor("w1", [4, 2, 3, 3], 10), tensor("w2", [3, 4, 1, 1], 11), tensor("b2", [3], 12)]))

    # Empty graphs: an input passed to the output, and an Identity only.
    case(out, "input_is_output", "valid", model([], [value("x", [2, 3])], [value("x", [2, 3])]))
    case(out, "identity_only", "valid",
         model([helper.make_node("Identity", ["x"], ["y"])], [value("x", [2, 3])], [value("y", [2, 3])]))

    # A dimension of size zero.
    case(out, "zero_sized_dimension", "valid",
         model([helper.make_node("MatMul", ["x", "w"], ["p"]), helper.make_node("Relu", ["p"], ["y"])],
               [value("x", [0, 4])], [value("y", [0, 3])], [tensor("w", [4, 3], 13)]))

    # Only operators outside the library.
    case(out, "only_opaque_operators", "valid",
         model([helper.make_node("Sin", ["x"], ["s"]), helper.make_node("Floor", ["s"], ["y"])],
               [value("x", [3, 4])], [value("y", [3, 4])]))

    # A Conv with explicit asymmetric pads, dilations, strides, groups and a bias.
    case(out, "conv_pads_dilations", "valid",
         model([helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[0, 1, 2, 1], dilations=[2, 1],
                                 strides=[2, 1], group=2)],
               [value("x", [1, 4, 9, 7])], [value("y", [1, 6, 4, 7])],
               [tensor("w", [6, 2, 3, 3], 14), tensor("b", [6], 15)]))

    # Gemm with alpha, beta, a transposed B and a bias; and a classifier head (Flatten, Gemm).
    case(out, "gemm_alpha_beta_transb", "valid",
         model([helper.make_node("Gemm", ["x", "w", "c"], ["y"], alpha=0.5, beta=2.0, transB=1)],
               [value("x", [3, 6])], [value("y", [3, 4])], [tensor("w", [4, 6], 16), tensor("c", [4], 17)]))
    case(out, "flatten_gemm_head", "valid",
         model([helper.make_node("GlobalAveragePool", ["x"], ["g"]), helper.make_node("Flatten", ["g"], ["f"]),
                helper.make_node("Gemm", ["f", "w", "c"], ["y"], transB=1)],
               [value("x", [2, 8, 4, 4])], [value("y", [2, 5])], [tensor("w", [5, 8], 18), tensor("c", [5], 19)]))

    # Names with odd characters, as TensorFlow and PyTorch exporters write them.
    case(out, "odd_names", "valid",
         model([helper.make_node("Conv", ["input:0", "conv/kernel:0"], ["conv/BiasAdd 1"], name="conv/Conv2D"),
                helper.make_node("Relu", ["conv/BiasAdd 1"], ["Ausgabe-ü.ß"], name="Relu (1)"),
                helper.make_node("Add", ["Ausgabe-ü.ß", "1"], ["output;0"], name="")],
               [value("input:0", [1, 2, 5, 5])], [value("output;0", [1, 3, 3, 3])],
               [tensor("conv/kernel:0", [3, 2, 3, 3], 20), tensor("1", [1], 21)]))

    # An output that is also an input; a tensor read by several outputs; unused
    # initializers (one also an input).
    case(out, "output_is_input", "valid",
         model([helper.make_node("Relu", ["x"], ["y"])], [value("x", [2, 4])],
               [value("y", [2, 4]), value("x", [2, 4])]))
    case(out, "tensor_read_by_several_outputs", "valid",
         model([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Sigmoid", ["t"], ["a"]),
                helper.make_node("Tanh", ["t"], ["b"])],
               [value("x", [3, 3])], [value("t", [3, 3]), value("a", [3, 3]), value("b", [3, 3])]))
    case(out, "unused_initializers", "valid",
         model([helper.make_node("Relu", ["x"], ["y"])], [value("x", [2, 2]), value("spare_input", [3])],
               [value("y", [2, 2])], [tensor("spare", [4, 4], 22), tensor("spare_input", [3], 23)]))

    # What exporters write around the computation: a Constant node, shape arithmetic
    # (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as PyTorch computes a flatten), an
    # older opset, and two MatMuls sharing an input (a rule merges them).
    shape_nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.int64))),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Constant", [], ["minus_one"], value=numpy_helper.from_array(np.array([-1], np.int64))),
        helper.make_node("Concat", ["n1", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w"], ["y"]),
    ]
    case(out, "pytorch_flatten", "valid",
         model(shape_nodes, [value("x", [2, 3, 4])], [value("y", [2, 5])],
               [numpy_helper.from_array(np.array([0], np.int64), "axes"), tensor("w", [12, 5], 24)]))
    case(out, "opset11_conv_bn_relu", "valid",
         model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
                helper.make_node("Relu", ["n"], ["y"])],
               [value("x", [1, 3, 6, 6])], [value("y", [1, 4, 6, 6])],
               [tensor("w", [4, 3, 3, 3], 25), tensor("s", [4], 26), tensor("b", [4], 27), tensor("m", [4], 28),
                numpy_helper.from_array(np.full([4], 0.7, np.float32), "v")], opset=11))
    # The newest opset ONNX Runtime 1.30 runs (beyond the installed ONNX's checker).
    case(out, "opset26_conv_bn_relu", "valid",
         model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
                helper.make_node("Relu", ["n"], ["y"])],
               [value("x", [1, 3, 6, 6])], [value("y", [1, 4, 6, 6])],
               [tensor("w", [4, 3, 3, 3], 38), tensor("s", [4], 39), tensor("b", [4], 40), tensor("m", [4], 41),
                numpy_helper.from_array(np.full([4], 0.7, np.float32), "v")], opset=26, check=False))
    case(out, "shared_input_matmuls", "valid",
         model([helper.make_node("MatMul", ["x", "w1"], ["a"]), helper.make_node("MatMul", ["x", "w2"], ["b"]),
                helper.make_node("Add", ["a", "b"], ["y"])],
               [value("x", [8, 16])], [value("y", [8, 16])],
               [tensor("w1", [16, 16], 29), tensor("w2", [16, 16], 30)]))
    case(out, "softmax_transpose_concat", "valid",
         model([helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
                helper.make_node("Softmax", ["t"], ["s"], axis=-1),
                helper.make_node("Concat", ["s", "t"], ["y"], axis=0)],
               [value("x", [4, 6])], [value("y", [12, 4])]))
    # The default domain spelled "ai.onnx" in the opset import and the nodes: ONNX Runtime
    # reads it as "" (ONNX's Python checker does not, so it is not asked).
    ai_onnx = model([helper.make_node("MatMul", ["x", "w"], ["m"], domain="ai.onnx"),
                     helper.make_node("Relu", ["m"], ["y"], domain="ai.onnx")],
                    [value("x", [4, 8])], [value("y", [4, 8])], [tensor("w", [8, 8], 36)], check=False)
    ai_onnx.opset_import[0].domain = "ai.onnx"
    case(out, "default_domain_as_ai_onnx", "valid", ai_onnx)
    # Shapes ONNX's inference wrote, then the input's batch changed by hand (the output's
    # left): ONNX Runtime warns and runs it by what the inputs give.
    rebatched = model([helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
                      [value("x", [1, 8])], [value("y", [1, 8])], [tensor("w", [8, 8], 37)])
    rebatched = onnx.shape_inference.infer_shapes(rebatched)
    rebatched.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 4
    case(out, "stale_shapes_after_rebatch", "valid", rebatched)
    # Weights stored sparse: one by linear indices, one by coordinates.
    sparse = model([helper.make_node("MatMul", ["x", "w1"], ["a"]), helper.make_node("Relu", ["a"], ["r"]),
                    helper.make_node("MatMul", ["r", "w2"], ["y"])],
                   [value("x", [4, 8])], [value("y", [4, 8])], check=False)
    sparse.graph.sparse_initializer.extend([
        helper.make_sparse_tensor(numpy_helper.from_array(np.array([1.5, -2.0, 0.5], np.float32), "w1"),
                                  numpy_helper.from_array(np.array([3, 17, 60], np.int64), "w1_indices"), [8, 8]),
        helper.make_sparse_tensor(numpy_helper.from_array(np.array([0.25, 1.0], np.float32), "w2"),
                                  numpy_helper.from_array(np.array([[0, 7], [5, 2]], np.int64), "w2_indices"),
                                  [8, 8])])
    onnx.checker.check_model(sparse)  # ONNX 1.12's shape inference does not read sparse initializers
    case(out, "sparse_initializers", "valid", sparse)


def invalid_models(out):
    def relu_model(nodes, inputs=None, outputs=None, initializers=()):
        return model(nodes, inputs or [value("x", [2, 2])], outputs or [value("y", [2, 2])], initializers,
                     check=False)

    case(out, "two_nodes_write_one_tensor", "invalid",
         relu_model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Sigmoid", ["x"], ["y"])]))
    strides = helper.make_node("Conv", ["x", "w"], ["y"])
    strides.attribute.append(helper.make_attribute("strides", [2.0, 2.0]))
    case(out, "conv_float_strides", "invalid",
         model([strides], [value("x", [1, 1, 4, 4])], [value("y", [1, 1, 2, 2])], [tensor("w", [1, 1, 1, 1], 31)],
               check=False))
    # A weight also an input, declared otherwise than its initializer (ONNX Runtime
    # refuses it too).
    case(out, "weight_input_declared_otherwise", "invalid",
         relu_model([helper.make_node("MatMul", ["x", "w"], ["y"])], [value("x", [2, 4]), value("w", [4])],
                    [value("y", [2, 4])], [tensor("w", [4, 4], 34)]),
         "graph input 'w' is declared FLOAT[4] but its initializer holds FLOAT[4,4]")
    case(out, "weight_input_typed_otherwise", "invalid",
         relu_model([helper.make_node("MatMul", ["x", "w"], ["y"])],
                    [value("x", [2, 4]), value("w", [4, 4], TensorProto.DOUBLE)], [value("y", [2, 4])],
                    [tensor("w", [4, 4], 35)]),
         "graph input 'w' is declared DOUBLE[4,4] but its initializer holds FLOAT[4,4]")
    case(out, "random_bytes", "invalid", np.random.default_rng(32).integers(0, 256, 4096, np.uint8).tobytes())
    whole = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [value("x", [4, 64])], [value("y", [4, 64])],
                  [tensor("w", [64, 64], 33)]).SerializeToString()
    case(out, "truncated", "invalid", whole[: len(whole) * 2 // 3])
    case(out, "undefined_input", "invalid", relu_model([helper.make_node("Add", ["x", "nowhere"], ["y"])]))
    case(out, "cycle", "invalid",
         relu_model([helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                     helper.make_node("Relu", ["b"], ["y"])]))
    # Sizes beyond memory: an input of 3e10 elements, an intermediate of 3e10 elements
    # from small inputs, and dimensions whose product overflows 64 bits.
    case(out, "huge_input", "invalid",
         relu_model([helper.make_node("Relu", ["x"], ["y"])], [value("x", [30000, 1000, 1000])],
                    [value("y", [30000, 1000, 1000])]))
    case(out, "huge_intermediate", "invalid",
         relu_model([helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("ReduceSum", ["p"], ["y"])],
                    [value("a", [100000, 1]), value("b", [1, 300000])], [value("y", [1, 1])]))
    case(out, "overflowing_dimensions", "invalid",
         relu_model([helper.make_node("Relu", ["x"], ["y"])], [value("x", [1 << 40, 1 << 40])],
                    [value("y", [1 << 40, 1 << 40])]))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_odd_models.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    valid_models(out)
    invalid_models(out)
    with open(os.path.join(out, "cases.tsv"), "w") as f:
        for name, expectation, reason in CASES:
            f.write(f"{name}\t{expectation}\t{reason}\n")


if __name__ == "__main__":
    main()
