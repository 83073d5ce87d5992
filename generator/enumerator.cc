#include "enumerator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "replay.h"
#include "taso/ir/executor.h"
#include "taso/ir/rng.h"
#include "taso/ir/status_macros.h"

namespace taso::gen {

uint64_t TensorHash(const Tensor<uint32_t>& t) {
  uint64_t h = 0xCBF29CE484222325ull ^ t.shape.size();
  for (int64_t d : t.shape) h = (h ^ static_cast<uint64_t>(d)) * 0x100000001B3ull;
  for (uint32_t v : t.data) h = (h ^ v) * 0x100000001B3ull;
  return h;
}

uint64_t OutputTerm(uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 33);
}

void SetOutputSummary(GraphCode& code, const int* op_outputs, const uint64_t* output_hashes, int num_outputs) {
  code.two_output_ops = code.output_ranks = 0;
  if (num_outputs > 4) return;
  uint8_t two = 0;
  for (int o = 0; o < code.num_ops; ++o) {
    if (op_outputs[o] > 2) return;
    if (op_outputs[o] == 2) two |= static_cast<uint8_t>(1u << o);
  }
  uint8_t ranks = 0;
  for (int k = 0; k < num_outputs; ++k) {
    int rank = 0;
    for (int j = 0; j < num_outputs; ++j)
      rank += output_hashes[j] < output_hashes[k] || (output_hashes[j] == output_hashes[k] && j < k);
    ranks |= static_cast<uint8_t>(rank << (2 * k));
  }
  code.two_output_ops = two | kOutputSummary;
  code.output_ranks = ranks;
}

Enumerator::Enumerator(const OpSet& set, int max_ops, uint64_t seed) : set_(set), max_ops_(max_ops) {
  Rng rng(seed);
  for (const GenInput& in : set_.inputs) {
    Tensor<uint32_t> t(in.shape);
    for (uint32_t& v : t.data) v = rng.NextU32();
    inputs_.push_back(std::move(t));
  }
  const std::vector<int> earlier = EarlierAlike(set_);
  earlier_bit_.assign(earlier.size(), 0);
  for (size_t i = 0; i < earlier.size(); ++i)
    if (earlier[i] >= 0) {
      has_earlier_ |= 1u << i;
      earlier_bit_[i] = 1u << earlier[i];
    }
}

namespace {

struct SymNode {  // a dimension: a leaf (born in `tensor` at `dim`) or a concatenation
  int left = -1, right = -1;
  int tensor = 0, dim = 0;
};

struct Slot {
  Tensor<uint32_t> t;
  int shape_id = 0;
  uint64_t hash = 0;
  bool activation = false;
  bool constant = false;  // its value depends on no input's value (e.g. I_conv(X))
  bool bias = false;      // a bias input (GenInput::bias)
  int producer = -1;      // operator position, -1 for an input
  int uses = 0;
  std::array<int, 4> sym{};
};

struct MemoKey {
  int variant, s0, s1, s2, cut0, cut1;  // input shape ids, -1 past the arity
  bool operator==(const MemoKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const MemoKey& k) {
    return H::combine(std::move(h), k.variant, k.s0, k.s1, k.s2, k.cut0, k.cut1);
  }
};

// Per thread: a depth-first walk reuses mostly what it computed lately.
constexpr size_t kResultMemoBytes = 64 << 20;

// An operator on tensors with these content hashes (TensorHash), for the memo of the
// last operators' output hashes.
struct LeafKey {
  uint64_t in0, in1, in2;
  int variant, cut0, cut1;
  bool operator==(const LeafKey&) const = default;
};
struct LeafKeyHash {  // the inputs' hashes are uniform already
  size_t operator()(const LeafKey& k) const {
    uint64_t h = k.in0 * 0x9E3779B97F4A7C15ull ^ k.in1 * 0xC2B2AE3D27D4EB4Full ^ k.in2 * 0x165667B19E3779F9ull;
    h ^= (static_cast<uint64_t>(k.variant) << 40) ^ (static_cast<uint64_t>(static_cast<uint32_t>(k.cut0)) << 20) ^
         static_cast<uint32_t>(k.cut1);
    return h ^ (h >> 29);
  }
};
struct LeafHashes {
  static constexpr size_t kMax = 2;
  uint64_t hash[kMax];
};
constexpr size_t kLeafMemoEntries = 1 << 19;  // at most 2^20 slots of 57 bytes per thread

struct MemoValue {
  bool ok = false;
  std::vector<int> out_shapes;
  DimSources sources;
};

}  // namespace

// One thread's depth-first walk.
class Walker {
 public:
  using Sink = std::function<void(uint64_t, const GraphCode&)>;

