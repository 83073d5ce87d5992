// Conv2D: grouped 2-D convolution with strides, explicit pads, dilations, an optional
// bias and a fused activation (none or relu). Kernel size comes from the weight input.
#include "taso/ir/ops/conv2d.h"
#include "taso/ir/ops/names.h"

#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "conv_float.h"
#include "op_util.h"

namespace taso::ops {
namespace {

// One kernel of one input channel per channel (no channel multiplier), as in TASO and
// MobileNet: the axioms about depthwise convolutions (concatenating channels) hold only then.
bool OneKernelPerChannel(int64_t channels, int64_t kernels, int64_t kernel_channels) {
  return kernel_channels == 1 && kernels == channels;
}

absl::StatusOr<ConvGeometry> Geometry(const Params& p, const Shape& x, const Shape& w) {
  if (x.size() != 4) return Bad(absl::StrCat("input X must have rank 4 (NCHW), got ", ShapeToString(x)));
  if (w.size() != 4) return Bad(absl::StrCat("weight W must have rank 4 (OIHW), got ", ShapeToString(w)));
  ConvGeometry g;
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.o = w[0];
  g.cg = w[1];
  // "grouping" states the grouping without channel counts, as rules need: "dense" (one
  // group), "depthwise" (one group per channel, one kernel of one input channel each) or
  // "grouped" (as many groups as the kernel's input channels divide the input's, neither
  // one group nor depthwise: the three never overlap). Without it, the "group" parameter,
  // or else the grouping follows from the shapes.
  const std::string grouping = p.Str("grouping", "");
  if (grouping == "grouped") {
    if (g.cg < 1 || g.c % g.cg != 0 || g.c == g.cg || OneKernelPerChannel(g.c, g.o, g.cg))
      return Bad(absl::StrCat("kernel ", ShapeToString(w), " does not make a grouped convolution (neither dense nor",
                              " depthwise) of input ", ShapeToString(x)));
    g.group = g.c / g.cg;
  } else if (grouping == "dense") {
    g.group = 1;
  } else if (grouping == "depthwise") {
    if (!OneKernelPerChannel(g.c, g.o, g.cg))
      return Bad(absl::StrCat("a depthwise convolution needs one kernel of one input channel per channel (", g.c,
                              " channels), got ", ShapeToString(w)));
    g.group = g.c;
  } else if (!grouping.empty()) {
    return Bad(absl::StrCat("unknown grouping '", grouping, "' (dense, depthwise or grouped)"));
  } else if (!p.Has("group") && g.cg > 0 && g.c % g.cg == 0) {
    g.group = g.c / g.cg;
  } else {
    g.group = p.Int("group", 1);
  }
  if (g.group < 1) return Bad("group must be positive");
  if (g.c % g.group != 0 || g.o % g.group != 0)
    return Bad(absl::StrCat("group ", g.group, " does not divide input channels ", g.c, " and output channels ", g.o));
  if (g.c / g.group != g.cg)
    return Bad(absl::StrCat("input has ", g.c / g.group, " channels per group (", g.c, " in ", g.group,
                            " groups) but weight ", ShapeToString(w), " expects ", g.cg, " per group"));
  ASSIGN_OR_RETURN(g.win, ReadWindow(p, w[2], w[3]));
  g.oh = WindowOutputSize(g.h, g.win.kh, g.win.sh, g.win.pt, g.win.pb, g.win.dh, false);
  g.ow = WindowOutputSize(g.w, g.win.kw, g.win.sw, g.win.pl, g.win.pr, g.win.dw, false);
  if (g.oh < 1 || g.ow < 1)
    return Bad(absl::StrCat("kernel ", ShapeToString(w), " is larger than the padded input ", ShapeToString(x)));
  const std::string act = p.Str("activation", "none");
  if (act != "none" && act != "relu") return Bad(absl::StrCat("unknown activation '", act, "'"));
  return g;
}

class Conv2D : public KernelOp<Conv2D> {
 public:
  absl::string_view name() const override { return op_names::kConv2D; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 3));
    RETURN_IF_ERROR(ExpectFloat(in[0], "X"));
    RETURN_IF_ERROR(ExpectFloat(in[1], "W"));
    ASSIGN_OR_RETURN(ConvGeometry g, Geometry(p, in[0].shape, in[1].shape));
    if (in.size() == 3 && in[2].present) {
      RETURN_IF_ERROR(ExpectFloat(in[2], "B"));
      if (in[2].shape != Shape{g.o})
        return Bad(absl::StrCat("bias must have shape [", g.o, "], got ", ShapeToString(in[2].shape)));
    }
    return std::vector<OutputType>{{DataType::kFloat32, Shape{g.n, g.o, g.oh, g.ow}}};
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    const TensorView<S>& x = *a.in[0];
    const TensorView<S>& w = *a.in[1];
    const TensorView<S>* bias = a.in.size() == 3 ? a.in[2].get() : nullptr;
    Tensor<S>& y = *a.out[0];
    ASSIGN_OR_RETURN(ConvGeometry g, Geometry(p, x.shape, w.shape));
    const Window2D& k = g.win;
    const int64_t og = g.o / g.group;
    const bool relu = p.Str("activation", "none") == "relu";
    if constexpr (std::is_same_v<S, float>) {
      if (ConvolveFloatPays(g)) {
        ConvolveFloat(g, x.data.data(), w.data.data(), bias ? bias->data.data() : nullptr, relu, y.data.data());
        return absl::OkStatus();
      }
    }
    for (int64_t n = 0; n < g.n; ++n) {
      for (int64_t o = 0; o < g.o; ++o) {
        S* out = y.data.data() + ((n * g.o + o) * g.oh) * g.ow;
        const S init = bias ? bias->data[o] : Domain<S>::Zero();
        std::fill(out, out + g.oh * g.ow, init);
        const int64_t grp = o / og;
        for (int64_t ci = 0; ci < g.cg; ++ci) {
          const int64_t c = grp * g.cg + ci;
          const S* in = x.data.data() + ((n * g.c + c) * g.h) * g.w;
          for (int64_t ky = 0; ky < k.kh; ++ky) {
            for (int64_t kx = 0; kx < k.kw; ++kx) {
              const S wv = w.data[((o * g.cg + ci) * k.kh + ky) * k.kw + kx];
              // Output columns whose input column lies inside the image.
              const int64_t off_x = kx * k.dw - k.pl;
              int64_t ox_lo = off_x >= 0 ? 0 : (-off_x + k.sw - 1) / k.sw;
              int64_t ox_hi = g.w - off_x <= 0 ? 0 : std::min(g.ow, (g.w - off_x + k.sw - 1) / k.sw);
              for (int64_t oy = 0; oy < g.oh; ++oy) {
                const int64_t iy = oy * k.sh - k.pt + ky * k.dh;
                if (iy < 0 || iy >= g.h) continue;
                const S* row = in + iy * g.w;
                S* orow = out + oy * g.ow;
                if (k.sw == 1) {
                  for (int64_t ox = ox_lo; ox < ox_hi; ++ox) orow[ox] += wv * row[ox + off_x];
                } else {
                  for (int64_t ox = ox_lo; ox < ox_hi; ++ox) orow[ox] += wv * row[ox * k.sw + off_x];
                }
              }
            }
          }
        }
        if (relu)
          for (int64_t i = 0; i < g.oh * g.ow; ++i) out[i] = Domain<S>::Relu(out[i]);
      }
    }
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    const Shape& w = in[1].shape;
    m.flops = 2.0 * static_cast<double>(NumElements(out[0].shape)) * static_cast<double>(w[1] * w[2] * w[3]);
    return m;
  }

