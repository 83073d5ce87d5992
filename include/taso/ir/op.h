// Operator definitions and the registry. Everything specific to one operator lives in
// its own file under ops/; generic code reaches operators only through this interface
// and, where a pass must recognize or build one operator, through that operator's typed
// view in taso/ir/ops/ (declared there, defined in its ops/ file).
//
// An operator is one OpDef, which is four interfaces, one per subsystem that uses it:
// OpSemantics (what it computes), OpRuleForm (how rules, the generator and the verifier
// state it), OnnxMapping (its ONNX form) and BackendHooks (inference fusion and measured
// costs). Operators override the methods of all four in one class; code that needs one
// part takes that interface (op->onnx(), op->rule_form(), ...).
#pragma once

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "taso/ir/backend_hooks.h"
#include "taso/ir/onnx_mapping.h"
#include "taso/ir/op_rule_form.h"
#include "taso/ir/op_semantics.h"
#include "taso/ir/op_types.h"
#include "taso/ir/params.h"
#include "taso/ir/symbolic.h"
#include "taso/ir/tensor.h"

namespace taso {

class OpDef : public OpSemantics, public OpRuleForm, public OnnxMapping, public BackendHooks {
 public:
  // One name for every part: an operator's `name()` overrides all of them.
  absl::string_view name() const override = 0;

  const OpSemantics& semantics() const { return *this; }
  const OpRuleForm& rule_form() const { return *this; }
  const OnnxMapping& onnx() const { return *this; }
  const BackendHooks& hooks() const { return *this; }
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
  // Library operators that may represent an ONNX op type, by descending import priority,
  // then by name: an order that does not depend on the order of registration (static
  // initializers, so link order).
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

#define TASO_REGISTER_OP(Class) \
  static const ::taso::internal::OpRegistrar TASO_CONCAT_REG(taso_registrar_, __COUNTER__)(std::make_unique<Class>())
#define TASO_CONCAT_REG_INNER(a, b) a##b
#define TASO_CONCAT_REG(a, b) TASO_CONCAT_REG_INNER(a, b)

}  // namespace taso