  Walker(const Enumerator& e, Sink sink)
      : e_(e),
        sink_(std::move(sink)),
        num_inputs_(static_cast<int>(e.inputs().size())),
        results_(e.inputs(), kResultMemoBytes) {
    const auto& inputs = e_.inputs();
    slots_.reserve(inputs.size() + 2 * kMaxOps + 2);  // no reallocation: kernels hold pointers
    for (size_t i = 0; i < inputs.size(); ++i) {
      Slot s;
      s.t = inputs[i];
      s.shape_id = ShapeId(s.t.shape);
      s.hash = TensorHash(s.t);
      s.activation = e_.set_.inputs[i].activation;
      s.bias = e_.set_.inputs[i].bias;
      for (int d = 0; d < static_cast<int>(s.t.shape.size()); ++d) s.sym[d] = NewLeaf(static_cast<int>(i), d);
      slots_.push_back(std::move(s));
    }
  }

  // The valid first operators, in order: the branches threads share out.
  std::vector<GenOp> FirstOps() {
    std::vector<GenOp> out;
    ForEachCandidate([&](const GenOp& op) {
      if (Apply(op)) {
        out.push_back(op);
        Undo();
      }
    });
    return out;
  }

  // Walks every graph that starts with `first`.
  void WalkBranch(const GenOp& first, const std::atomic<bool>& stop) {
    stop_ = &stop;
    if (Apply(first)) {
      Walk();
      Undo();
    }
  }

 private:
  int ShapeId(const Shape& s) {
    std::vector<int64_t> key(s.begin(), s.end());
    auto [it, fresh] = shape_ids_.try_emplace(key, static_cast<int>(shapes_.size()));
    if (fresh) shapes_.push_back(s);
    return it->second;
  }
  int NewLeaf(int tensor, int dim) {
    SymNode n;
    n.tensor = tensor;
    n.dim = dim;
    sym_.push_back(n);
    return static_cast<int>(sym_.size()) - 1;
  }
  int64_t SymSize(int node) const {
    const SymNode& n = sym_[node];
    if (n.left < 0) return slots_[n.tensor].t.shape[n.dim];
    return SymSize(n.left) + SymSize(n.right);
  }

  static uint32_t Key(const GenOp& op) {
    return (uint32_t{op.variant} << 24) | (uint32_t{op.in[0]} << 16) | (uint32_t{op.in[1]} << 8) | op.in[2];
  }

  // Every operator that could be added, in ascending (variant, inputs) order. Only slots
  // whose role and rank fit an input position are tried there: most combinations fail
  // those, and there are billions of them at K=4.
  template <typename F>
  void ForEachCandidate(F f) {
    const auto& variants = e_.set_.variants;
    absl::InlinedVector<uint8_t, 32> fit[3];
    for (int v = 0; v < static_cast<int>(variants.size()); ++v) {
      const GeneratorVariant& spec = variants[v].spec;
      for (int i = 0; i < spec.arity; ++i) FitPosition(spec, i, fit[i]);
      GenOp op{static_cast<uint8_t>(v), {0, 0, 0}};
      for (uint8_t a : fit[0]) {
        op.in[0] = a;
        if (spec.arity == 1) {
          f(op);
          continue;
        }
        for (uint8_t b : fit[1]) {
          if (spec.commutative && b < a) continue;
          op.in[1] = b;
          if (spec.arity == 2) {
            f(op);
            continue;
          }
          for (uint8_t c : fit[2]) {
            op.in[2] = c;
            f(op);
          }
        }
      }
    }
  }

  // The slots that fit input position `i` of `spec` by role and rank.
  void FitPosition(const GeneratorVariant& spec, int i, absl::InlinedVector<uint8_t, 32>& fit) const {
    const bool graph_input = spec.inputs_only || (spec.graph_input_only_inputs >> i) & 1;
    const int limit = graph_input ? static_cast<int>(e_.inputs().size()) : static_cast<int>(slots_.size());
    fit.clear();
    for (int s = 0; s < limit; ++s)
      if (RoleOk(spec.roles[i], slots_[s]) &&
          (spec.rank < 0 || static_cast<int>(slots_[s].t.shape.size()) == spec.rank))
        fit.push_back(static_cast<uint8_t>(s));
  }

  // A bias input is read only where a variant asks for one.
  bool RoleOk(GenRole role, const Slot& s) const {
    if ((role == GenRole::kBias) != s.bias) return false;
    switch (role) {
      case GenRole::kBias:
        return true;
      case GenRole::kAny:
        return true;
      case GenRole::kActivation:
        return s.activation;
      case GenRole::kWeight:
        return !s.activation;
      case GenRole::kScalar:
        return s.t.shape.empty();
      case GenRole::kTensor:
        return !s.t.shape.empty();
      case GenRole::kMatrix:
        return s.t.shape.size() == 2;
    }
    return false;
  }

  // Adds the operator if it is valid here; returns false (changing nothing) otherwise.
  bool Apply(const GenOp& op) {
    const Variant& var = e_.set_.variants[op.variant];
    const GeneratorVariant& spec = var.spec;
    Cut cut;
    const MemoValue* mv = Admit(op, cut);
    if (!mv) return false;
    const int first_out = static_cast<int>(slots_.size());
    if (!ComputeOutputs(var, op, mv->out_shapes, cut.sizes)) return false;
    const size_t sym_mark = sym_.size();
    DescribeOutputs(op, spec, *mv, cut.concat_node, first_out);
    Push(op, spec, first_out, sym_mark);
    return true;
  }

