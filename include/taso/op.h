// Operator definitions and the registry. Everything specific to one operator lives in
// its own file under ops/; generic code reaches operators only through this interface.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "taso/params.h"
#include "taso/symbolic.h"
#include "taso/tensor.h"

namespace taso {

class OnnxImportNode;
class OnnxExportNode;

// What shape inference knows about one input.
struct InputInfo {
  bool present = true;  // false for an absent optional input
  DataType dtype = DataType::kFloat32;
  Shape shape;
  bool shape_known = true;
  const TensorData* constant = nullptr;  // set when the value is known ahead of time
};

// The inferred type of one output.
struct OutputType {
  DataType dtype = DataType::kFloat32;
  Shape shape;
  bool shape_known = true;
};

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
};
struct GeneratorVariant {
  std::string label;  // e.g. "s2,same,relu"
  Params params;
  int arity = 1;
  std::array<GenRole, 3> roles{};
  int rank = -1;                 // every input must have this rank (-1: any)
  bool commutative = false;      // inputs enumerated in one order only
  bool same_shapes = false;      // inputs must have equal shapes (no broadcasting)
  bool same_kind = false;        // inputs all activations or all weights, not mixed
  bool inputs_only = false;      // reads graph inputs only
  uint8_t shape_only_inputs = 0; // bit i: only input i's shape matters, not its values
  // The value depends only on the output's shape, not on the inputs' values (the inputs
  // only say which shape): the generator then takes the first input giving that shape.
  bool constant_output = false;
  // Cuts its input where it was concatenated (TASO's split trees). The contract: the
  // operator's "axis" parameter names the dimension, and the generator passes the cut as
  // the "sizes" parameter (see CutAxis / WithCut in generator/op_set.h).
  bool split_at_concat = false;
  // Parameters that are part of what the operator is: never made a rule variable even
  // where variants differ in them.
  std::vector<std::string> fixed_params;

  // Whether inputs of these shapes meet the variant's shape conditions (scalar or tensor
  // roles, rank, equal shapes). They are part of what the variant means in a rule: an
  // element-wise Add in a rule adds tensors of one shape and never broadcasts.
  bool AcceptsShapes(absl::Span<const Shape> inputs) const;
};

// Inputs and outputs of one kernel invocation in scalar domain S.
template <typename S>
struct KernelArgs {
  std::vector<const Tensor<S>*> in;        // nullptr for absent or non-numeric inputs
  std::vector<const TensorData*> constant;  // per input: its constant data, or nullptr
  std::vector<Tensor<S>*> out;              // allocated with the inferred shapes
};

// Work done by one operator instance, for the analytic cost model.
struct OpMetrics {
  double flops = 0;
  double bytes = 0;  // bytes read plus bytes written
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

// A node's effect on one input of shape [N, C, ...] as a map per channel (dimension 1):
// y = x * scale + shift, the other inputs being constants.
struct ChannelAffine {
  std::vector<float> scale, shift;  // C each
};

class OpDef {
 public:
  virtual ~OpDef() = default;

  // Unique name within the library, e.g. "Conv2D".
  virtual absl::string_view name() const = 0;
  // Opaque nodes carry an ONNX node the library does not model.
  virtual bool is_opaque() const { return false; }
  // Whether the outputs depend only on the inputs' shapes (constant tensors shaped like
  // an input): computable ahead of time like a node that reads only weights.
  virtual bool reads_only_shapes() const { return false; }

  // Checks parameters and input types; returns the output types or a clear error.
  virtual absl::StatusOr<std::vector<OutputType>> InferTypes(
      const Params& params, absl::Span<const InputInfo> inputs) const = 0;

  // How each output dimension relates to the input dimensions (default: all new).
  virtual DimSources DimensionSources(const Params& params, absl::Span<const InputInfo> inputs,
                                      absl::Span<const OutputType> outputs) const;

  // The parameter choices taso-gen enumerates; empty: not in the generator's set.
  virtual std::vector<GeneratorVariant> GeneratorVariants() const { return {}; }

  // The per-channel affine map this node applies to input `data` given the constants among
  // its other inputs, or nullopt (inference fusion folds it into a convolution before it).
  virtual std::optional<ChannelAffine> AsChannelAffine(const Params& params, absl::Span<const InputInfo> inputs,
                                                       size_t data) const {
    return std::nullopt;
  }
  // The activation a convolution's "activation" parameter can apply in place of this
  // node ("relu"), or empty.
  virtual absl::string_view AsConvActivation() const { return {}; }

