// Dense mixtures of experts merged into one wide layer and one stacked layer, the form a
// person writes by hand for a runtime that pays for each product it runs.
//
// A sum whose terms include gate[..., e] * (h_e W_e + b_e) for every column e of one gate
// [..., n] (PyTorch's `sum(g[..., e:e+1] * expert_e(x))`), each product W_e of one shape
// and read by its term alone, becomes
//     reshape(reshape(H, [..., n, h]) * reshape(gate, [..., n, 1]), [..., n h]) . [W_0; ...; W_n-1]
//     + gate . [b_0; ...; b_n-1]
// plus the sum's other terms, where H = [h_0 ... h_n-1] side by side; and where every h_e
// is act(x V_e + c_e) of one x (each read by its expert alone), H is act(x [V_0 ... V_n-1]
// + [c_0 ... c_n-1]), one product.
//
// The rule language cannot state the grouped scale (a Reshape has no axioms), so this
// rewrite is not proved: the pipeline offers its result as one more graph for the speed
// check, which self-checks it against the input on the reference kernels and writes it
// only where it runs measurably faster (docs/ARCHITECTURE.md, "Rewrites checked only by
// execution").
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/ir/graph.h"

namespace taso {

// How the pipeline names this rewrite: as an applied rewrite (PipelineResult's
// rules_applied) and as the graph the speed check chose (egraph::Alternative::pricing).
inline constexpr absl::string_view kGatedMixtureRewrite = "gated_mixture_merge";
inline constexpr absl::string_view kGatedMixturesMerged = "gated mixtures merged";

struct GatedMixturesMerged {
  Graph graph;
  int mixtures = 0;  // how many were merged; 0: `graph` is the input
};

// Every such mixture of `graph` merged, as above: at any rank from 2, each layer a Gemm
// (at rank 2) or MatMul and Add as the input has it, and written in its form.
absl::StatusOr<GatedMixturesMerged> MergeGatedMixtures(const Graph& graph);

}  // namespace taso
