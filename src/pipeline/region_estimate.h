// The ort target's estimate of the written graph: its cost model prices operators timed
// one at a time, which misses what ONNX Runtime fuses or converts across operators and
// prices microsecond operators by runs whose fixed part is most of their time. Where the
// written graph differs from the input's, the differing nodes and their neighbours
// (FindDifferingRegions) are timed as two models against each other, warm, and the input
// against its region: the written graph is priced as the input less the part of its time
// the region saves.
#pragma once

#include "taso/backends/runtime_timer.h"
#include "taso/ir/graph.h"
#include "taso/onnx/onnx_io.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/cost.h"

namespace taso::pipeline {

// Where `written` differs from `input` (the input's graph as the runtime runs it: cleaned
// up) and its regions can be timed, sets result.region_estimate: `region_timer` times the
// input's region against the written one's (the part of its time the rewrite saves), and
// `share_timer` the whole input against its region (the part of the input's time the
// region takes). cost_before becomes the input's time as the speed check timed it (else
// as the share's comparison did), and cost_after that less the product of the two parts:
// ratios of times taken together, so that the machine's speed, which drifts between
// timings, cancels. Where nothing differs and the speed check timed the input, both
// costs become the input's time (and result.region_estimate says so). Else (nothing
// differs and nothing was timed, or the regions cannot be made or timed) leaves `result`
// as it is.
// The regions reach up to three hops out from the nodes that differ, while `cost` prices
// the input's region within 10 ms. `model` gives the opset the regions are written at.
// Both comparisons are made afresh on every run: whole regions time differently as the
// machine's state changes, and one kept from a single run (unlike an operator's cost,
// measured among many) stays as wrong as it was (LSTM's, timed in a machine's first
// minutes, put every later run's estimate at 1.36x beside 1.20x verified).
void EstimateByRegions(const OnnxModel& model, const Graph& input, const Graph& written, CostModel& cost,
                       RuntimeTimer& region_timer, RuntimeTimer& share_timer, PipelineResult& result);

}  // namespace taso::pipeline