  // Where a split cuts its input: at the concatenation that built the cut dimension.
  struct Cut {
    int sizes[2] = {0, 0};  // the two parts, 0 where the operator is no split
    int concat_node = -1;   // the SymNode of that concatenation
  };

  // The checks every operator added must pass, before its kernel runs: its inputs, the
  // canonical order, a split's cut, its shapes, a constant's source. Its shape inference
  // where it passes them (valid until the next insertion into the memo), else null.
  const MemoValue* Admit(const GenOp& op, Cut& cut) {
    const Variant& var = e_.set_.variants[op.variant];
    const GeneratorVariant& spec = var.spec;
    if (!InputsFit(op, spec) || !NewAndInCanonicalOrder(op, spec)) return nullptr;
    if (spec.split_at_concat && !FindCut(op, spec, &cut)) return nullptr;
    const MemoKey key{op.variant,
                      slots_[op.in[0]].shape_id,
                      spec.arity > 1 ? slots_[op.in[1]].shape_id : -1,
                      spec.arity > 2 ? slots_[op.in[2]].shape_id : -1,
                      cut.sizes[0],
                      cut.sizes[1]};
    const MemoValue* mv = &Memoized(key, var, op, cut.sizes);
    if (!mv->ok) return nullptr;
    if (spec.constant_output && !FirstSourceOfShape(op, key, mv)) return nullptr;
    return mv;
  }

  // The checks on the inputs' shapes and kinds alone. Roles and ranks are checked
  // already: every operator tried comes from ForEachCandidate.
  bool InputsFit(const GenOp& op, const GeneratorVariant& spec) const {
    if (spec.same_shapes && slots_[op.in[0]].shape_id != slots_[op.in[1]].shape_id) return false;
    if (spec.same_kind && spec.arity == 2 && slots_[op.in[0]].activation != slots_[op.in[1]].activation) return false;
    // Computing on constants alone is constant folding, not a substitution.
    bool all_constant = !spec.constant_output;
    for (int i = 0; i < spec.arity; ++i) all_constant &= slots_[op.in[i]].constant;
    if (all_constant) return false;
    // An input read only for its shape: the first tensor of that shape stands for all.
    for (int i = 0; i < spec.arity; ++i)
      if (spec.shape_only_inputs & (1u << i))
        for (int j = 0; j < op.in[i]; ++j)
          if (slots_[j].shape_id == slots_[op.in[i]].shape_id && RoleOk(spec.roles[i], slots_[j])) return false;
    return true;
  }

  // No two operators doing the same computation on the same inputs; and the canonical
  // order: the new operator must come after every operator it could have preceded (those
  // after its last producer), so each DAG is built once.
  bool NewAndInCanonicalOrder(const GenOp& op, const GeneratorVariant& spec) const {
    const uint32_t key = Key(op);
    const int n = static_cast<int>(ops_.size());
    for (int j = 0; j < n; ++j)
      if (op_keys_[j] == key) return false;
    int last_producer = -1;
    for (int i = 0; i < spec.arity; ++i) last_producer = std::max(last_producer, slots_[op.in[i]].producer);
    for (int j = last_producer + 1; j < n; ++j)
      if (op_keys_[j] > key) return false;
    return true;
  }

  // A split's cut; false where its axis was not built by a concatenation.
  bool FindCut(const GenOp& op, const GeneratorVariant& spec, Cut* cut) const {
    const Slot& in = slots_[op.in[0]];
    const int axis = CutAxis(spec);
    if (axis >= static_cast<int>(in.t.shape.size())) return false;
    cut->concat_node = in.sym[axis];
    const SymNode& concat = sym_[cut->concat_node];
    if (concat.left < 0) return false;  // not where anything was concatenated
    cut->sizes[0] = static_cast<int>(SymSize(concat.left));
    cut->sizes[1] = static_cast<int>(SymSize(concat.right));
    return true;
  }

  // The shape inference of `op` (which `key` describes), computed once per key.
  // The reference lasts until the next insertion into the memo.
  const MemoValue& Memoized(const MemoKey& key, const Variant& var, const GenOp& op, const int cut[2]) {
    auto it = memo_.find(key);
    if (it == memo_.end()) it = memo_.emplace(key, Infer(var, op, cut)).first;
    return it->second;
  }

