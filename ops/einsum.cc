// Einsum of two float operands whose equation is a batched matrix product: every letter
// is a batch letter (in both operands and the output), a row (first operand and output),
// a column (second operand and output) or summed (both operands, not the output). Each
// letter names one dimension of each term it is in, of one size in both. Other equations
// (an ellipsis, a diagonal, a letter summed within one operand, one or three operands)
// stay opaque. In the library it is typed (ONNX 1.12 infers only its rank, which left all
// that follows a PyTorch einsum of unknown shape) and can be lowered to MatMul
// (taso/passes/einsum_products.h), which ONNX Runtime runs 1.2-1.5x faster.
#include "taso/ir/ops/einsum.h"

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/ascii.h"
#include "dense_product.h"
#include "onnx_attributes.h"
#include "op_util.h"
#include "taso/ir/onnx_inference_hazard.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

// An equation's letters by role. `batch`, `rows` and `cols` in the output's order,
// `summed` in the first operand's.
struct ProductForm {
  std::string a, b, out;
  std::string batch, rows, cols, summed;
  // The equation as the parameter holds it: no spaces, the output explicit.
  std::string Equation() const { return absl::StrCat(a, ",", b, "->", out); }
};

bool HasRepeatedLetter(absl::string_view term) {
  std::string sorted(term);
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

bool Contains(absl::string_view term, char c) { return term.find(c) != absl::string_view::npos; }

// ONNX's implicit output: the letters that occur once, in alphabetical order. Only where
// all letters have one case, so that "alphabetical" cannot be read two ways.
std::optional<std::string> ImplicitOutput(absl::string_view a, absl::string_view b) {
  const std::string all = absl::StrCat(a, b);
  const bool lower = std::all_of(all.begin(), all.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  const bool upper = std::all_of(all.begin(), all.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  if (!lower && !upper) return std::nullopt;
  std::string out;
  for (char c : all)
    if (std::count(all.begin(), all.end(), c) == 1) out.push_back(c);
  std::sort(out.begin(), out.end());
  return out;
}

// The equation's product form; nullopt where it is not one (see the file's comment).
std::optional<ProductForm> ParseProduct(absl::string_view equation) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  const std::string inputs = eq.substr(0, arrow);
  const size_t comma = inputs.find(',');
  if (comma == std::string::npos || inputs.find(',', comma + 1) != std::string::npos) return std::nullopt;
  ProductForm f;
  f.a = inputs.substr(0, comma);
  f.b = inputs.substr(comma + 1);
  const std::string letters = absl::StrCat(f.a, f.b, arrow == std::string::npos ? "" : eq.substr(arrow + 2));
  if (!std::all_of(letters.begin(), letters.end(), [](char c) { return absl::ascii_isalpha(c); })) return std::nullopt;
  if (arrow != std::string::npos) {
    f.out = eq.substr(arrow + 2);
  } else {
    std::optional<std::string> implicit = ImplicitOutput(f.a, f.b);
    if (!implicit) return std::nullopt;
    f.out = *implicit;
  }
  if (HasRepeatedLetter(f.a) || HasRepeatedLetter(f.b) || HasRepeatedLetter(f.out)) return std::nullopt;
  for (char c : f.out) {
    const bool in_a = Contains(f.a, c), in_b = Contains(f.b, c);
    if (in_a && in_b)
      f.batch.push_back(c);
    else if (in_a)
      f.rows.push_back(c);
    else if (in_b)
      f.cols.push_back(c);
    else
      return std::nullopt;  // an output letter of no operand
  }
  for (char c : f.a)
    if (!Contains(f.out, c)) {
      if (!Contains(f.b, c)) return std::nullopt;  // summed within the first operand alone
      f.summed.push_back(c);
    }
  for (char c : f.b)
    if (!Contains(f.out, c) && !Contains(f.a, c)) return std::nullopt;
  return f;
}

// Each letter's size, from the operands' shapes; an error where a letter has two sizes or
// a term's rank is not its letter count.
absl::StatusOr<std::vector<int64_t>> LetterSizes(const ProductForm& f, const Shape& a, const Shape& b) {
  if (a.size() != f.a.size() || b.size() != f.b.size())
    return Bad(absl::StrCat("equation ", f.Equation(), " does not fit operands ", ShapeToString(a), " and ",
                            ShapeToString(b)));
  std::vector<int64_t> size(128, -1);
  for (size_t i = 0; i < a.size(); ++i) size[f.a[i]] = a[i];
  for (size_t i = 0; i < b.size(); ++i) {
    if (size[f.b[i]] >= 0 && size[f.b[i]] != b[i])
      return Bad(absl::StrCat("letter '", std::string(1, f.b[i]), "' of ", f.Equation(), " is ", size[f.b[i]],
                              " in the first operand and ", b[i], " in the second"));
    size[f.b[i]] = b[i];
  }
  return size;
}

absl::StatusOr<ProductForm> FormOf(const Params& p) {
  std::optional<ProductForm> f = ParseProduct(p.Str("equation"));
  if (!f) return Bad(absl::StrCat("equation '", p.Str("equation"), "' is not a matrix product"));
  return *std::move(f);
}

// Where each letter of `to` sits in `term`.
std::vector<int64_t> Positions(absl::string_view term, absl::string_view to) {
  std::vector<int64_t> perm;
  for (char c : to) perm.push_back(static_cast<int64_t>(term.find(c)));
  return perm;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// x's dimensions in the order `perm` gives, row-major, into `y` (x's size, not x).
template <typename S>
void Permute(const std::type_identity_t<TensorView<S>>& x, const std::vector<int64_t>& perm, S* y) {
  if (IsIdentity(perm)) {
    std::copy(x.data.begin(), x.data.end(), y);
    return;
  }
  const Shape strides = RowMajorStrides(x.shape);
  Shape shape, from;
  for (int64_t d : perm) {
    shape.push_back(x.shape[d]);
    from.push_back(strides[d]);
  }
  Shape idx(perm.size(), 0);
  int64_t src = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    y[i] = x.data[src];
    for (int d = static_cast<int>(perm.size()) - 1; d >= 0; --d) {  // odometer
      src += from[d];
      if (++idx[d] < shape[d]) break;
      src -= from[d] * shape[d];
      idx[d] = 0;
    }
  }
}

template <typename S>
std::vector<S> Permuted(const TensorView<S>& x, const std::vector<int64_t>& perm) {
  std::vector<S> y(x.data.size());
  Permute(x, perm, y.data());
  return y;
}

int64_t SizeOf(absl::string_view letters, const std::vector<int64_t>& size) {
  int64_t n = 1;
  for (char c : letters) n *= size[c];
  return n;
}

class Einsum : public KernelOp<Einsum> {
 public:
  absl::string_view name() const override { return op_names::kEinsum; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "Inputs[0]"));
    RETURN_IF_ERROR(ExpectFloat(in[1], "Inputs[1]"));
    ASSIGN_OR_RETURN(const ProductForm f, FormOf(p));
    ASSIGN_OR_RETURN(const std::vector<int64_t> size, LetterSizes(f, in[0].shape, in[1].shape));
    Shape out;
    for (char c : f.out) out.push_back(size[c]);
    return std::vector<OutputType>{{DataType::kFloat32, out}};
  }

  // The operands gathered to [batch, rows, summed] and [batch, summed, cols], multiplied
  // batch by batch (each output sums its products in the summed letters' row-major order),
  // and the product [batch, rows, cols] put in the output's order.
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& args) {
    ASSIGN_OR_RETURN(const ProductForm f, FormOf(p));
    const TensorView<S>& a = *args.in[0];
    const TensorView<S>& b = *args.in[1];
    ASSIGN_OR_RETURN(const std::vector<int64_t> size, LetterSizes(f, a.shape, b.shape));
    const std::vector<S> ga = Permuted(a, Positions(f.a, absl::StrCat(f.batch, f.rows, f.summed)));
    const std::vector<S> gb = Permuted(b, Positions(f.b, absl::StrCat(f.batch, f.summed, f.cols)));
    const int64_t batches = SizeOf(f.batch, size), m = SizeOf(f.rows, size), k = SizeOf(f.summed, size),
                  n = SizeOf(f.cols, size);
    const std::string product_order = absl::StrCat(f.batch, f.rows, f.cols);
    Shape product_shape;
    for (char c : product_order) product_shape.push_back(size[c]);
    Tensor<S> product(product_shape);
    MultiplyDenseBatches<S>(batches, m, k, n, [&](int64_t i) {
      return std::tuple<const S*, const S*, S*>(ga.data() + i * m * k, gb.data() + i * k * n,
                                                product.data.data() + i * m * n);
    });
    // Into the output's own buffer: executors hand kernels storage they keep.
    Permute(product, Positions(product_order, f.out), args.out[0]->data.data());
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    absl::StatusOr<ProductForm> f = FormOf(p);
    if (!f.ok()) return m;
    absl::StatusOr<std::vector<int64_t>> size = LetterSizes(*f, in[0].shape, in[1].shape);
    if (size.ok()) m.flops = 2.0 * static_cast<double>(NumElements(out[0].shape)) * SizeOf(f->summed, *size);
    return m;
  }

  DimSources DimensionSources(const Params& p, absl::Span<const InputInfo>,
                              absl::Span<const OutputType> out) const override {
    absl::StatusOr<ProductForm> f = FormOf(p);
    std::vector<DimSource> d(out[0].shape.size());
    if (f.ok())
      for (size_t i = 0; i < f->out.size(); ++i) {
        const size_t in_a = f->a.find(f->out[i]);
        d[i] = in_a != std::string::npos ? DimSource::Copy(0, static_cast<int>(in_a))
                                         : DimSource::Copy(1, static_cast<int>(f->b.find(f->out[i])));
      }
    return {d};
  }

  std::vector<std::string> onnx_op_types() const override { return {"Einsum"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    const std::vector<InputInfo>& in = node.inputs();
    std::optional<ProductForm> f = ParseProduct(node.Str("equation", ""));
    if (!f || in.size() != 2 || !in[0].present || !in[1].present || in[0].dtype != DataType::kFloat32 ||
        in[1].dtype != DataType::kFloat32 || !LetterSizes(*f, in[0].shape, in[1].shape).ok())
      return std::nullopt;  // ONNX Runtime's to run, or to refuse
    return Params().Set("equation", f->Equation());
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    OnnxExportNode::SetStr(EmitSame(e, "Einsum"), "equation", p.Str("equation"));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Einsum);

// ONNX 1.12's inference of an implicit output counts each character of the operands'
// terms but ',' and '.' at `num_letter_occurrences[c - 'a']`, an array of 26: an uppercase
// letter ("iJ,Jk", valid ONNX) writes before it, and the process dies.
bool ImplicitOutputBeyondLowercase(const onnx::NodeProto& node) {
  const std::string equation = StringAttribute(node, "equation", "");
  if (equation.find("->") != std::string::npos) return false;
  return std::any_of(equation.begin(), equation.end(),
                     [](char c) { return c != ',' && c != '.' && c != ' ' && (c < 'a' || c > 'z'); });
}
TASO_REGISTER_ONNX_INFERENCE_HAZARD("Einsum", ImplicitOutputBeyondLowercase);

// The letters of MatMul's operands and product that compute an equation, where one
// MatMul does: [batch..., m, k] x [batch..., k, n] for one row, column and summed letter;
// with no batch letter, also the rows of a linear map, [rows..., k] x [k, n] ("bnd,de->bne":
// MatMul broadcasts a matrix over leading dimensions), or its columns, [m, k] x
// [cols..., k, n]. Other forms would need Reshapes of sizes that may be symbolic.
struct MatMulOrder {
  std::string left, right, product;
};
std::optional<MatMulOrder> MatMulOrderOf(const ProductForm& f) {
  if (f.summed.size() != 1 || f.rows.empty() || f.cols.empty()) return std::nullopt;
  if (f.rows.size() == 1 && f.cols.size() == 1)
    return MatMulOrder{f.batch + f.rows + f.summed, f.batch + f.summed + f.cols, f.batch + f.rows + f.cols};
  if (!f.batch.empty()) return std::nullopt;
  if (f.cols.size() == 1) return MatMulOrder{f.rows + f.summed, f.summed + f.cols, f.rows + f.cols};
  if (f.rows.size() != 1) return std::nullopt;
  const std::string lead = f.cols.substr(0, f.cols.size() - 1), last = f.cols.substr(f.cols.size() - 1);
  return MatMulOrder{f.rows + f.summed, lead + f.summed + last, lead + f.rows + last};
}

const OpDef* Registered(absl::string_view name) { return OpRegistry::Global().Find(name); }

// Adds a Transpose of `x` by `perm`, or returns `x` where `perm` keeps the order.
absl::StatusOr<ValueId> AddTransposed(Graph& graph, ValueId x, const std::vector<int64_t>& perm,
                                      const std::string& name) {
  if (IsIdentity(perm)) return x;
  ASSIGN_OR_RETURN(const std::vector<ValueId> out,
                   graph.AddNode(Registered(op_names::kTranspose), Params().Set("perm", perm), {x}, name, {name}));
  return out[0];
}

}  // namespace

