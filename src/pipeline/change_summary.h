// What the summary says was left alone, how the applied rules read, and how it names the
// graph the speed check chose when that is not the search's.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "taso/ir/graph.h"
#include "taso/rules/rules.h"

namespace taso::pipeline {

// The graph's opaque nodes, by why the library does not model them ("holds subgraphs,
// which are not searched" (If, Loop, Scan), "not in the operator library", "computes on
// int64", "reads a tensor of unknown shape", "attributes or inputs the library does not
// represent") and then by ONNX operator type, with counts.
std::map<std::string, std::map<std::string, int>> LeftAlone(const Graph& graph);

// Whether any node computes with the library's operators (constants aside): where none
// does, nothing could be optimized.
bool HasLibraryComputation(const Graph& graph);

// Each applied rule's form ("Conv2D, Relu -> Conv2D"), by the name the search reports
// (a rule's, an instance's "<rule>/<index>", either read the other way with "~" after
// it, then written target -> source).
std::map<std::string, std::string> RuleForms(const std::vector<Rule>& rules, const std::map<std::string, int>& applied);

// The graph an egraph::Alternative's `pricing` names: "the e-graph's extraction by
// analytic costs" (with each operator at the input's mean price, for
// egraph::kOperatorsCountedPricing), or "the graph with its gated mixtures merged"
// (rewrite_gated_mixtures.h).
std::string AlternativeName(absl::string_view pricing);

}  // namespace taso::pipeline
