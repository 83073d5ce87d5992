// Helpers for tests: small ONNX models written by hand, temporary files.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "taso/ir/executor.h"
#include "taso/ir/graph.h"
#include "taso/onnx/onnx_io.h"
#include "taso/rewrite/cost.h"

namespace taso::testing {

// Prices every node alike, as no runtime does: a stand-in for prices measured one operator
// at a time that miss what the analytic model sees (a chain of products in either order
// costs the same by it).
class NodeCountCost : public CostModel {
 public:
  std::string name() const override { return "node-count"; }
  double NodeCost(const Graph&, NodeId) override { return 1e-6; }
};

// A model with the default opset at `opset` and an empty graph.
onnx::ModelProto NewModel(int opset = 13);
void AddInput(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> shape,
              int elem_type = onnx::TensorProto::FLOAT);
void AddOutput(onnx::ModelProto& m, const std::string& name);
void AddFloatInit(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> shape, float fill = 0.5f);
void AddInt64Init(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> values);
onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name = "");
// Dimension `axis` of graph input `input` (to give it a dim_param, say).
onnx::TensorShapeProto::Dimension* InputDim(onnx::ModelProto& m, int input, int axis);
void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v);
void SetIntsAttr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v);
void SetStringAttr(onnx::NodeProto* n, const std::string& name, const std::string& v);

// x [1,4,8,8] -> Conv (3x3, pads 1, no bias) -> Relu -> y: the convolution can take the
// relu in.
onnx::ModelProto SmallConvReluModel();

// x [2,3,8] -> LayerNormalization at opset 15 (ONNX Runtime's operator, as its optimizer
// writes it before ONNX's opset 17 has one) -> MatMul -> y [2,3,4].
onnx::ModelProto RuntimeLayerNormModel();

// x [N,8,12] (N symbolic, built at 1) viewed as [N,8,3,4] with the target computed from
// Shape(x), as PyTorch writes `x.view(b, t, h, d // h)` under dynamic axes, then y = the
// view times a 4x4 matrix w (AddFloatInit's values from 0.25).
onnx::ModelProto ComputedViewModel();

// A fresh directory under the build tree for this test's files.
std::filesystem::path TempDir(const std::string& name);
void WriteFile(const std::filesystem::path& p, const std::string& bytes);
// This process's private memory (RssAnon), in bytes; -1 where /proc does not say.
int64_t PrivateMemoryBytes();

// A graph built from library operators.
const OpDef* Op(const std::string& name);
Tensor<float> RandomTensor(Shape shape, uint64_t seed);
// A weight of random values in [-1, 1].
ValueId AddWeight(Graph& g, const std::string& name, Shape shape, uint64_t seed);
// A one-output library operator whose output is named `out`.
ValueId AddOp(Graph& g, const std::string& op, std::vector<ValueId> inputs, const std::string& out, Params p = {});
// x [8, 16] times the concatenation of two weights (w1 [16, 32], w2 [16, 24]) along
// columns, named "both": one weight-only node, then the product "y".
Graph ConcatenatedWeightLayer();
// How many nodes of `g` run library operator `op`.
int CountOps(const Graph& g, const std::string& op);
// How many nodes of `g` are opaque (outside the operator library).
int OpaqueNodes(const Graph& g);

// `proto` imported as taso-opt imports it (shape arithmetic folded); the test fails where
// it does not import.
OnnxModel ImportFolded(const onnx::ModelProto& proto);

// The graph's operators by name (an opaque node by its ONNX op_type), with repeats.
std::multiset<std::string> OperatorNames(const Graph& graph);

// A command's exit code and its stdout and stderr together.
struct CommandResult {
  int code;
  std::string output;
};
CommandResult RunCommand(const std::string& command);

// Parameters: an axis; an axis and the sizes of the pieces it is split into; a dense
// convolution of stride 1 and same padding with `activation`.
Params Axis(int64_t axis);
Params Pieces(int64_t axis, std::vector<int64_t> sizes);
Params DenseSameConv(const std::string& activation);

// Why ImportOnnx refuses `m`; empty where it imports.
std::string ImportError(const onnx::ModelProto& m, const ImportOptions& options = {});
// The largest difference between the outputs of `a` and `b` on the same random inputs
// (drawn from `seed`), both run by the reference executor.
double OutputDifference(const Graph& a, const Graph& b, uint64_t seed = 7);
// (x . y) . z with x [256, 4], y [4, 256], z [256, 4], all run-time tensors: this order
// makes a [256, 256] product, x . (y . z) a [4, 4] one, 64 times less work.
Graph ProductChain();

// A dense mixture of experts as PyTorch exports one at 2-D: gate = Softmax(x Wg^T + bg)
// over x [rows, d]; y = the sum over e of Slice(gate, e, e + 1, axis 1) *
// (Relu(x V_e^T + c_e) W_e^T + b_e), Gemms with transB, hidden units [rows, h].
struct MixtureForm {
  int experts = 3;
  int64_t rows = 4, d = 6, h = 5;
  bool residual = false;     // y = x + the terms, added in reverse column order
  int summed = -1;           // only experts 0 .. summed - 1 in the sum (-1: all)
  bool shared_input = true;  // false: odd experts' first layers read Tanh(x)
};
Graph GatedMixture(const MixtureForm& form);

// PyTorch's own export of `pattern` of bench/exports/patterns.py (/usr/bin/python3, torch
// 1.13), imported with `options`.
OnnxModel TorchPatternExport(const std::string& pattern, const ImportOptions& options = {});

// Waits up to `seconds` for the child process to end: its wait status, or -1 where it did
// not (it is then killed, so that no test leaves one running).
int WaitForExit(int child_pid, double seconds);

// Sets (or, given nullopt, unsets) an environment variable for the scope, putting back
// what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace taso::testing
