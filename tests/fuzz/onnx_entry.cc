// The onnx_import target, and the checks the onnx_mutate target runs on each mutant.
#include "onnx_entry.h"
#include <cmath>

#include "absl/strings/str_cat.h"
#include "fuzz_check.h"
#include "fuzz_entries.h"
#include "taso/ir/executor.h"
#include "taso/onnx/onnx_io.h"

namespace taso::fuzz {
namespace {

// Graphs with more elements than this (over all values) are not run: a run must stay fast.
constexpr int64_t kMaxRunElements = int64_t{1} << 18;

// Whether the reference executor can run the graph quickly: library operators only,
// float inputs of known shape, and few elements in all.
bool SmallLibraryGraph(const Graph& graph) {
  for (int n = 0; n < graph.num_nodes(); ++n)
    if (graph.node(n).op->is_opaque()) return false;
  int64_t elements = 0;
  for (int v = 0; v < graph.num_values(); ++v) {
    const Value& value = graph.value(v);
    if (!value.shape_known || value.dtype != DataType::kFloat32) return false;
    int64_t n = 1;
    for (int64_t d : value.shape) {
      if (d < 0 || d > kMaxRunElements) return false;
      n *= d;
      if (n > kMaxRunElements) return false;
    }
    elements += n;
    if (elements > kMaxRunElements) return false;
  }
  return true;
}

// The outputs of a small graph on random inputs; unset where it cannot run (an error is
// a Status, which is fine: only a crash is a finding).
std::optional<TensorMap> RunIfSmall(const Graph& graph) {
  if (!SmallLibraryGraph(graph)) return std::nullopt;
  auto outputs = RunReference(graph, RandomInputs(graph, 1));
  if (!outputs.ok()) return std::nullopt;
  return *std::move(outputs);
}

// The same outputs, element for element (a NaN where the other has a NaN: weights may
// hold any bits).
bool SameOutputs(const TensorMap& a, const TensorMap& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.shape != t.shape) return false;
    for (size_t i = 0; i < t.data.size(); ++i) {
      const float x = t.data[i], y = it->second.data[i];
      if (x != y && !(std::isnan(x) && std::isnan(y))) return false;
    }
  }
  return true;
}

// The model exported and imported again; unset where the export refuses it (it says why).
std::optional<OnnxModel> ExportAndImport(const OnnxModel& model, const ImportOptions& options) {
  auto exported = ExportOnnx(model);
  if (!exported.ok()) return std::nullopt;
  auto again = ImportOnnx(*exported, options);
  FUZZ_CHECK(again.ok(), "an exported model does not import again: ", again.status().ToString(), "\n",
             model.graph.DebugString());
  return *std::move(again);
}

// An imported model exports (or the export says why not), and what it exports imports
// again as the same computation. The first export may name what the file left unnamed,
// so the second round trip must give the graph the first one gave.
void CheckRoundTrip(const OnnxModel& model, const ImportOptions& options) {
  const std::optional<OnnxModel> once = ExportAndImport(model, options);
  if (!once) return;
  const std::optional<OnnxModel> twice = ExportAndImport(*once, options);
  FUZZ_CHECK(twice.has_value(), "a model exported once does not export again:\n", once->graph.DebugString());
  FUZZ_CHECK(twice->graph.StructuralHash() == once->graph.StructuralHash(), "the round trip changed the graph:\n",
             once->graph.DebugString(), "\nbecame\n", twice->graph.DebugString());
  const std::optional<TensorMap> before = RunIfSmall(model.graph);
  if (!before) return;
  const std::optional<TensorMap> after = RunIfSmall(once->graph);
  FUZZ_CHECK(after.has_value(), "the graph runs but its round trip does not:\n", model.graph.DebugString(),
             "\nbecame\n", once->graph.DebugString());
  FUZZ_CHECK(SameOutputs(*before, *after), "the round trip changed what the graph computes:\n",
             model.graph.DebugString(), "\nbecame\n", once->graph.DebugString());
}

}  // namespace

void CheckModel(const onnx::ModelProto& model) {
  for (bool fold : {false, true}) {
    ImportOptions options;
    options.fold_shape_arithmetic = fold;
    auto imported = ImportOnnx(model, options);
    if (imported.ok()) CheckRoundTrip(*imported, options);
  }
}

int FuzzOnnxImport(const uint8_t* data, size_t size) {
  onnx::ModelProto model;
  if (model.ParseFromArray(data, static_cast<int>(size))) CheckModel(model);
  return 0;
}

}  // namespace taso::fuzz