absl::StatusOr<std::optional<ValueId>> AddEinsumAsMatMul(const Graph& old, NodeId einsum, Graph& graph, ValueId a,
                                                         ValueId b, const std::string& output_name,
                                                         absl::FunctionRef<std::string(absl::string_view)> fresh) {
  const Node& node = old.node(einsum);
  if (node.op == nullptr || node.op->name() != op_names::kEinsum) return std::nullopt;
  ASSIGN_OR_RETURN(const ProductForm f, FormOf(node.params));
  const std::optional<MatMulOrder> order = MatMulOrderOf(f);
  if (!order) return std::nullopt;
  ASSIGN_OR_RETURN(const ValueId left,
                   AddTransposed(graph, a, Positions(f.a, order->left), fresh(absl::StrCat(node.name, "_rows"))));
  ASSIGN_OR_RETURN(const ValueId right,
                   AddTransposed(graph, b, Positions(f.b, order->right), fresh(absl::StrCat(node.name, "_columns"))));
  const std::vector<int64_t> to_output = Positions(order->product, f.out);
  const std::string product_name = IsIdentity(to_output) ? output_name : fresh(absl::StrCat(node.name, "_product"));
  ASSIGN_OR_RETURN(const std::vector<ValueId> product,
                   graph.AddNode(Registered(op_names::kMatMul), Params(), {left, right}, product_name, {product_name}));
  return AddTransposed(graph, product[0], to_output, output_name);
}

}  // namespace taso::ops
