#include "replay.h"

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "taso/status_macros.h"

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
  if constexpr (std::is_same_v<S, float>) return op.RunFloat(p, a);
  else return op.RunUint32(p, a);
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
void KernelMemo<S>::Add(const Key& key, Entry entry) {
  if (bytes_ > max_bytes_) {
    entries_.clear();
    bytes_ = 0;
  }
  for (const Tensor<S>& t : entry.outputs) bytes_ += t.data.size() * sizeof(S) + 128;
  entries_.emplace(key, std::move(entry));
}

template <typename S>
absl::StatusOr<Replayed<S>> Replay(const OpSet& set, const GraphCode& code, const std::vector<Tensor<S>>& inputs,
                                   const ReplacedOp<S>* replaced, KernelMemo<S>* memo) {
  if (memo && !memo->Serves(inputs)) memo = nullptr;
  std::vector<uint64_t> hash;  // per tensor id, where a memo is used
  if (memo)
    for (size_t i = 0; i < inputs.size(); ++i) hash.push_back(memo->input_hash(static_cast<int>(i)));
  Replayed<S> r;
  r.inputs = &inputs;
  r.produced.reserve(2 * code.num_ops);  // no reallocation: kernels get pointers
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int> d;
    for (int k = 0; k < inputs[i].rank(); ++k) {
      r.nodes.push_back({-1, -1, static_cast<int>(i), k});
      d.push_back(static_cast<int>(r.nodes.size()) - 1);
    }
    r.dims.push_back(std::move(d));
  }
  std::vector<int> uses(inputs.size() + 2 * code.num_ops + 2, 0);
  for (int o = 0; o < code.num_ops; ++o) {
    const GenOp& op = code.ops[o];
    const Variant& var = set.variants[op.variant];
    const int arity = var.spec.arity;
    std::vector<InputInfo> infos;
    for (int i = 0; i < arity; ++i) {
      infos.push_back({true, DataType::kFloat32, r.tensor(op.in[i]).shape});
      ++uses[op.in[i]];
    }
    Params cut_params;  // a copy only where a split's sizes are added
    const Params* params = &var.spec.params;
    int concat_node = -1;
    std::array<int64_t, 2> cut = {0, 0};
    if (var.spec.split_at_concat) {
      const int axis = CutAxis(var.spec);
      if (axis >= r.tensor(op.in[0]).rank()) return absl::InvalidArgumentError("split axis out of range");
      concat_node = r.dims[op.in[0]][axis];
      if (r.nodes[concat_node].left < 0) return absl::InvalidArgumentError("split of an unconcatenated dimension");
      cut = {NodeSize(r, r.nodes[concat_node].left), NodeSize(r, r.nodes[concat_node].right)};
      cut_params = WithCut(var.spec, cut[0], cut[1]);
      params = &cut_params;
    }
    r.cuts.push_back(cut);
    r.first_output.push_back(r.num_tensors());
    const bool fresh = replaced && replaced->op == o;
    const int first = r.num_tensors();
    // A memo hit gives the outputs, their hashes and dimension sources; otherwise the
    // shapes are inferred and the kernel is run (or the outputs filled, for `replaced`).
    typename KernelMemo<S>::Key key{};
    const typename KernelMemo<S>::Entry* known = nullptr;
    if (memo && !fresh) {
      key = {op.variant, hash[op.in[0]], arity > 1 ? hash[op.in[1]] : 0, cut[0], cut[1]};
      known = memo->Find(key);
    }
    DimSources inferred;
    if (known) {
      for (const Tensor<S>& t : known->outputs) r.produced.push_back(t);
      hash.insert(hash.end(), known->hashes.begin(), known->hashes.end());
    } else {
      ASSIGN_OR_RETURN(std::vector<OutputType> types, var.op->InferTypes(*params, infos));
      inferred = var.op->DimensionSources(*params, infos, types);
      for (const OutputType& t : types) r.produced.emplace_back(t.shape);
      KernelArgs<S> args;
      for (int i = 0; i < arity; ++i) {
        args.in.push_back(&r.tensor(op.in[i]));
        args.constant.push_back(nullptr);
      }
      for (size_t k = 0; k < types.size(); ++k) args.out.push_back(&r.produced[first - inputs.size() + k]);
      if (fresh) {
        for (size_t k = 0; k < types.size(); ++k) replaced->fill(static_cast<int>(k), *args.out[k]);
      } else {
        RETURN_IF_ERROR(RunKernel<S>(*var.op, *params, args));
      }
      if (memo) {
        typename KernelMemo<S>::Entry entry;
        for (Tensor<S>* t : args.out) {
          entry.outputs.push_back(*t);
          entry.hashes.push_back(ContentHash(*t));
          hash.push_back(entry.hashes.back());
        }
        entry.sources = inferred;
        if (!fresh) memo->Add(key, std::move(entry));
      }
    }
    const DimSources& sources = known ? known->sources : inferred;
    const int num_outputs = r.num_tensors() - first;
    for (int k = 0; k < num_outputs; ++k) {
      std::vector<int> d;
      for (int j = 0; j < r.tensor(first + k).rank(); ++j) {
        const DimSource src = fresh ? DimSource{} : sources[k][j];
        switch (src.kind) {
          case DimSource::kCopy: d.push_back(r.dims[op.in[src.input]][src.dim]); break;
          case DimSource::kConcat:
            r.nodes.push_back({r.dims[op.in[0]][src.dim], r.dims[op.in[1]][src.dim], 0, 0});
            d.push_back(static_cast<int>(r.nodes.size()) - 1);
            break;
          case DimSource::kSplitPart:
            d.push_back(k == 0 ? r.nodes[concat_node].left : r.nodes[concat_node].right);
            break;
          case DimSource::kNew:
            r.nodes.push_back({-1, -1, first + k, j});
            d.push_back(static_cast<int>(r.nodes.size()) - 1);
            break;
        }
      }
      r.dims.push_back(std::move(d));
    }
  }
  if (code.num_ops == 0) {
    r.outputs.push_back(code.lone_input);
  } else {
    for (int t = static_cast<int>(inputs.size()); t < r.num_tensors(); ++t)
      if (uses[t] == 0) r.outputs.push_back(t);
  }
  return r;
}

template class KernelMemo<float>;
template class KernelMemo<uint32_t>;
template absl::StatusOr<Replayed<float>> Replay(const OpSet&, const GraphCode&, const std::vector<Tensor<float>>&,
                                                const ReplacedOp<float>*, KernelMemo<float>*);
template absl::StatusOr<Replayed<uint32_t>> Replay(const OpSet&, const GraphCode&,
                                                   const std::vector<Tensor<uint32_t>>&, const ReplacedOp<uint32_t>*,
                                                   KernelMemo<uint32_t>*);

}  // namespace taso::gen
