// The ort target's estimate of the written graph: its cost model prices operators timed
// one at a time, which misses what ONNX Runtime fuses or converts across operators and
// prices microsecond operators by runs whose fixed part is most of their time. Where the
// written graph differs from the input's, the differing nodes and their neighbours
// (FindDifferingRegions) are timed as two models against each other, warm, and the input
// against its region: the written graph is priced as the input less the part of its time
// the region saves.
#pragma once

#include <optional>

#include "taso/backends/runtime_timer.h"
#include "taso/ir/graph.h"
#include "taso/onnx/onnx_io.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/cost.h"

namespace taso::pipeline {

// The two graphs' costs, in seconds: the input's and the written one's.
struct Costs {
  double before = 0, after = 0;
};

// What the regions are timed with, and what their estimate starts from.
struct RegionTiming {
  RuntimeTimer& region;  // the input's region against the written one's
  RuntimeTimer& share;   // the whole input against its region
  Costs by_operators;    // both graphs priced by the cost model, every node alone
  // The speed check's record, where it ran: the input's time as it measured it.
  const std::optional<PipelineResult::SpeedCheck>& speed_check;
};

// The regions' record, and both graphs' costs from their timings.
struct RegionPricing {
  PipelineResult::RegionEstimate estimate;
  Costs costs;
};

// Where `written` differs from `input` (the input's graph as the runtime runs it: cleaned
// up) and its regions can be timed: `timing.region` times the input's region against the
// written one's (the part of its time the rewrite saves), and `timing.share` the whole
// input against its region (the part of the input's time the region takes). The input's
// cost is its time as the speed check timed it (else as the share's comparison did), and
// the written one's that less the product of the two parts: ratios of times taken
// together, so that the machine's speed, which drifts between timings, cancels. Where
// nothing differs and the speed check timed the input, both costs are the input's time
// (and the record says so). Else (nothing differs and nothing was timed, or the regions
// cannot be made or timed): nothing.
// The regions reach up to three hops out from the nodes that differ, while `cost` prices
// the input's region within 10 ms. `model` gives the opset the regions are written at.
// Both comparisons are made afresh on every run: whole regions time differently as the
// machine's state changes, and one kept from a single run (unlike an operator's cost,
// measured among many) stays as wrong as it was (LSTM's, timed in a machine's first
// minutes, put every later run's estimate at 1.36x beside 1.20x verified).
std::optional<RegionPricing> EstimateByRegions(const OnnxModel& model, const Graph& input, const Graph& written,
                                               CostModel& cost, const RegionTiming& timing);

}  // namespace taso::pipeline
