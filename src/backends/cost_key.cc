#include "taso/backends/cost_key.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace taso {

struct CostKey::Parts {
  Params params;
  std::vector<InputInfo> inputs;
  std::vector<OutputType> outputs;
};

CostKey::CostKey(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                 absl::Span<const OutputType> outputs)
    : op_(&op), params_(&params), inputs_(inputs), outputs_(outputs) {
  for (size_t i = 0; i < inputs.size() && i < 64; ++i)
    if (inputs[i].present && inputs[i].constant != nullptr) constant_inputs_ |= uint64_t{1} << i;
}

CostKey CostKey::Owned() const {
  auto parts = std::make_shared<Parts>();
  parts->params = *params_;
  for (const InputInfo& i : inputs_) {
    InputInfo copy = i;
    copy.constant = nullptr;  // its data is not part of the key (constant_inputs_ is), nor owned
    parts->inputs.push_back(std::move(copy));
  }
  parts->outputs.assign(outputs_.begin(), outputs_.end());
  CostKey owned(*op_, parts->params, parts->inputs, parts->outputs);
  owned.constant_inputs_ = constant_inputs_;
  owned.owned_ = std::move(parts);
  return owned;
}

std::string CostKey::ToString() const {
  std::string text = absl::StrCat(op_->name(), "{", params_->ToString(), "}");
  for (size_t k = 0; k < inputs_.size(); ++k) {
    const InputInfo& i = inputs_[k];
    const bool constant = k < 64 && (constant_inputs_ >> k) & 1;
    absl::StrAppend(&text, !i.present ? "-" : constant ? "c" : "", i.present ? ShapeToString(i.shape) : "");
  }
  absl::StrAppend(&text, "->");
  for (const OutputType& o : outputs_) absl::StrAppend(&text, ShapeToString(o.shape));
  return text;
}

namespace {

bool SameInput(const InputInfo& a, const InputInfo& b) {
  return a.present == b.present && (!a.present || a.shape == b.shape);
}

bool SameOutput(const OutputType& a, const OutputType& b) { return a.shape == b.shape; }

bool SameOperator(const OpDef* a, const OpDef* b) { return a == b || a->name() == b->name(); }

}  // namespace

bool operator==(const CostKey& a, const CostKey& b) {
  // The parameters last: comparing them walks a map, and the memo compares keys on every
  // lookup.
  return SameOperator(a.op_, b.op_) && a.constant_inputs_ == b.constant_inputs_ &&
         std::equal(a.inputs_.begin(), a.inputs_.end(), b.inputs_.begin(), b.inputs_.end(), SameInput) &&
         std::equal(a.outputs_.begin(), a.outputs_.end(), b.outputs_.begin(), b.outputs_.end(), SameOutput) &&
         *a.params_ == *b.params_;
}

}  // namespace taso