  // The output's value when it is known without running anything (Constant), else null.
  virtual const TensorData* ConstantOutput(const Params& params) const { return nullptr; }

  // The reference kernel in the float, the wrapping uint32 and the symbolic domain.
  virtual absl::Status RunFloat(const Params& params, KernelArgs<float>& args) const = 0;
  virtual absl::Status RunUint32(const Params& params, KernelArgs<uint32_t>& args) const = 0;
  virtual absl::Status RunSymbolic(const Params& params, KernelArgs<Sym>& args) const;

  // FLOPs and bytes moved (defaults: one FLOP per output element, every tensor once).
  virtual OpMetrics Metrics(const Params& params, absl::Span<const InputInfo> inputs,
                            absl::Span<const OutputType> outputs) const;

  // ONNX mapping. `onnx_op_types` lists the ONNX op types (default domain) this operator
  // may represent. `FromOnnx` returns the parameters, or nullopt when this node has a
  // meaning the operator cannot represent exactly (it is then kept opaque).
  virtual std::vector<std::string> onnx_op_types() const { return {}; }
  // Among operators claiming the same ONNX op type, higher priority is tried first.
  virtual int onnx_import_priority() const { return 0; }
  virtual absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const {
    return std::nullopt;
  }
  virtual absl::Status ToOnnx(const Params& params, OnnxExportNode& node) const;

  // The parameters as rules state them (padding as a mode, grouping as dense or
  // depthwise), for matching rules against imported nodes; nullopt when no rule form
  // means exactly the same. The default: the parameters as they are.
  virtual std::optional<Params> RuleParams(const Params& params, absl::Span<const InputInfo> inputs) const {
    return params;
  }

  // The parameters in the one spelling that every way of writing the same computation
  // maps to (ONNX's explicit pads, dilations and group count, where rules write a padding
  // mode and a grouping), so that measurements keyed by it find one kernel under one
  // key; nullopt where the operator has one spelling only.
  virtual std::optional<Params> CanonicalParams(const Params&, absl::Span<const InputInfo>) const {
    return std::nullopt;
  }

  // The operator in the verifier's logic; an error when it has no encoding there (the
  // default) or not with these parameters.
  virtual absl::StatusOr<SmtForm> Smt(const Params& params, int num_inputs, int num_outputs) const;
};

// Implements the kernel entry points from one template `Impl::Compute<S>`.
template <typename Impl>
class KernelOp : public OpDef {
 public:
  absl::Status RunFloat(const Params& p, KernelArgs<float>& a) const override {
    return Impl::template Compute<float>(p, a);
  }
  absl::Status RunUint32(const Params& p, KernelArgs<uint32_t>& a) const override {
    return Impl::template Compute<uint32_t>(p, a);
  }
  absl::Status RunSymbolic(const Params& p, KernelArgs<Sym>& a) const override {
    absl::Status s = Impl::template Compute<Sym>(p, a);
    const std::string& error = SymArena::Current().error();
    if (s.ok() && !error.empty())
      return absl::UnimplementedError(absl::StrCat(name(), " in the symbolic domain: ", error));
    return s;
  }
};

class OpRegistry {
 public:
  static OpRegistry& Global();
  // Registration happens from static initializers in ops/*.cc.
  const OpDef* Register(std::unique_ptr<OpDef> op);
  const OpDef* Find(absl::string_view name) const;
  absl::StatusOr<const OpDef*> Get(absl::string_view name) const;
  // Library operators that may represent an ONNX op type, in registration order.
  std::vector<const OpDef*> ForOnnxType(absl::string_view op_type) const;
  std::vector<const OpDef*> All() const;
  const OpDef* Opaque() const;

 private:
  std::vector<std::unique_ptr<OpDef>> ops_;
};

namespace internal {
struct OpRegistrar {
  explicit OpRegistrar(std::unique_ptr<OpDef> op) { OpRegistry::Global().Register(std::move(op)); }
};
}  // namespace internal

#define TASO_REGISTER_OP(Class)                                                    \
  static const ::taso::internal::OpRegistrar TASO_CONCAT_REG(taso_registrar_, __LINE__)( \
      std::make_unique<Class>())
#define TASO_CONCAT_REG_INNER(a, b) a##b
#define TASO_CONCAT_REG(a, b) TASO_CONCAT_REG_INNER(a, b)

}  // namespace taso
