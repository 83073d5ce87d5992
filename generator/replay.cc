#include "replay.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "taso/ir/status_macros.h"

namespace taso::gen {

void Leaves(const std::vector<DimNode>& nodes, int node, std::vector<DimNode>& out) {
  if (nodes[node].left < 0) {
    out.push_back(nodes[node]);
    return;
  }
  Leaves(nodes, nodes[node].left, out);
  Leaves(nodes, nodes[node].right, out);
}

namespace {
template <typename S>
int64_t NodeSize(const Replayed<S>& r, int node) {
  const DimNode& n = r.nodes[node];
  if (n.left < 0) return r.tensor(n.tensor).shape[n.dim];
  return NodeSize(r, n.left) + NodeSize(r, n.right);
}

template <typename S>
absl::Status RunKernel(const OpDef& op, const Params& p, KernelArgs<S>& a) {
  if constexpr (std::is_same_v<S, float>)
    return op.RunFloat(p, a);
  else
    return op.RunUint32(p, a);
}
}  // namespace

template <typename S>
uint64_t ContentHash(const Tensor<S>& t) {
  static_assert(std::is_trivially_copyable_v<S>);
  const auto* bytes = reinterpret_cast<const char*>(t.data.data());
  return absl::HashOf(absl::MakeConstSpan(t.shape), absl::string_view(bytes, t.data.size() * sizeof(S)));
}

template <typename S>
KernelMemo<S>::KernelMemo(const std::vector<Tensor<S>>& inputs, size_t max_bytes)
    : inputs_(&inputs), max_bytes_(max_bytes) {
  for (const Tensor<S>& t : inputs) input_hashes_.push_back(ContentHash(t));
}

template <typename S>
const typename KernelMemo<S>::Entry* KernelMemo<S>::Find(const Key& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

template <typename S>
void KernelMemo<S>::MakeRoom() {
  if (bytes_ <= max_bytes_) return;
  entries_.clear();
  bytes_ = 0;
}

template <typename S>
void KernelMemo<S>::Add(const Key& key, Entry entry) {
  for (const auto& t : entry.outputs) bytes_ += t->data.size() * sizeof(S) + 128;
  entries_.emplace(key, std::move(entry));
}

namespace {

// One replay: the operators run in order, each step adding its outputs and their
// dimensions' histories to the result.
template <typename S>
class Replayer {
 public:
  Replayer(const OpSet& set, const GraphCode& code, const std::vector<Tensor<S>>& inputs, const ReplacedOp<S>* replaced,
           KernelMemo<S>* memo)
      : set_(set),
        code_(code),
        inputs_(inputs),
        replaced_(replaced),
        memo_(memo && memo->Serves(inputs) ? memo : nullptr),
        track_dims_(std::any_of(code.ops, code.ops + code.num_ops,
                                [&](const GenOp& op) { return set.variants[op.variant].spec.split_at_concat; })) {
    if (memo_)
      for (size_t i = 0; i < inputs.size(); ++i) hash_.push_back(memo_->input_hash(static_cast<int>(i)));
    r_.inputs = &inputs;
    r_.produced.reserve(2 * code.num_ops);  // no reallocation: kernels get pointers
    uses_.assign(inputs.size() + 2 * code.num_ops + 2, 0);
  }

  absl::StatusOr<Replayed<S>> Run() && {
    AddInputDims();
    for (int o = 0; o < code_.num_ops; ++o) RETURN_IF_ERROR(Step(o));
    FindOutputs();
    r_.hashes = std::move(hash_);
    return std::move(r_);
  }

 private:
  using MemoKey = typename KernelMemo<S>::Key;
  using MemoEntry = typename KernelMemo<S>::Entry;

  // Where a split cuts its input, and its parameters with the cut's sizes added.
  struct Cut {
    std::array<int64_t, 2> sizes = {0, 0};  // 0 where the operator is no split
    int concat_node = -1;                   // the concatenation the cut undoes
    Params params;                          // only where the operator is a split
  };

  void AddInputDims() {
    if (!track_dims_) return;
    r_.nodes.reserve(4 * (inputs_.size() + 2 * code_.num_ops));
    r_.dims.reserve(inputs_.size() + 2 * code_.num_ops);
    for (size_t i = 0; i < inputs_.size(); ++i) {
      std::array<int, 4> d{-1, -1, -1, -1};
      for (int k = 0; k < inputs_[i].rank(); ++k) {
        r_.nodes.push_back({-1, -1, static_cast<int>(i), k});
        d[k] = static_cast<int>(r_.nodes.size()) - 1;
      }
      r_.dims.push_back(d);
    }
  }

  // Operator `o`: a memo hit gives its outputs, their hashes and dimension sources;
  // otherwise the shapes are inferred and the kernel is run (or the outputs filled, for
  // `replaced`).
  absl::Status Step(int o) {
    const GenOp& op = code_.ops[o];
    const Variant& var = set_.variants[op.variant];
    for (int i = 0; i < var.spec.arity; ++i) ++uses_[op.in[i]];
    Cut cut;
    if (var.spec.split_at_concat) RETURN_IF_ERROR(FindCut(op, var.spec, cut));
    r_.cuts.push_back(cut.sizes);
    r_.first_output.push_back(r_.num_tensors());
    const bool fresh = replaced_ && replaced_->op == o;
    const int first = r_.num_tensors();
    MemoKey key{};
    const MemoEntry* known = nullptr;
    if (memo_ && !fresh) {
      key = {op.variant,
             hash_[op.in[0]],
             var.spec.arity > 1 ? hash_[op.in[1]] : 0,
             var.spec.arity > 2 ? hash_[op.in[2]] : 0,
             cut.sizes[0],
             cut.sizes[1]};
      known = memo_->Find(key);
    }
    DimSources inferred;
    if (known) {
      for (const auto& t : known->outputs) r_.produced.push_back(t.get());
      hash_.insert(hash_.end(), known->hashes.begin(), known->hashes.end());
    } else {
      const Params& params = var.spec.split_at_concat ? cut.params : var.spec.params;
      RETURN_IF_ERROR(Compute(var, op, params, fresh, &inferred));
      // Checked before the memo keeps them: not reading a memo's outputs again spares a
      // cache miss for every operator found there.
      for (int t = first; t < r_.num_tensors(); ++t)
        if (r_.tensor(t).rank() > 4) return absl::InvalidArgumentError("an output of rank above 4");
      if (memo_) Remember(first, inferred, fresh ? nullptr : &key);
    }
    AddOutputDims(op, first, known ? known->sources : inferred, fresh, cut.concat_node);
    return absl::OkStatus();
  }

  // A split's cut, at the concatenation that built its input's cut axis; fails where
  // there is none.
  absl::Status FindCut(const GenOp& op, const GeneratorVariant& spec, Cut& cut) {
    const int axis = CutAxis(spec);
    if (axis >= r_.tensor(op.in[0]).rank()) return absl::InvalidArgumentError("split axis out of range");
    cut.concat_node = r_.dims[op.in[0]][axis];
    const DimNode& concat = r_.nodes[cut.concat_node];
    if (concat.left < 0) return absl::InvalidArgumentError("split of an unconcatenated dimension");
    cut.sizes = {NodeSize(r_, concat.left), NodeSize(r_, concat.right)};
    cut.params = WithCut(spec, cut.sizes[0], cut.sizes[1]);
    return absl::OkStatus();
  }

  // Adds the operator's outputs, computed by its kernel (or filled by `replaced` where
  // `fresh`), and their dimension sources.
  absl::Status Compute(const Variant& var, const GenOp& op, const Params& params, bool fresh, DimSources* sources) {
    std::vector<InputInfo> infos;
    for (int i = 0; i < var.spec.arity; ++i) infos.push_back({true, DataType::kFloat32, r_.tensor(op.in[i]).shape});
    ASSIGN_OR_RETURN(std::vector<OutputType> types, var.op->semantics().InferTypes(params, infos));
    *sources = var.op->rule_form().DimensionSources(params, infos, types);
    KernelArgs<S> args;
    for (int i = 0; i < var.spec.arity; ++i) {
      args.in.push_back(&r_.tensor(op.in[i]));
      args.constant.push_back(nullptr);
    }
    for (const OutputType& t : types) {
      auto out = std::make_unique<Tensor<S>>(t.shape);
      args.out.push_back(out.get());
      r_.produced.push_back(out.get());
      r_.owned.push_back(std::move(out));
    }
    if (!fresh) return RunKernel<S>(*var.op, params, args);
    for (size_t k = 0; k < types.size(); ++k) replaced_->fill(static_cast<int>(k), *args.out[k]);
    return absl::OkStatus();
  }

  // Hashes the outputs from tensor `first` on (the last ones computed, still owned), and
  // hands them to the memo under `key` (none for the replaced operator, whose outputs are
  // not its kernel's).
  void Remember(int first, const DimSources& sources, const MemoKey* key) {
    MemoEntry entry;
    for (int t = first; t < r_.num_tensors(); ++t) {
      entry.hashes.push_back(ContentHash(r_.tensor(t)));
      hash_.push_back(entry.hashes.back());
    }
    if (!key) return;
    const size_t computed = r_.num_tensors() - first;
    for (size_t k = r_.owned.size() - computed; k < r_.owned.size(); ++k)
      entry.outputs.push_back(std::move(r_.owned[k]));
    r_.owned.resize(r_.owned.size() - computed);
    entry.sources = sources;
    memo_->Add(*key, std::move(entry));
  }

  // The dimension histories of the outputs from tensor `first` on. The replaced
  // operator's outputs are new dimensions.
  void AddOutputDims(const GenOp& op, int first, const DimSources& sources, bool fresh, int concat_node) {
    if (!track_dims_) return;
    const int num_outputs = r_.num_tensors() - first;
    for (int k = 0; k < num_outputs; ++k) {
      std::array<int, 4> d{-1, -1, -1, -1};
      for (int j = 0; j < r_.tensor(first + k).rank(); ++j)
        d[j] = DimNodeOf(op, fresh ? DimSource{} : sources[k][j], first, k, j, concat_node);
      r_.dims.push_back(d);
    }
  }

  // The DimNode of dimension `j` of the operator's output `k` (tensor `first + k`), which
  // comes from `src`.
  int DimNodeOf(const GenOp& op, const DimSource& src, int first, int k, int j, int concat_node) {
    switch (src.kind) {
      case DimSource::kCopy:
        return r_.dims[op.in[src.input]][src.dim];
      case DimSource::kConcat:
        r_.nodes.push_back({r_.dims[op.in[0]][src.dim], r_.dims[op.in[1]][src.dim], 0, 0});
        return static_cast<int>(r_.nodes.size()) - 1;
      case DimSource::kSplitPart:
        return k == 0 ? r_.nodes[concat_node].left : r_.nodes[concat_node].right;
      case DimSource::kNew:
        r_.nodes.push_back({-1, -1, first + k, j});
        return static_cast<int>(r_.nodes.size()) - 1;
    }
    return -1;
  }

  // The graph's outputs: the tensors no operator reads (a lone input for no operators).
  void FindOutputs() {
    if (code_.num_ops == 0) {
      r_.outputs.push_back(code_.lone_input);
      return;
    }
    for (int t = static_cast<int>(inputs_.size()); t < r_.num_tensors(); ++t)
      if (uses_[t] == 0) r_.outputs.push_back(t);
  }

  const OpSet& set_;
  const GraphCode& code_;
  const std::vector<Tensor<S>>& inputs_;
  const ReplacedOp<S>* replaced_;
  KernelMemo<S>* memo_;         // where it serves these inputs
  const bool track_dims_;       // whether an operator splits (Replayed::dims)
  std::vector<uint64_t> hash_;  // per tensor id, where a memo is used
  std::vector<int> uses_;       // per tensor id: how many operators read it
  Replayed<S> r_;
};

}  // namespace

template <typename S>
absl::StatusOr<Replayed<S>> Replay(const OpSet& set, const GraphCode& code, const std::vector<Tensor<S>>& inputs,
                                   const ReplacedOp<S>* replaced, KernelMemo<S>* memo) {
  return Replayer<S>(set, code, inputs, replaced, memo).Run();
}

template class KernelMemo<float>;
template class KernelMemo<uint32_t>;
template absl::StatusOr<Replayed<float>> Replay(const OpSet&, const GraphCode&, const std::vector<Tensor<float>>&,
                                                const ReplacedOp<float>*, KernelMemo<float>*);
template absl::StatusOr<Replayed<uint32_t>> Replay(const OpSet&, const GraphCode&, const std::vector<Tensor<uint32_t>>&,
                                                   const ReplacedOp<uint32_t>*, KernelMemo<uint32_t>*);

}  // namespace taso::gen