  // Fills new slots with the operator's outputs: a kernel run, or a copy of what it gave on
  // the same inputs elsewhere in the walk (the same operator on the same tensors recurs
  // under every sibling branch). False, with no slot added, where the kernel fails.
  bool ComputeOutputs(const Variant& var, const GenOp& op, const std::vector<int>& out_shapes, const int cut[2]) {
    const GeneratorVariant& spec = var.spec;
    const int first_out = static_cast<int>(slots_.size());
    const KernelMemo<uint32_t>::Key rkey{op.variant,
                                         slots_[op.in[0]].hash,
                                         spec.arity > 1 ? slots_[op.in[1]].hash : 0,
                                         spec.arity > 2 ? slots_[op.in[2]].hash : 0,
                                         cut[0],
                                         cut[1]};
    for (int s : out_shapes) {
      slots_.emplace_back();
      Slot& out = slots_.back();
      out.shape_id = s;
      out.t.shape = shapes_[s];
    }
    // The last operator a graph can take (most graphs end with one): no kernel reads its
    // outputs, only their hashes are needed, from a memo of hashes alone.
    const bool last = static_cast<int>(ops_.size()) + 1 == e_.max_ops();
    const size_t n = out_shapes.size();
    const LeafKey lkey{rkey.in0, rkey.in1, rkey.in2, rkey.variant, cut[0], cut[1]};
    if (last && n <= LeafHashes::kMax) {
      auto it = leaf_memo_.find(lkey);
      if (it != leaf_memo_.end()) {
        for (size_t o = 0; o < n; ++o) slots_[first_out + o].hash = it->second.hash[o];
        return true;
      }
    }
    if (const auto* hit = results_.Find(rkey)) {
      for (size_t o = 0; o < n; ++o) {
        if (!last) slots_[first_out + o].t.data = hit->outputs[o]->data;
        slots_[first_out + o].hash = hit->hashes[o];
      }
      return true;
    }
    if (!RunKernel(var, op, cut, first_out)) {
      slots_.resize(first_out);
      return false;
    }
    if (last && n <= LeafHashes::kMax) {
      LeafHashes h;
      for (size_t o = 0; o < n; ++o) h.hash[o] = slots_[first_out + o].hash = TensorHash(slots_[first_out + o].t);
      if (leaf_memo_.size() >= kLeafMemoEntries) leaf_memo_.clear();
      leaf_memo_.emplace(lkey, h);
      return true;
    }
    KernelMemo<uint32_t>::Entry entry;
    for (size_t o = first_out; o < slots_.size(); ++o) {
      Slot& out = slots_[o];
      out.hash = TensorHash(out.t);
      entry.outputs.push_back(std::make_shared<const Tensor<uint32_t>>(out.t));
      entry.hashes.push_back(out.hash);
    }
    results_.MakeRoom();  // what it found is copied into the slots already
    results_.Add(rkey, std::move(entry));
    return true;
  }

  // Runs the operator's kernel into the slots from `first_out` on (shaped, not yet filled).
  bool RunKernel(const Variant& var, const GenOp& op, const int cut[2], int first_out) {
    const GeneratorVariant& spec = var.spec;
    KernelArgs<uint32_t> args;
    for (int i = 0; i < spec.arity; ++i) {
      args.in.push_back(&slots_[op.in[i]].t);
      args.constant.push_back(nullptr);
    }
    for (size_t o = first_out; o < slots_.size(); ++o) {
      Slot& out = slots_[o];
      out.t.data.assign(NumElements(out.t.shape), 0u);
      args.out.push_back(&out.t);
    }
    Params cut_params;  // a copy only where a split's sizes are added
    if (spec.split_at_concat) cut_params = WithCut(spec, cut[0], cut[1]);
    return var.op->semantics().RunUint32(spec.split_at_concat ? cut_params : spec.params, args).ok();
  }

  // Sets the new output slots' kind, producer and symbolic dimensions.
  void DescribeOutputs(const GenOp& op, const GeneratorVariant& spec, const MemoValue& mv, int concat_node,
                       int first_out) {
    // An input read for its shape only does not make the output an activation.
    bool activation = false;
    for (int i = 0; i < spec.arity; ++i)
      activation |= slots_[op.in[i]].activation && !(spec.shape_only_inputs & (1u << i));
    // Biases joined are a bias (what a merged product reads); anything else reading a
    // bias, such as a Gemm, makes an ordinary tensor.
    bool bias = spec.arity > 0;
    for (int i = 0; i < spec.arity; ++i) bias &= slots_[op.in[i]].bias;
    const int position = static_cast<int>(ops_.size());
    for (size_t o = 0; o < mv.out_shapes.size(); ++o) {
      Slot& out = slots_[first_out + o];
      out.activation = activation && !spec.constant_output;
      out.constant = spec.constant_output;
      out.bias = bias;
      out.producer = position;
      for (int d = 0; d < static_cast<int>(out.t.shape.size()); ++d)
        out.sym[d] = DimSymbol(op, mv.sources[o][d], static_cast<int>(o), d, concat_node, first_out);
    }
  }

  // The SymNode of dimension `d` of output `o`, which comes from `src`.
  int DimSymbol(const GenOp& op, const DimSource& src, int o, int d, int concat_node, int first_out) {
    switch (src.kind) {
      case DimSource::kCopy:
        return slots_[op.in[src.input]].sym[src.dim];
      case DimSource::kConcat: {
        SymNode n;
        n.left = slots_[op.in[0]].sym[src.dim];
        n.right = slots_[op.in[1]].sym[src.dim];
        sym_.push_back(n);
        return static_cast<int>(sym_.size()) - 1;
      }
      case DimSource::kSplitPart:
        return o == 0 ? sym_[concat_node].left : sym_[concat_node].right;
      case DimSource::kNew:
        return NewLeaf(first_out + o, d);
    }
    return -1;
  }