  DimSources DimensionSources(const Params& p, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType>) const override {
    auto g = Geometry(p, in[0].shape, in[1].shape);
    return g.ok() ? WindowSources(g->win, 1, 0) : DimSources{std::vector<DimSource>(4)};
  }

  // TASO's set: strides 1 and 2, same and valid padding, no activation or relu; the kernel
  // size comes from the weight input. Dense, depthwise (pooling as a convolution with
  // C_pool) and grouped (the group count from the shapes, for regrouping): a rule then
  // holds for that grouping, never only for channel counts that happen to make one.
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    std::vector<GeneratorVariant> out;
    for (const char* grouping : {"dense", "depthwise", "grouped"})
      for (int64_t s : {1, 2})
        for (const char* pad : {"same", "valid"})
          for (const char* act : {"none", "relu"}) {
            GeneratorVariant v;
            v.label = absl::StrCat(grouping, ",s", s, ",", pad, ",", act);
            v.params.Set("grouping", grouping)
                .Set("strides", std::vector<int64_t>{s, s})
                .Set("padding", pad)
                .Set("activation", act);
            v.fixed_params = {"grouping"};
            v.arity = 2;
            v.roles = {GenRole::kActivation, GenRole::kWeight};
            // Grouped: on graph inputs only. Its rules are about its kernel (regrouping);
            // where its channels go through other operators, the axioms do not state.
            if (std::string(grouping) == "grouped") v.graph_input_only_inputs = 0b1;
            out.push_back(v);
          }
    return out;
  }

  // Rules state the grouping (dense, depthwise, else grouped), the padding as a mode and
  // the activation; an imported convolution with a bias has no rule form.
  std::optional<Params> RuleParams(const Params& p, absl::Span<const InputInfo> in) const override {
    if (in.size() != 2 || in[0].shape.size() != 4 || in[1].shape.size() != 4) return std::nullopt;
    auto g = Geometry(p, in[0].shape, in[1].shape);
    if (!g.ok()) return std::nullopt;
    std::optional<Params> out = WindowRuleParams(p, in[1].shape[2], in[1].shape[3]);
    if (!out) return std::nullopt;
    out->Erase("group");
    if (g->group == 1)
      out->Set("grouping", "dense");
    else if (g->group == g->c && OneKernelPerChannel(g->c, g->o, g->cg))
      out->Set("grouping", "depthwise");
    else
      out->Set("grouping", "grouped");
    if (!out->Has("activation")) out->Set("activation", "none");
    return out;
  }

  std::optional<Params> CanonicalParams(const Params& p, absl::Span<const InputInfo> in) const override {
    if (in.size() < 2) return std::nullopt;
    auto g = Geometry(p, in[0].shape, in[1].shape);
    if (!g.ok()) return std::nullopt;
    Params out = CanonicalWindowParams(p, g->win);
    out.Erase("grouping");
    out.Set("group", g->group);
    if (!out.Has("activation")) out.Set("activation", "none");
    return out;
  }

  // Dense, depthwise and grouped convolutions are three functions of the verifier's logic.
  absl::StatusOr<SmtForm> Smt(const Params& p, int num_inputs, int) const override {
    static const absl::flat_hash_map<std::string, std::string> kFunctions = {
        {"dense", "conv"}, {"depthwise", "dconv"}, {"grouped", "gconv"}};
    const auto function = kFunctions.find(p.Str("grouping", ""));
    if (function == kFunctions.end())
      return Bad("only a Conv2D with a grouping (dense, depthwise or grouped) has an SMT encoding");
    ASSIGN_OR_RETURN(auto params, WindowSmtParams(name(), p));
    params.push_back({"activation", p.Str("activation", "none")});
    return SmtCall(name(), num_inputs, 2, function->second, std::move(params));
  }

  std::vector<std::string> onnx_op_types() const override { return {"Conv"}; }

  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    const auto& in = node.inputs();
    if (in.size() < 2 || in[0].shape.size() != 4 || in[1].shape.size() != 4) return std::nullopt;
    Params p;
    ASSIGN_OR_RETURN(bool ok, ReadOnnxWindow(node, in[0].shape, in[1].shape[2], in[1].shape[3], p));
    if (!ok) return std::nullopt;
    p.Set("group", node.Int("group", 1));
    return p;
  }

  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    const bool relu = p.Str("activation", "none") == "relu";
    const std::string conv_out = relu ? e.NewName(e.output(0) + "_prerelu") : e.output(0);
    onnx::NodeProto* conv = e.AddNode("Conv", e.inputs(), {conv_out});
    const Shape& w = e.input_info(1).shape;
    OnnxExportNode::SetInts(conv, "kernel_shape", {w[2], w[3]});
    WriteOnnxWindow(p, conv, w[2], w[3]);
    OnnxExportNode::SetInts(conv, "dilations", p.Ints("dilations", {1, 1}));
    auto g = Geometry(p, e.input_info(0).shape, w);
    OnnxExportNode::SetInt(conv, "group", g.ok() ? g->group : p.Int("group", 1));
    if (relu) e.AddNode("Relu", {conv_out}, {e.output(0)});
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Conv2D);

constexpr absl::string_view kNoActivation = "none";

}  // namespace

bool IsConv2D(const OpDef& op) { return dynamic_cast<const Conv2D*>(&op) != nullptr; }

std::string ConvActivation(const Params& params) {
  const std::string activation = params.Str("activation", kNoActivation);
  return activation == kNoActivation ? "" : activation;
}

Params WithConvActivation(Params params, absl::string_view activation) {
  params.Set("activation", std::string(activation.empty() ? kNoActivation : activation));
  return params;
}

bool GroupsHoldWholeBlocks(const Params& params, absl::Span<const InputInfo> inputs, int64_t block) {
  if (inputs.size() < 2) return false;
  auto g = Geometry(params, inputs[0].shape, inputs[1].shape);
  if (!g.ok()) return false;
  if (g->group == 1 || (g->group == g->c && OneKernelPerChannel(g->c, g->o, g->cg))) return true;
  return g->cg % block == 0 && (g->o / g->group) % block == 0;
}

}  // namespace taso::ops
