// How rules see an operator: the parameter choices taso-gen enumerates, the parameters as
// rules state them, where output dimensions come from (TASO's split trees) and the
// operator in the verifier's logic. The generator, the matcher and the verifier see
// operators through this part of OpDef (OpDef::rule_form()).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "taso/ir/op_types.h"
#include "taso/ir/params.h"

namespace taso {

// Where one output dimension comes from, for tracking concatenation history (TASO's split
// trees): a copy of an input dimension, the concatenation of the inputs along a dimension,
// or one part of a concatenated input dimension. kNew: a dimension computed afresh.
struct DimSource {
  enum Kind { kNew, kCopy, kConcat, kSplitPart } kind = kNew;
  int input = 0;  // kCopy, kSplitPart: which input
  int dim = 0;    // kCopy, kConcat, kSplitPart: which dimension of the input(s)
  static DimSource Copy(int input, int dim) { return {kCopy, input, dim}; }
};
using DimSources = std::vector<std::vector<DimSource>>;  // per output, per dimension

// How taso-gen enumerates an operator: one entry per parameter choice.
enum class GenRole : uint8_t {
  kAny,
  kActivation,  // depends on an activation input (what a convolution or pool reads)
  kWeight,      // depends only on weights and constants (a convolution kernel)
  kScalar,      // rank 0
  kTensor,      // rank 1 or more
  kMatrix,      // rank 2
  kBias,        // a per-column bias: a weight vector that only such positions read
};
struct GeneratorVariant {
  std::string label;  // e.g. "s2,same,relu"
  Params params;
  int arity = 1;
  std::array<GenRole, 3> roles{};
  int rank = -1;                        // every input must have this rank (-1: any)
  bool commutative = false;             // inputs enumerated in one order only
  bool same_shapes = false;             // inputs must have equal shapes (no broadcasting)
  bool same_kind = false;               // inputs all activations or all weights, not mixed
  bool inputs_only = false;             // reads graph inputs only
  uint8_t graph_input_only_inputs = 0;  // bit i: input i reads graph inputs only
  uint8_t shape_only_inputs = 0;        // bit i: only input i's shape matters, not its values
  // The value depends only on the output's shape, not on the inputs' values (the inputs
  // only say which shape): the generator then takes the first input giving that shape.
  bool constant_output = false;
  // Cuts its input where it was concatenated (TASO's split trees). The contract: the
  // operator's "axis" parameter names the dimension, and the generator passes the cut as
  // the "sizes" parameter (see CutAxis / WithCut in taso/ir/op_variants.h).
  bool split_at_concat = false;
  // Parameters that are part of what the operator is: never made a rule variable even
  // where variants differ in them.
  std::vector<std::string> fixed_params;
  // Enumerated only where taso-gen's --ops names the operator, never in the default set
  // (whose database would grow by rules the shipped ones do not need).
  bool only_when_named = false;

  // Whether inputs of these shapes meet the variant's shape conditions (scalar or tensor
  // roles, rank, equal shapes). They are part of what the variant means in a rule: an
  // element-wise Add in a rule adds tensors of one shape and never broadcasts.
  bool AcceptsShapes(absl::Span<const Shape> inputs) const;
};

// How taso-verify writes one application of an operator in the signature of
// axioms/signature.smt2: output k is functions[k] applied to the integer parameters
// `params` (name and value, in order), then to the inputs. A value becomes an integer as
// it is, a square pair [v, v] as v, a string as the signature constant of its upper-case
// spelling ("same" -> SAME); a parameter bound to a rule variable is that variable.
struct SmtForm {
  std::vector<std::string> functions;
  std::vector<std::pair<std::string, ParamValue>> params;
};

class OpRuleForm {
 public:
  virtual ~OpRuleForm() = default;

  // The operator's name (OpSemantics::name), as rules and error messages spell it.
  virtual absl::string_view name() const = 0;

  // The parameter choices taso-gen enumerates; empty: not in the generator's set.
  virtual std::vector<GeneratorVariant> GeneratorVariants() const { return {}; }

  // The parameters as rules state them (padding as a mode, grouping as dense or
  // depthwise), for matching rules against imported nodes; nullopt when no rule form
  // means exactly the same. The default: the parameters as they are.
  virtual std::optional<Params> RuleParams(const Params& params, absl::Span<const InputInfo> inputs) const {
    return params;
  }

  // The node on row tensors at another rank (taso/passes/row_form.h): inputs marked in `rows`
  // are activations [L..., f] whose leading dimensions only count rows, to be computed at
  // rank `to_rank` (more or fewer leading dimensions, the same rows in all); the others
  // are read as they are. Returns the parameters that compute the same there (an axis
  // moved to the new last one), or nullopt where the node does not act row by row (the
  // default). Callers check the outputs' shapes at the new rank by shape inference.
  virtual std::optional<Params> AtRowRank(const Params& params, absl::Span<const InputInfo> inputs,
                                          const std::vector<bool>& rows, int to_rank) const {
    return std::nullopt;
  }

  // How each output dimension relates to the input dimensions (default: all new).
  virtual DimSources DimensionSources(const Params& params, absl::Span<const InputInfo> inputs,
                                      absl::Span<const OutputType> outputs) const;

  // The operator in the verifier's logic; an error when it has no encoding there (the
  // default) or not with these parameters.
  virtual absl::StatusOr<SmtForm> Smt(const Params& params, int num_inputs, int num_outputs) const;
};

}  // namespace taso