  // Records the operator, whose outputs are the slots from `first_out` on, with what Undo
  // needs. Fingerprint: inputs read for the first time stop being outputs; the new ones
  // start.
  void Push(const GenOp& op, const GeneratorVariant& spec, int first_out, size_t sym_mark) {
    Frame frame{sym_mark, fingerprint_, weight_outputs_, inputs_read_, {}, 0};
    inputs_read_ = InputsRead(op, spec);
    for (int i = 0; i < spec.arity; ++i) {
      Slot& in = slots_[op.in[i]];
      if (in.producer >= 0 && in.uses == 0) {
        fingerprint_ -= OutputTerm(in.hash);
        weight_outputs_ -= !in.activation;
      }
      ++in.uses;
      frame.used[frame.num_used++] = op.in[i];
    }
    for (size_t o = first_out; o < slots_.size(); ++o) {
      fingerprint_ += OutputTerm(slots_[o].hash);
      weight_outputs_ += !slots_[o].activation;
    }
    frames_.push_back(std::move(frame));
    op_keys_[ops_.size()] = Key(op);
    ops_.push_back(op);
  }

  void Undo() {
    Frame& f = frames_.back();
    for (int k = 0; k < f.num_used; ++k) --slots_[f.used[k]].uses;
    fingerprint_ = f.fingerprint;
    weight_outputs_ = f.weight_outputs;
    inputs_read_ = f.inputs_read;
    sym_.resize(f.sym_mark);
    const int first_out = static_cast<int>(slots_.size()) - CountOutputs(ops_.back());
    slots_.resize(first_out);
    ops_.pop_back();
    frames_.pop_back();
  }

  int CountOutputs(const GenOp& op) const {
    int n = 0;
    for (const Slot& s : slots_)
      if (s.producer == static_cast<int>(ops_.size()) - 1) ++n;
    return n;
  }

  // A constant is a function of its shape: of the tensors that would give the same shape,
  // only the first may be its source, so equal constants are built once. `own` is the memo
  // entry of `own_key`, kept valid across the insertions made here.
  bool FirstSourceOfShape(const GenOp& op, const MemoKey& own_key, const MemoValue*& own) {
    const Variant& var = e_.set_.variants[op.variant];
    for (int j = 0; j < op.in[0]; ++j) {
      if (!RoleOk(var.spec.roles[0], slots_[j])) continue;
      const MemoKey key{op.variant, slots_[j].shape_id, -1, -1, 0, 0};
      auto it = memo_.find(key);
      if (it == memo_.end()) {
        GenOp alt = op;
        alt.in[0] = static_cast<uint8_t>(j);
        const int no_cut[2] = {0, 0};
        it = memo_.emplace(key, Infer(var, alt, no_cut)).first;
        own = &memo_.find(own_key)->second;  // the insertion may have moved it
      }
      if (it->second.ok && it->second.out_shapes == own->out_shapes) return false;
    }
    return true;
  }

  MemoValue Infer(const Variant& var, const GenOp& op, const int cut[2]) {
    MemoValue mv;
    std::vector<InputInfo> infos;
    for (int i = 0; i < var.spec.arity; ++i) infos.push_back({true, DataType::kFloat32, slots_[op.in[i]].t.shape});
    const Params params = var.spec.split_at_concat ? WithCut(var.spec, cut[0], cut[1]) : var.spec.params;
    auto types = var.op->semantics().InferTypes(params, infos);
    if (!types.ok()) return mv;
    for (const OutputType& t : *types) {
      if (t.shape.size() > 4 || NumElements(t.shape) > 4096) return mv;  // keep tensors small
      mv.out_shapes.push_back(ShapeId(t.shape));
    }
    mv.sources = var.op->rule_form().DimensionSources(params, infos, *types);
    mv.ok = !SameAsEarlierVariant(var, params, infos, *types);
    return mv;
  }

  // On these shapes, does an earlier variant of the same operator compute the same thing
  // (e.g. same and valid padding of a 1x1 kernel)? Then this one would only duplicate it.
  bool SameAsEarlierVariant(const Variant& var, const Params& params, const std::vector<InputInfo>& infos,
                            const std::vector<OutputType>& types) {
    std::vector<Tensor<uint32_t>> ins;
    Rng rng(0xD1CE);
    for (const InputInfo& i : infos) {
      Tensor<uint32_t> t(i.shape);
      for (uint32_t& v : t.data) v = rng.NextU32();
      ins.push_back(std::move(t));
    }
    std::vector<KernelInput<uint32_t>> operands;
    for (const auto& t : ins) operands.push_back(&t);
    auto mine = RunOp<uint32_t>(*var.op, params, operands);
    if (!mine.ok()) return true;
    for (const Variant& other : e_.set_.variants) {
      if (&other == &var) break;
      if (other.op != var.op || other.spec.split_at_concat || !ReadBiasesAlike(other.spec, var.spec)) continue;
      auto theirs = RunOp<uint32_t>(*other.op, other.spec.params, operands);
      if (!theirs.ok() || theirs->size() != mine->size()) continue;
      bool same = true;
      for (size_t o = 0; same && o < mine->size(); ++o)
        same = (*mine)[o].shape == (*theirs)[o].shape && (*mine)[o].data == (*theirs)[o].data;
      if (same) return true;
    }
    return false;
  }

