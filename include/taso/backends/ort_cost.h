// The ort target's measured costs: each operator as ONNX Runtime runs it (CPU execution
// provider, graph optimization level all, the thread count given), measured through the
// ONNX Runtime worker (ort_worker.h) on a one-operator model exported by our ONNX
// exporter, its weights as initializers so that ONNX Runtime prepacks them and fuses an
// activation as it does in the whole model. A run's time (the median of runs made back to
// back, as a model's operators run) less the fixed part of a run (the worker's call into
// ONNX Runtime, paid once per model run, not once per operator; found from chains of one
// and two of the smallest operator; and the passing in and out of inputs and outputs
// beyond one each, which inside a model are intermediates) is the operator's cost; a
// graph costs the sum of its operators' plus the call's fixed cost once. Kept in the
// cost cache under the ort device key.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "taso/backends/cost_cache.h"
#include "taso/backends/measured_cost.h"
#include "taso/backends/ort_worker.h"
#include "taso/ir/op.h"
#include "taso/ir/params.h"
#include "taso/ir/temporary_folder.h"

namespace taso {

class OrtCost : public MeasuredCost {
 public:
  // `cache` may be null (nothing kept between runs); `worker` must be started.
  OrtCost(std::unique_ptr<CostCache> cache, std::shared_ptr<OrtWorker> worker, int threads);
  ~OrtCost() override;
  std::string name() const override { return "ort"; }
  // The operator's measured time less the fixed cost of a run (the analytic estimate
  // where it cannot run in ONNX Runtime), in its region: ONNX Runtime runs convolutions
  // and the operators next to them that can in its blocked layout (NCHWc), and reorders
  // a tensor where such a chain meets another operator (a Split after merged
  // convolutions). A convolution's one-operator model pays both reorders, which a
  // convolution inside a chain does not: they are taken off its time, but for the input's
  // where no blocked operator makes the input (a graph input is plain: merged, two
  // convolutions of one graph input read it reordered once); an edge between a blocked
  // node and another pays one, charged to the reader.
  double NodeCost(const Graph& graph, NodeId n) override;
  double TotalCost(const Graph& graph) override;

 protected:
  std::optional<KernelRun> PrepareRun(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                                      absl::Span<const OutputType> outputs) override;
  // An operator that moves no data (its metrics: a Reshape, Flatten, Dropout): ONNX
  // Runtime gives its output its input's buffer, where its one-operator model copies it
  // (four Reshapes of [1, 32, 4096] between Relus: 6 us of 195 in the model, 46 us each
  // alone). It costs nothing but the reorders its neighbours' layouts need, as on the cpu
  // target, and counts for no operator in OperatorsAtMeanPrice.
  bool IsView(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
              absl::Span<const OutputType> outputs) const override;

 private:
  // Runs of a session of `graph`; nullopt where it cannot be built, written or loaded.
  std::optional<KernelRun> PrepareGraphRun(absl::StatusOr<Graph> graph);
  // What reordering a tensor of this shape costs: a pass over it, measured as an
  // addition of one value.
  double Reorder(const Shape& shape);
  // What a one-operator model's run costs beyond its operator, timed once on the
  // smallest models: the call into ONNX Runtime (once per model run, not per operator),
  // and each input fed and output passed out beyond the first (a Split's 36 pieces are
  // intermediates inside a model, not outputs: 70 of its 125 us alone).
  struct FixedCosts {
    double run = 0, per_input = 0, per_output = 0;
  };
  const FixedCosts& Fixed();
  static double WithoutOverhead(double run_seconds, double fixed_seconds);

  std::shared_ptr<OrtWorker> worker_;
  int threads_;
  TemporaryFolder model_dir_;  // the one-operator models
  int models_written_ = 0;
  std::optional<FixedCosts> fixed_;
};

// The device key the ort target's costs are kept under: runtime version, provider,
// threads and the processor, e.g. "ort-1.30.0-cpu-t1-Intel(R) Xeon(R) ...".
std::string OrtDevice(const std::string& version, int threads);

}  // namespace taso
