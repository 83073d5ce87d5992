// Helpers for tests: small ONNX models written by hand, temporary files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "taso/executor.h"
#include "taso/graph.h"
#include "taso/onnx_io.h"
#include "taso/rules.h"

namespace taso::testing {

// A model with the default opset at `opset` and an empty graph.
onnx::ModelProto NewModel(int opset = 13);
void AddInput(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> shape,
              int elem_type = onnx::TensorProto::FLOAT);
void AddOutput(onnx::ModelProto& m, const std::string& name);
void AddFloatInit(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> shape, float fill = 0.5f);
void AddInt64Init(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> values);
onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name = "");
void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v);
void SetIntsAttr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v);

// x [1,4,8,8] -> Conv (3x3, pads 1, no bias) -> Relu -> y: the convolution can take the
// relu in.
onnx::ModelProto SmallConvReluModel();

// A fresh directory under the build tree for this test's files.
std::filesystem::path TempDir(const std::string& name);
void WriteFile(const std::filesystem::path& p, const std::string& bytes);

// A graph built from library operators.
const OpDef* Op(const std::string& name);
Tensor<float> RandomTensor(Shape shape, uint64_t seed);
// A weight of random values in [-1, 1].
ValueId AddWeight(Graph& g, const std::string& name, Shape shape, uint64_t seed);
// A one-output library operator whose output is named `out`.
ValueId AddOp(Graph& g, const std::string& op, std::vector<ValueId> inputs, const std::string& out, Params p = {});

// The shipped rule database, rules/taso_k3.pb, read once.
const RuleSet& ShippedRules();

// One side of a rule as text: its outputs in order, comma-separated, each an expression
// over the rule's inputs, "Op{param=value, ...}(arg, ...)", with "[k]" after an operator
// of several outputs for its k-th output. Parameters are written as Params::ToString
// writes values (symbolic sizes left out), and the braces only where there are some.
// E.g. "Add(Split{axis=0}(Concat{axis=0}(B, A))[0], Split{axis=0}(Concat{axis=0}(B, A))[1])".
std::string RuleSideText(const Rule& rule, const RuleGraph& side);

// The shipped rules whose source and target read as `source` and `target` (RuleSideText's
// form, spaces ignored) up to a renaming of the inputs, and whose inputs all have rank
// `input_rank` (-1: any). A description need not give every parameter: those it gives
// must be the rule's. E.g. ("Add(A, B)", "Add(Split(Concat{axis=0}(B, A))[0],
// Split(Concat(B, A))[1])", 2) is the rule writing A + B through a concatenation along
// the first axis, for matrices.
std::vector<const Rule*> ShippedRulesLike(absl::string_view source, absl::string_view target, int input_rank = -1);
// The one shipped rule like that, found by content so that tests do not depend on the
// generated rule names; fails the test when no rule or several rules are like that.
const Rule& ShippedRuleLike(absl::string_view source, absl::string_view target, int input_rank = -1);

}  // namespace taso::testing
