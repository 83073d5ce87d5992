// How it is decided: each variable (a dim_param, or an unnamed dimension) is given two
// other sizes, base + 1 + i and base + 2 + 2i for the i-th variable (so 2 and 3 for one
// variable built at 1; no two variables move alike), or base * (2 + i) and base * (3 + 2i)
// where the import took a power of two for want of a size (SymbolicDim::why_not_one: a
// model that divides an image by 32 builds at multiples of 32). The original model is imported again
// at those sizes, and so is the optimized model (written out at its sizes and read back
// with other input shapes: library operators infer their shapes again, shape arithmetic
// and Reshape targets folded at the old sizes fail to), and both run through the
// self-check, at one input scale (kSymbolicCheckScale). A variable kept passes at both sizes, jointly with the
// other kept ones. The sizes each value has at the three builds say how its dimensions are
// written.
#include "pipeline/symbolic_dims.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pipeline/output_checks.h"
#include "pipeline/stage_output.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_input_shapes.h"

namespace taso::pipeline {

namespace {

// One size variable of the inputs, and the two other sizes it is checked at.
struct Variable {
  std::string key, param;
  int64_t base = 1;
  std::array<int64_t, 2> others{};
  // Where it is checked as the sum of other variables and a constant (TiedCandidates):
  // their keys, the constant, and the size it has with them at their built sizes, which
  // values computed from them have.
  std::vector<std::string> sum_of;
  int64_t plus = 0;
  int64_t tied_base = 0;
};

std::vector<Variable> VariablesOf(const std::vector<SymbolicDim>& dims) {
  std::vector<Variable> vars;
  for (const SymbolicDim& d : dims) {
    bool seen = false;
    for (const Variable& v : vars) seen |= v.key == d.Key();
    if (seen) continue;
    const int64_t i = static_cast<int64_t>(vars.size());
    if (d.why_not_one.empty())
      vars.push_back({d.Key(), d.param, d.value, {d.value + 1 + i, d.value + 2 + 2 * i}});
    else  // the smallest power of two it builds at: its multiples keep what divides it
      vars.push_back({d.Key(), d.param, d.value, {d.value * (2 + i), d.value * (3 + 2 * i)}});
  }
  return vars;
}

// The inputs' shapes with the variables in `sizes` (by key) at those sizes, the rest at
// their built sizes; not the initializers also listed as inputs (of fixed shape).
absl::flat_hash_map<std::string, Shape> InputShapesAt(const OnnxModel& imported,
                                                      const absl::flat_hash_map<std::string, int64_t>& sizes) {
  absl::flat_hash_map<std::string, Shape> shapes;
  for (ValueId v : imported.graph.inputs())
    if (const Value& in = imported.graph.value(v); !in.is_weight()) shapes[in.name] = in.shape;
  for (const SymbolicDim& d : imported.symbolic_dims)
    if (auto it = sizes.find(d.Key()); it != sizes.end()) shapes[d.input][d.axis] = it->second;
  return shapes;
}

// The variables in `moved` at their `which`-th other size.
absl::flat_hash_map<std::string, int64_t> OtherSizes(const std::vector<Variable>& moved, int which) {
  absl::flat_hash_map<std::string, int64_t> sizes;
  for (const Variable& var : moved) sizes[var.key] = var.others[which];
  return sizes;
}

// The inputs' symbolic dimensions `dims` named again in `proto`, so that an import at
// other sizes folds the same shape arithmetic as the original's import (none that
// depends on them) and both graphs hold the same opaque nodes.
void NameSymbolicInputs(const std::vector<SymbolicDim>& dims, onnx::ModelProto& proto) {
  for (const SymbolicDim& d : dims)
    for (auto& in : *proto.mutable_graph()->mutable_input()) {
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      if (in.name() != d.input || d.axis < 0 || d.axis >= shape->dim_size()) continue;
      if (d.param.empty())
        shape->mutable_dim(d.axis)->clear_dim_value();
      else
        shape->mutable_dim(d.axis)->set_dim_param(d.param);
    }
}

// The optimized model as ONNX at its built sizes, without the declared types that an
// import at other sizes would hold it to, its inputs' symbolic dimensions named; its
// large weights without values, for an import that shares `optimized`'s (ImportBothAt).
absl::StatusOr<onnx::ModelProto> Portable(const OnnxModel& optimized, const std::vector<SymbolicDim>& dims) {
  OnnxModel fixed = optimized;
  fixed.symbolic_shapes.clear();
  ASSIGN_OR_RETURN(onnx::ModelProto proto, ExportOnnxWithoutWeights(fixed));
  proto.mutable_graph()->clear_value_info();
  for (auto& out : *proto.mutable_graph()->mutable_output()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  NameSymbolicInputs(dims, proto);
  return proto;
}

// Both builds at the other sizes of the moved variables, and the self-check's verdict.
struct Checked {
  std::array<Graph, 2> optimized;
  double difference = 0;
};

// The two models to build at other sizes: the input as read, and the optimized one as
// written (`portable`); each shares the weights of its graph as built.
struct Sources {
  const OnnxModel& imported;
  const onnx::ModelProto& portable;
  const Graph& optimized;
};

// The first value whose shape the graph as built knows and `at` does not, or null.
const Value* FirstShapeLost(const Graph& built, const Graph& at) {
  for (ValueId v = 0; v < at.num_values(); ++v) {
    const Value& value = at.value(v);
    if (value.shape_known || value.name.empty()) continue;
    const ValueId there = built.FindValue(value.name);
    if (there != kNoValue && built.value(there).shape_known) return &value;
  }
  return nullptr;
}

// Why the input as read does not build at `shapes` though its symbolic import did: what
// it computes there (its shape arithmetic folded at those sizes) fails to build, as
// where a decoder's attention mask is not as long as its cached and new tokens.
absl::Status NotTypedAt(const OnnxModel& imported, const absl::flat_hash_map<std::string, Shape>& shapes,
                        const Value& lost, const ImportOptions& options) {
  onnx::ModelProto fixed = *imported.source;
  SetInputShapes(shapes, fixed);
  ImportOptions as_static = options;
  as_static.input_shapes.clear();
  const absl::StatusOr<OnnxModel> built = ImportOnnx(fixed, as_static);
  return absl::InvalidArgumentError(
      absl::StrCat("the input does not compute at these sizes: ",
                   built.ok() ? absl::StrCat("its value '", lost.name, "' has no known shape there")
                              : std::string(built.status().message())));
}

// The input as read, imported with the variables at `sizes`, sharing the built graph's
// weights. Fails where a value typed at the sizes built is not typed there: the types of
// what the symbolic import leaves opaque come from the model built as static at those
// sizes (TypedAtBoundSizes), and where that build fails, everything after it is opaque
// and would pass any check.
absl::StatusOr<OnnxModel> ImportInputAt(const OnnxModel& imported,
                                        const absl::flat_hash_map<std::string, int64_t>& sizes,
                                        ImportOptions& options) {
  options.fold_shape_arithmetic = true;
  options.input_shapes = InputShapesAt(imported, sizes);
  options.external_data_dir = imported.external_data_dir;
  options.shared_weights = &imported.graph;
  options.keep_source = false;
  ASSIGN_OR_RETURN(OnnxModel at, ImportOnnx(*imported.source, options));
  if (const Value* lost = FirstShapeLost(imported.graph, at.graph))
    return NotTypedAt(imported, options.input_shapes, *lost, options);
  return at;
}

absl::StatusOr<BothAtSizes> ImportBothAt(const Sources& sources,
                                         const absl::flat_hash_map<std::string, int64_t>& sizes) {
  ImportOptions options;
  BothAtSizes both;
  ASSIGN_OR_RETURN(both.input, ImportInputAt(sources.imported, sizes, options));
  options.shared_weights = &sources.optimized;
  options.weights_left_out = true;
  ASSIGN_OR_RETURN(both.optimized, ImportOnnx(sources.portable, options));
  return both;
}

absl::StatusOr<Checked> CheckAt(const Sources& sources, const std::vector<Variable>& moved, uint64_t seed) {
  Checked checked;
  for (int which = 0; which < 2; ++which) {
    ASSIGN_OR_RETURN(BothAtSizes both, ImportBothAt(sources, OtherSizes(moved, which)));
    const OnnxModel &original = both.input, &optimized = both.optimized;
    ASSIGN_OR_RETURN(const SelfCheckCoverage coverage,
                     SelfCheck(original.graph, optimized.graph, seed, {kSymbolicCheckScale}));
    if (!coverage.mismatch.empty())
      return absl::FailedPreconditionError(absl::StrCat("the self-check differs there: ", coverage.mismatch));
    checked.difference = std::max(checked.difference, coverage.max_difference);
    checked.optimized[which] = std::move(both.optimized.graph);
  }
  return checked;
}

// The variables kept, and their check; `why_fixed` gets the reason for each other one.
struct Kept {
  std::vector<Variable> vars;
  std::optional<Checked> checked;
};

// Whether the input as read builds with the variables at both their other sizes.
bool InputBuildsAt(const OnnxModel& imported, const std::vector<Variable>& moved) {
  for (int which = 0; which < 2; ++which) {
    ImportOptions options;
    if (!ImportInputAt(imported, OtherSizes(moved, which), options).ok()) return false;
  }
  return true;
}

// `v` checked as the sum of `terms` and `plus`.
Variable Tied(const Variable& v, const std::vector<const Variable*>& terms, int64_t plus) {
  Variable tied = v;
  tied.plus = plus;
  tied.tied_base = plus;
  tied.others = {plus, plus};
  for (const Variable* t : terms) {
    tied.sum_of.push_back(t->key);
    tied.tied_base += t->base;
    for (int which = 0; which < 2; ++which) tied.others[which] += t->others[which];
  }
  return tied;
}

// What a variable the input itself does not build apart from the others may be: the sum
// of two kept variables, as a decoder's attention mask spans the cached and the new
// tokens (total = past + seq), else a kept one plus 1, as it does where the export fixed
// the new tokens at one. A candidate that moves as a kept variable does is left out: the
// written names would not tell them apart.
std::vector<Variable> TiedCandidates(const Variable& v, const std::vector<Variable>& kept) {
  std::vector<Variable> candidates;
  for (size_t a = 0; a < kept.size(); ++a)
    for (size_t b = a + 1; b < kept.size(); ++b) candidates.push_back(Tied(v, {&kept[a], &kept[b]}, 0));
  for (const Variable& a : kept) candidates.push_back(Tied(v, {&a}, 1));
  std::erase_if(candidates, [&](const Variable& c) {
    return std::any_of(kept.begin(), kept.end(), [&](const Variable& k) { return k.others == c.others; });
  });
  return candidates;
}

// Each variable that failed because the input itself does not build at its sizes, kept
// where a tie to the kept ones passes with them.
void KeepTied(const Sources& sources, const std::vector<Variable>& failed, uint64_t seed, Kept& kept,
              absl::flat_hash_map<std::string, std::string>& why_fixed) {
  for (const Variable& v : failed) {
    std::vector<Variable> apart = kept.vars;
    apart.push_back(v);
    if (InputBuildsAt(sources.imported, apart)) continue;  // the optimized graph failed: no tie helps
    for (Variable& candidate : TiedCandidates(v, kept.vars)) {
      std::vector<Variable> with = kept.vars;
      with.push_back(candidate);
      // Fails at its first import where the input does not build with the candidate.
      absl::StatusOr<Checked> checked = CheckAt(sources, with, seed);
      if (!checked.ok()) continue;
      kept = Kept{std::move(with), std::move(*checked)};
      why_fixed.erase(v.key);
      break;
    }
  }
}

absl::StatusOr<Kept> KeptVariables(const Sources& sources, const std::vector<Variable>& vars, uint64_t seed,
                                   absl::flat_hash_map<std::string, std::string>& why_fixed) {
  absl::StatusOr<Checked> joint = CheckAt(sources, vars, seed);
  if (joint.ok()) return Kept{vars, std::move(*joint)};
  std::vector<Variable> passing;
  for (const Variable& v : vars) {
    absl::Status alone = vars.size() == 1 ? joint.status() : CheckAt(sources, {v}, seed).status();
    if (alone.ok())
      passing.push_back(v);
    else
      why_fixed[v.key] = std::string(alone.message());
  }
  if (passing.empty()) return Kept{};
  absl::StatusOr<Checked> again = CheckAt(sources, passing, seed);
  if (again.ok()) {
    Kept kept{passing, std::move(*again)};
    std::vector<Variable> failed;
    for (const Variable& v : vars)
      if (why_fixed.contains(v.key)) failed.push_back(v);
    KeepTied(sources, failed, seed, kept, why_fixed);
    return kept;
  }
  for (const Variable& v : passing)
    why_fixed[v.key] = absl::StrCat("holds alone but not with the other dimensions: ", again.status().message());
  return Kept{};
}

// One dimension's name from its sizes at the built and the two other sizes: fixed when
// they agree, a kept variable's name when it moves as that variable does, else unnamed.
std::optional<std::string> DimName(int64_t base, int64_t a, int64_t b, const std::vector<Variable>& kept) {
  if (a == base && b == base) return std::nullopt;
  for (const Variable& v : kept)
    if ((v.base == base || (v.tied_base > 0 && v.tied_base == base)) && v.others[0] == a && v.others[1] == b)
      return v.param;
  return std::string();
}

absl::flat_hash_map<std::string, DimNames> DimNamesOf(const Graph& built, const Checked& checked,
                                                      const std::vector<Variable>& kept) {
  absl::flat_hash_map<std::string, DimNames> names;
  for (ValueId v = 0; v < built.num_values(); ++v) {
    const Value& value = built.value(v);
    if (!value.shape_known) continue;
    DimNames dims(value.shape.size());
    bool symbolic = false;
    std::array<const Value*, 2> at{};
    for (int which = 0; which < 2; ++which) {
      const ValueId id = checked.optimized[which].FindValue(value.name);
      if (id != kNoValue) at[which] = &checked.optimized[which].value(id);
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      const bool comparable = at[0] && at[1] && at[0]->shape.size() == dims.size() &&
                              at[1]->shape.size() == dims.size() && at[0]->shape_known && at[1]->shape_known;
      dims[d] = comparable ? DimName(value.shape[d], at[0]->shape[d], at[1]->shape[d], kept) : std::string();
      symbolic |= dims[d].has_value();
    }
    if (symbolic) names[value.name] = std::move(dims);
  }
  return names;
}

void Report(const std::vector<Variable>& vars, const std::vector<SymbolicDim>& dims, const Kept& kept,
            const absl::flat_hash_map<std::string, std::string>& why_fixed, PipelineResult& result) {
  for (const Variable& v : vars) {
    PipelineResult::SymbolicDimension r;
    r.name = v.key;
    r.built_at = v.base;
    for (const SymbolicDim& d : dims) {
      if (d.Key() != v.key) continue;
      r.given |= d.given;
      if (!d.why_not_one.empty()) r.why_not_one = d.why_not_one;
    }
    const auto as_kept =
        std::find_if(kept.vars.begin(), kept.vars.end(), [&](const Variable& k) { return k.key == v.key; });
    r.kept = as_kept != kept.vars.end();
    const Variable& checked = r.kept ? *as_kept : v;  // a tied one at its terms' sizes
    r.sum_of = checked.sum_of;
    r.sum_plus = checked.plus;
    if (kept.checked) r.checked_at.assign(checked.others.begin(), checked.others.end());
    if (auto it = why_fixed.find(v.key); it != why_fixed.end()) r.why_fixed = it->second;
    result.symbolic_dims.push_back(std::move(r));
  }
  if (kept.checked) result.symbolic_check_difference = kept.checked->difference;
}

}  // namespace

absl::Status DecideSymbolicDims(const OnnxModel& imported, const PipelineOptions& options, OnnxModel& optimized,
                                PipelineResult& result) {
  optimized.symbolic_shapes.clear();
  if (imported.symbolic_dims.empty() || imported.source == nullptr) return absl::OkStatus();
  const std::vector<Variable> vars = VariablesOf(imported.symbolic_dims);
  absl::flat_hash_map<std::string, std::string> why_fixed;
  Kept kept;
  if (!options.self_check) {
    for (const Variable& v : vars) why_fixed[v.key] = "the self-check is off, so nothing shows it holds at other sizes";
  } else {
    std::vector<std::string> keys;
    for (const Variable& v : vars) keys.push_back(v.key);
    Announce(options, "symbolic dimensions",
             absl::StrCat("both graphs built and self-checked at other sizes of ", absl::StrJoin(keys, ", ")));
    ASSIGN_OR_RETURN(const onnx::ModelProto portable, Portable(optimized, imported.symbolic_dims));
    ASSIGN_OR_RETURN(kept, KeptVariables({imported, portable, optimized.graph}, vars, options.seed, why_fixed));
  }
  if (kept.checked) optimized.symbolic_shapes = DimNamesOf(optimized.graph, *kept.checked, kept.vars);
  Report(vars, imported.symbolic_dims, kept, why_fixed, result);
  return absl::OkStatus();
}

absl::StatusOr<BothAtSizes> BuildBothAt(const OnnxModel& imported, const OnnxModel& optimized,
                                        const absl::flat_hash_map<std::string, int64_t>& sizes) {
  if (imported.source == nullptr) return absl::FailedPreconditionError("the model keeps no source to build again");
  ASSIGN_OR_RETURN(const onnx::ModelProto portable, Portable(optimized, imported.symbolic_dims));
  return ImportBothAt({imported, portable, optimized.graph}, sizes);
}

}  // namespace taso::pipeline
