// The key a measured cost is kept under: the operator, its parameters, and the shapes of
// its inputs (absent ones marked, constant ones marked: a runtime treats an initializer
// differently from a fed tensor, e.g. it packs a product's constant operand once) and
// outputs. One type serves the memo within a run (its
// hash and equality) and the cache file between runs (its text): the two cannot disagree.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "absl/types/span.h"
#include "taso/ir/op.h"
#include "taso/ir/params.h"

namespace taso {

class CostKey {
 public:
  // A key that refers to its parts, which must outlive it: building one copies nothing,
  // so that looking up a cost stays cheap (the search looks up every node of every
  // candidate graph). Owned() gives one to keep.
  CostKey(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
          absl::Span<const OutputType> outputs);

  // A key equal to this one that owns copies of its parts, for keeping in a memo. The
  // copied inputs keep their presence, type and shape, not their constant values (whether
  // they are constant stays part of the key).
  CostKey Owned() const;

  const OpDef& op() const { return *op_; }
  const Params& params() const { return *params_; }
  absl::Span<const InputInfo> inputs() const { return inputs_; }
  absl::Span<const OutputType> outputs() const { return outputs_; }

  // The key's text in the cost cache file, e.g.
  //   Conv2D{activation="relu" padding="same" strides=[2,2]}[1,16,12,12][32,16,3,3]-->[1,32,6,6]
  // (operator{parameters}, each input's shape, "c" before it where constant, or "-"
  // where absent, "->", each output's shape). Files written by earlier runs are keyed by it: changing it re-measures
  // everything.
  std::string ToString() const;

  // Equal keys: the same operator name, equal parameters, the same inputs present and
  // constant with the same shapes, and the same output shapes (types are not part of
  // the key).
  friend bool operator==(const CostKey& a, const CostKey& b);
  friend bool operator!=(const CostKey& a, const CostKey& b) { return !(a == b); }

  template <typename H>
  friend H AbslHashValue(H h, const CostKey& key) {
    h = H::combine(std::move(h), key.op_->name(), key.inputs_.size(), key.outputs_.size(), key.constant_inputs_);
    h = CombineParams(std::move(h), *key.params_);
    for (const InputInfo& i : key.inputs_)
      h = i.present ? H::combine(std::move(h), true, i.shape) : H::combine(std::move(h), false);
    for (const OutputType& o : key.outputs_) h = H::combine(std::move(h), o.shape);
    return h;
  }

 private:
  // The parameters into the key's one hash state (Params::Hash would start a state per
  // entry: the memo hashes a key on every lookup). A tensor counts by its content, as
  // Params' equality compares it.
  template <typename H>
  static H CombineParams(H h, const Params& params) {
    for (const auto& [name, value] : params.entries()) {
      h = H::combine(std::move(h), name, value.index());
      if (const auto* tensor = std::get_if<TensorDataPtr>(&value))
        h = H::combine(std::move(h), *tensor ? (*tensor)->ContentHash() : 0);
      else
        h = std::visit([&h](const auto& v) { return H::combine(std::move(h), v); }, value);
    }
    return H::combine(std::move(h), params.entries().size());
  }

  struct Parts;  // what an owned key refers to

  const OpDef* op_;
  const Params* params_;
  absl::Span<const InputInfo> inputs_;
  absl::Span<const OutputType> outputs_;
  uint64_t constant_inputs_ = 0;        // bit i: input i is a constant
  std::shared_ptr<const Parts> owned_;  // null where the key refers to its caller's parts
};

}  // namespace taso