  // Variants reading biases at different positions never stand for each other: a bias
  // is read only where a variant asks for one (Concat's bias variant computes what its
  // axis-0 variant does, on tensors that variant never reads).
  static bool ReadBiasesAlike(const GeneratorVariant& a, const GeneratorVariant& b) {
    for (int i = 0; i < 3; ++i)
      if ((a.roles[i] == GenRole::kBias) != (b.roles[i] == GenRole::kBias)) return false;
    return true;
  }

  void Walk() {
    if (stop_->load(std::memory_order_relaxed)) return;
    // A graph with an output computed from weights alone is not recorded: weight-only
    // subgraphs are folded ahead of time, so no rule about them can matter. Nor is one
    // reading an input alike an earlier one it does not read (Enumerator::ReadsFirstAlike):
    // it is a renaming of one that is.
    if (weight_outputs_ == 0 && e_.ReadsFirstAlike(inputs_read_)) {
      GraphCode code;
      code.num_ops = static_cast<uint8_t>(ops_.size());
      std::copy(ops_.begin(), ops_.end(), code.ops);
      Summarize(code, nullptr, {});
      sink_(fingerprint_, code);
    }
    if (static_cast<int>(ops_.size()) == e_.max_ops()) return;
    if (static_cast<int>(ops_.size()) + 1 == e_.max_ops()) {
      ForEachCandidate([&](const GenOp& op) { EmitLast(op); });
      return;
    }
    ForEachCandidate([&](const GenOp& op) {
      if (Apply(op)) {
        Walk();
        Undo();
      }
    });
  }

  // The graphs ending with the last operator a graph can take, which is most of them:
  // what Apply, Walk and Undo do for it, without the slots, dimension histories and
  // frames no later operator will read. Sinks the graph `op` completes, if it is valid
  // and records one.
  void EmitLast(const GenOp& op) {
    const Variant& var = e_.set_.variants[op.variant];
    const GeneratorVariant& spec = var.spec;
    if (!e_.ReadsFirstAlike(InputsRead(op, spec))) return;  // see Walk()
    Cut cut;
    const MemoValue* mv = Admit(op, cut);
    if (!mv) return;
    absl::InlinedVector<uint64_t, LeafHashes::kMax> out;
    if (!LastOutputHashes(var, op, *mv, cut.sizes, out)) return;
    // The fingerprint and weight outputs as Push would leave them.
    uint64_t fingerprint = fingerprint_;
    int weight_outputs = weight_outputs_;
    bool activation = false;
    for (int i = 0; i < spec.arity; ++i) {
      const Slot& in = slots_[op.in[i]];
      activation |= in.activation && !(spec.shape_only_inputs & (1u << i));
      const bool read_before = std::find(op.in, op.in + i, op.in[i]) != op.in + i;
      if (in.producer >= 0 && in.uses == 0 && !read_before) {
        fingerprint -= OutputTerm(in.hash);
        weight_outputs -= !in.activation;
      }
    }
    const bool out_activation = activation && !spec.constant_output;
    for (size_t o = 0; o < mv->out_shapes.size(); ++o) {
      fingerprint += OutputTerm(out[o]);
      weight_outputs += !out_activation;
    }
    if (weight_outputs != 0) return;  // see Walk()
    GraphCode code;
    code.num_ops = static_cast<uint8_t>(ops_.size() + 1);
    std::copy(ops_.begin(), ops_.end(), code.ops);
    code.ops[ops_.size()] = op;
    Summarize(code, &op, out);
    sink_(fingerprint, code);
  }

  // The output summary of the graph of ops_, then `last` (where given) with outputs
  // hashed `last_hashes`: the graph's outputs are the slots no operator reads.
  void Summarize(GraphCode& code, const GenOp* last, absl::Span<const uint64_t> last_hashes) const {
    int op_outputs[kMaxOps] = {};
    absl::InlinedVector<uint64_t, 8> hashes;
    const int n = static_cast<int>(e_.inputs().size());
    const int last_arity = last ? e_.set_.variants[last->variant].spec.arity : 0;
    for (int s = n; s < static_cast<int>(slots_.size()); ++s) {
      const Slot& slot = slots_[s];
      ++op_outputs[slot.producer];
      const bool read_by_last = last && std::find(last->in, last->in + last_arity, s) != last->in + last_arity;
      if (slot.uses == 0 && !read_by_last) hashes.push_back(slot.hash);
    }
    if (last) {
      op_outputs[ops_.size()] = static_cast<int>(last_hashes.size());
      hashes.insert(hashes.end(), last_hashes.begin(), last_hashes.end());
    }
    SetOutputSummary(code, op_outputs, hashes.data(), static_cast<int>(hashes.size()));
  }

