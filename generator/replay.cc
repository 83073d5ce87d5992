#include "replay.h"

#include "absl/strings/str_cat.h"
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
  if (n.left < 0) return r.tensors[n.tensor].shape[n.dim];
  return NodeSize(r, n.left) + NodeSize(r, n.right);
}

template <typename S>
absl::Status RunKernel(const OpDef& op, const Params& p, KernelArgs<S>& a) {
  if constexpr (std::is_same_v<S, float>) return op.RunFloat(p, a);
  else return op.RunUint32(p, a);
}
}  // namespace

template <typename S>
absl::StatusOr<Replayed<S>> Replay(const OpSet& set, const GraphCode& code, const std::vector<Tensor<S>>& inputs,
                                   const ReplacedOp<S>* replaced) {
  Replayed<S> r;
  r.tensors.reserve(inputs.size() + 2 * code.num_ops);
  for (size_t i = 0; i < inputs.size(); ++i) {
    r.tensors.push_back(inputs[i]);
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
      infos.push_back({true, DataType::kFloat32, r.tensors[op.in[i]].shape});
      ++uses[op.in[i]];
    }
    Params cut_params;  // a copy only where a split's sizes are added
    const Params* params = &var.spec.params;
    int concat_node = -1;
    std::array<int64_t, 2> cut = {0, 0};
    if (var.spec.split_at_concat) {
      const int axis = CutAxis(var.spec);
      if (axis >= r.tensors[op.in[0]].rank()) return absl::InvalidArgumentError("split axis out of range");
      concat_node = r.dims[op.in[0]][axis];
      if (r.nodes[concat_node].left < 0) return absl::InvalidArgumentError("split of an unconcatenated dimension");
      cut = {NodeSize(r, r.nodes[concat_node].left), NodeSize(r, r.nodes[concat_node].right)};
      cut_params = WithCut(var.spec, cut[0], cut[1]);
      params = &cut_params;
    }
    r.cuts.push_back(cut);
    r.first_output.push_back(static_cast<int>(r.tensors.size()));
    ASSIGN_OR_RETURN(std::vector<OutputType> types, var.op->InferTypes(*params, infos));
    const DimSources sources = var.op->DimensionSources(*params, infos, types);
    const int first = static_cast<int>(r.tensors.size());
    for (const OutputType& t : types) r.tensors.emplace_back(t.shape);
    KernelArgs<S> args;
    for (int i = 0; i < arity; ++i) {
      args.in.push_back(&r.tensors[op.in[i]]);
      args.constant.push_back(nullptr);
    }
    for (size_t k = 0; k < types.size(); ++k) args.out.push_back(&r.tensors[first + k]);
    const bool fresh = replaced && replaced->op == o;
    if (fresh) {
      for (size_t k = 0; k < types.size(); ++k) replaced->fill(static_cast<int>(k), *args.out[k]);
    } else {
      RETURN_IF_ERROR(RunKernel<S>(*var.op, *params, args));
    }
    for (size_t k = 0; k < types.size(); ++k) {
      std::vector<int> d;
      for (size_t j = 0; j < types[k].shape.size(); ++j) {
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
            r.nodes.push_back({-1, -1, first + static_cast<int>(k), static_cast<int>(j)});
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
    for (int t = static_cast<int>(inputs.size()); t < static_cast<int>(r.tensors.size()); ++t)
      if (uses[t] == 0) r.outputs.push_back(t);
  }
  return r;
}

template absl::StatusOr<Replayed<float>> Replay(const OpSet&, const GraphCode&, const std::vector<Tensor<float>>&,
                                                const ReplacedOp<float>*);
template absl::StatusOr<Replayed<uint32_t>> Replay(const OpSet&, const GraphCode&,
                                                   const std::vector<Tensor<uint32_t>>&,
                                                   const ReplacedOp<uint32_t>*);

}  // namespace taso::gen