  // The hashes of the last operator's outputs, from the memo of hashes where it has them;
  // false where its kernel fails.
  bool LastOutputHashes(const Variant& var, const GenOp& op, const MemoValue& mv, const int cut[2],
                        absl::InlinedVector<uint64_t, LeafHashes::kMax>& out) {
    const GeneratorVariant& spec = var.spec;
    const size_t n = mv.out_shapes.size();
    if (n <= LeafHashes::kMax) {
      const LeafKey lkey{slots_[op.in[0]].hash,
                         spec.arity > 1 ? slots_[op.in[1]].hash : 0,
                         spec.arity > 2 ? slots_[op.in[2]].hash : 0,
                         op.variant,
                         cut[0],
                         cut[1]};
      auto it = leaf_memo_.find(lkey);
      if (it != leaf_memo_.end()) {
        out.assign(it->second.hash, it->second.hash + n);
        return true;
      }
    }
    const int first_out = static_cast<int>(slots_.size());
    if (!ComputeOutputs(var, op, mv.out_shapes, cut)) return false;
    for (size_t o = 0; o < n; ++o) out.push_back(slots_[first_out + o].hash);
    slots_.resize(first_out);
    return true;
  }

  // The graph inputs ops_ and then `op` read, a bit each.
  uint32_t InputsRead(const GenOp& op, const GeneratorVariant& spec) const {
    uint32_t read = inputs_read_;
    for (int i = 0; i < spec.arity; ++i)
      if (op.in[i] < num_inputs_) read |= 1u << op.in[i];
    return read;
  }

  struct Frame {
    size_t sym_mark;
    uint64_t fingerprint;
    int weight_outputs;
    uint32_t inputs_read;
    std::array<int, 3> used{};  // the slots the operator reads
    int num_used = 0;
  };

  const Enumerator& e_;
  Sink sink_;
  const std::atomic<bool>* stop_ = nullptr;
  std::vector<Slot> slots_;
  std::vector<GenOp> ops_;
  std::array<uint32_t, kMaxOps> op_keys_{};  // Key(ops_[j])
  std::vector<Frame> frames_;
  std::vector<SymNode> sym_;
  uint64_t fingerprint_ = 0;
  int weight_outputs_ = 0;    // outputs computed from weights alone
  uint32_t inputs_read_ = 0;  // the graph inputs ops_ read, a bit each
  const int num_inputs_;
  std::vector<Shape> shapes_;
  absl::flat_hash_map<std::vector<int64_t>, int> shape_ids_;
  absl::flat_hash_map<MemoKey, MemoValue> memo_;
  // Operator outputs by their inputs' TensorHash (the walk's slot hashes), with the
  // outputs' TensorHash; no dimension sources (the shape memo above has those).
  KernelMemo<uint32_t> results_;
  // The hashes of the last operators' outputs (their data is never read), by inputs.
  absl::flat_hash_map<LeafKey, LeafHashes, LeafKeyHash> leaf_memo_;
};

namespace {

// What the walking threads share with the thread that watches them.
struct WalkState {
  std::atomic<size_t> next{0};      // branches taken
  std::atomic<size_t> done{0};      // branches walked
  std::atomic<uint64_t> graphs{0};  // graphs found, added in batches
  std::atomic<bool> stop{false};
  absl::Status check;  // what limits.check said, when it stopped the walk
};

// One thread's work: branches taken in turn until none is left or the walk is stopped.
void WalkBranches(const Enumerator& e, const std::vector<GenOp>& branches, int thread, const GraphSink& sink,
                  WalkState& state) {
  uint64_t local = 0;
  Walker w(e, [&](uint64_t fp, const GraphCode& c) {
    sink(thread, fp, c);
    if (++local == 4096) {
      state.graphs.fetch_add(local, std::memory_order_relaxed);
      local = 0;
    }
  });
  for (size_t b; (b = state.next.fetch_add(1)) < branches.size() && !state.stop.load();) {
    w.WalkBranch(branches[b], state.stop);
    state.done.fetch_add(1);
  }
  state.graphs.fetch_add(local);
}

// Zero bytes per graph: the sink holds the graphs, and limits.check its budget.
bool OverBudget(const EnumerationLimits& limits, uint64_t bytes_per_graph, const WalkState& state) {
  return bytes_per_graph > 0 && state.graphs.load() * bytes_per_graph > limits.max_bytes;
}

// Until every branch is walked: reports progress, and stops the walk past the memory budget.
void Watch(const EnumerationLimits& limits, uint64_t bytes_per_graph, size_t branches, WalkState& state) {
  while (state.done.load() < branches && !state.stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (limits.progress) limits.progress(static_cast<double>(state.done.load()) / branches, state.graphs.load());
    if (OverBudget(limits, bytes_per_graph, state)) state.stop = true;
    if (limits.check && !(state.check = limits.check()).ok()) state.stop = true;
  }
}

}  // namespace

absl::Status Enumerator::Run(const EnumerationLimits& limits, uint64_t bytes_per_graph, const GraphSink& sink) const {
  // The graphs with no operators: each input alone.
  for (size_t i = 0; i < inputs_.size() && limits.part == 0; ++i) {
    // A weight alone, or an input alike an earlier one: see Walker::Walk().
    if (!set_.inputs[i].activation || !ReadsFirstAlike(1u << i)) continue;
    GraphCode code;
    code.lone_input = static_cast<uint8_t>(i);
    sink(0, OutputTerm(TensorHash(inputs_[i])), code);
  }
  if (max_ops_ == 0) return absl::OkStatus();
  std::vector<GenOp> branches;
  const std::vector<GenOp> first_ops = Walker(*this, nullptr).FirstOps();
  for (size_t b = 0; b < first_ops.size(); ++b)
    if (b % std::max(1, limits.parts) == static_cast<size_t>(limits.part)) branches.push_back(first_ops[b]);
  WalkState state;
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, limits.threads); ++t)
    pool.emplace_back([&, t] { WalkBranches(*this, branches, t, sink, state); });
  Watch(limits, bytes_per_graph, branches.size(), state);  // on the calling thread
  for (auto& th : pool) th.join();
  if (limits.progress) limits.progress(1.0, state.graphs.load());
  if (!state.check.ok()) return state.check;
  if (limits.check) RETURN_IF_ERROR(limits.check());
  if (state.stop.load() || OverBudget(limits, bytes_per_graph, state))
    return absl::ResourceExhaustedError(absl::StrCat(
        "enumeration stopped after ", state.graphs.load(), " graphs: it would need more than the memory budget of ",
        limits.max_bytes >> 20, " MiB (--max_memory_mb); lower -k or raise the budget"));
  return absl::OkStatus();
}

namespace {

using Parts = std::vector<std::vector<Fingerprinted>>;

// By fingerprint, then by code.
struct FingerprintOrder {
  bool operator()(const Fingerprinted& a, const Fingerprinted& b) const {
    if (a.fingerprint != b.fingerprint) return a.fingerprint < b.fingerprint;
    return std::memcmp(&a.graph, &b.graph, sizeof(GraphCode)) < 0;
  }
};

// Each part sorted on its own thread.
void SortParts(Parts& parts) {
  std::vector<std::thread> pool;
  for (auto& part : parts) pool.emplace_back([&part] { std::sort(part.begin(), part.end(), FingerprintOrder()); });
  for (auto& th : pool) th.join();
}

// Calls `emit_run` on every run of equal fingerprints of the sorted parts merged, in order.
template <typename F>
void ForEachRun(const Parts& parts, F&& emit_run) {
  const FingerprintOrder less;
  std::vector<size_t> head(parts.size(), 0);
  std::vector<const Fingerprinted*> run;
  while (true) {
    int best = -1;
    for (size_t t = 0; t < parts.size(); ++t)
      if (head[t] < parts[t].size() && (best < 0 || less(parts[t][head[t]], parts[best][head[best]])))
        best = static_cast<int>(t);
    if (best < 0 || (!run.empty() && parts[best][head[best]].fingerprint != run.front()->fingerprint)) {
      if (!run.empty()) emit_run(run);
      run.clear();
      if (best < 0) break;
    }
    run.push_back(&parts[best][head[best]++]);
  }
}

// The sorted parts merged, keeping only runs of at least `min_run` equal fingerprints.
// They are counted first so that the result is allocated once: at K=4 the parts hold 150
// million graphs and a full merged copy would double the peak memory.
std::vector<Fingerprinted> MergeRuns(const Parts& parts, size_t min_run) {
  size_t kept = 0;
  ForEachRun(parts,
             [&](const std::vector<const Fingerprinted*>& run) { kept += run.size() >= min_run ? run.size() : 0; });
  std::vector<Fingerprinted> all;
  all.reserve(kept);
  ForEachRun(parts, [&](const std::vector<const Fingerprinted*>& run) {
    if (run.size() >= min_run)
      for (const Fingerprinted* f : run) all.push_back(*f);
  });
  return all;
}

}  // namespace

absl::StatusOr<std::vector<Fingerprinted>> Enumerator::Enumerate(const EnumerationLimits& limits, bool shared_only,
                                                                 uint64_t* graphs) const {
  Parts parts(std::max(1, limits.threads));  // per thread
  *graphs = 0;
  // Each graph takes one Fingerprinted, up to twice over while vectors grow and merge.
  RETURN_IF_ERROR(Run(limits, 2 * sizeof(Fingerprinted), [&](int t, uint64_t fp, const GraphCode& c) {
    parts[t].push_back({fp, c});
  }));
  SortParts(parts);
  for (const auto& part : parts) *graphs += part.size();
  return MergeRuns(parts, shared_only ? 2 : 1);
}

}  // namespace taso::gen
