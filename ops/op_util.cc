#include "op_util.h"

namespace taso::ops {

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank) {
  if (rank == 0 || axis < -rank || axis >= rank)
    return Bad(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::StatusOr<Rows> RowsFrom(const Shape& shape, int64_t axis) {
  ASSIGN_OR_RETURN(int first, NormalizeAxis(axis, static_cast<int>(shape.size())));
  Rows r;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d < first) {
      r.count *= shape[d];
    } else {
      r.width *= shape[d];
      r.row.push_back(shape[d]);
    }
  }
  return r;
}

absl::StatusOr<Shape> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return Bad(absl::StrCat("shapes ", ShapeToString(a), " and ", ShapeToString(b), " do not broadcast"));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

absl::Status ExpectInputs(absl::Span<const InputInfo> in, int min, int max) {
  int present = static_cast<int>(in.size());
  if (present < min || present > max)
    return Bad(min == max ? absl::StrCat("expects ", min, " inputs, got ", present)
                          : absl::StrCat("expects ", min, " to ", max, " inputs, got ", present));
  for (int i = 0; i < min; ++i)
    if (!in[i].present) return Bad(absl::StrCat("required input ", i, " is missing"));
  return absl::OkStatus();
}

absl::Status ExpectFloat(const InputInfo& in, absl::string_view what) {
  if (in.dtype != DataType::kFloat32)
    return Bad(absl::StrCat("input ", what, " must be float32, got ", DataTypeName(in.dtype)));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OutputType>> LikeOneFloatInput(absl::Span<const InputInfo> in, absl::string_view what) {
  RETURN_IF_ERROR(ExpectInputs(in, 1, 1));
  RETURN_IF_ERROR(ExpectFloat(in[0], what));
  return std::vector<OutputType>{{DataType::kFloat32, in[0].shape}};
}

absl::Status ExpectRank(const InputInfo& in, int rank, absl::string_view what) {
  if (static_cast<int>(in.shape.size()) != rank)
    return Bad(absl::StrCat("input ", what, " must have rank ", rank, ", got shape ", ShapeToString(in.shape)));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> ConstantInts(const InputInfo& in, absl::string_view what) {
  if (in.constant == nullptr || in.constant->dtype() != DataType::kInt64)
    return Bad(absl::StrCat(what, " must be a constant int64 tensor"));
  return std::vector<int64_t>(in.constant->ints().begin(), in.constant->ints().end());
}

int64_t WindowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end,
                         int64_t dilation, bool ceil_mode) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t avail = in + pad_begin + pad_end - span;
  if (avail < 0) return 0;
  int64_t out = (ceil_mode ? (avail + stride - 1) / stride : avail / stride) + 1;
  // With ceil_mode, the last window must start inside the input or its begin padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

absl::StatusOr<std::vector<int64_t>> WindowPads(const Params& p, int64_t kh, int64_t kw) {
  if (!p.Has("padding")) return p.Ints("pads", {0, 0, 0, 0});
  const std::string mode = p.Str("padding");
  if (mode == "valid") return std::vector<int64_t>{0, 0, 0, 0};
  if (mode != "same") return Bad(absl::StrCat("unknown padding mode '", mode, "' (same or valid)"));
  if (kh % 2 == 0 || kw % 2 == 0) return Bad("same padding needs an odd kernel");
  return std::vector<int64_t>{kh / 2, kw / 2, kh / 2, kw / 2};
}

bool KeepsSpatialSize(const Window2D& w) {
  return w.sh == 1 && w.sw == 1 && w.dh == 1 && w.dw == 1 && w.kh % 2 == 1 && w.kw % 2 == 1 && w.pt == w.kh / 2 &&
         w.pb == w.kh / 2 && w.pl == w.kw / 2 && w.pr == w.kw / 2 && !w.ceil_mode;
}

DimSources WindowSources(const Window2D& w, int channel_input, int channel_dim) {
  std::vector<DimSource> d(4);
  d[0] = DimSource::Copy(0, 0);
  d[1] = DimSource::Copy(channel_input, channel_dim);
  if (KeepsSpatialSize(w)) {
    d[2] = DimSource::Copy(0, 2);
    d[3] = DimSource::Copy(0, 3);
  }
  return {d};
}

DimSources ElementwiseSources(absl::Span<const InputInfo> inputs, absl::Span<const OutputType> outputs) {
  DimSources all;
  for (const OutputType& out : outputs) {
    const int rank = static_cast<int>(out.shape.size());
    std::vector<DimSource> d(rank);
    for (int j = 0; j < rank; ++j)
      for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
        const int r = static_cast<int>(inputs[i].shape.size());
        const int k = j - (rank - r);
        if (inputs[i].present && k >= 0 && inputs[i].shape[k] == out.shape[j]) {
          d[j] = DimSource::Copy(i, k);
          break;
        }
      }
    all.push_back(std::move(d));
  }
  return all;
}

absl::StatusOr<Window2D> ReadWindow(const Params& p, int64_t kh, int64_t kw) {
  Window2D w;
  w.kh = kh;
  w.kw = kw;
  auto strides = p.Ints("strides", {1, 1});
  ASSIGN_OR_RETURN(auto pads, WindowPads(p, kh, kw));
  auto dil = p.Ints("dilations", {1, 1});
  if (strides.size() != 2 || pads.size() != 4 || dil.size() != 2)
    return Bad("strides and dilations need 2 values, pads 4");
  w.sh = strides[0];
  w.sw = strides[1];
  w.dh = dil[0];
  w.dw = dil[1];
  w.pt = pads[0];
  w.pl = pads[1];
  w.pb = pads[2];
  w.pr = pads[3];
  w.ceil_mode = p.Int("ceil_mode", 0) != 0;
  if (kh < 1 || kw < 1) return Bad("kernel size must be positive");
  if (w.sh < 1 || w.sw < 1) return Bad("strides must be positive");
  if (w.dh < 1 || w.dw < 1) return Bad("dilations must be positive");
  if (w.pt < 0 || w.pl < 0 || w.pb < 0 || w.pr < 0) return Bad("pads must not be negative");
  return w;
}

absl::StatusOr<bool> ReadOnnxWindow(OnnxImportNode& node, const Shape& input, int64_t kh, int64_t kw, Params& params) {
  if (input.size() != 4) return false;
  auto ks = node.Ints("kernel_shape", {kh, kw});
  if (ks.size() != 2 || ks[0] != kh || ks[1] != kw) return false;
  auto strides = node.Ints("strides", {1, 1});
  auto dil = node.Ints("dilations", {1, 1});
  if (strides.size() != 2 || dil.size() != 2) return false;
  std::vector<int64_t> pads = node.Ints("pads", {0, 0, 0, 0});
  if (pads.size() != 4) return false;
  const std::string auto_pad = node.Str("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t k[2] = {kh, kw};
    for (int i = 0; i < 2; ++i) {
      const int64_t in = input[2 + i];
      const int64_t out = (in + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (k[i] - 1) * dil[i] + 1 - in);
      const int64_t small = total / 2, large = total - total / 2;
      pads[i] = auto_pad == "SAME_UPPER" ? small : large;
      pads[i + 2] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (auto_pad != "NOTSET") {
    return false;
  }
  params.Set("strides", strides).Set("pads", pads).Set("dilations", dil);
  return true;
}

Params CanonicalWindowParams(const Params& p, const Window2D& w) {
  Params out = p;
  out.Erase("padding");
  return out.Set("strides", std::vector<int64_t>{w.sh, w.sw})
      .Set("pads", std::vector<int64_t>{w.pt, w.pl, w.pb, w.pr})
      .Set("dilations", std::vector<int64_t>{w.dh, w.dw});
}

void WriteOnnxWindow(const Params& p, onnx::NodeProto* n, int64_t kh, int64_t kw) {
  if (p.Has("kernel")) OnnxExportNode::SetInts(n, "kernel_shape", p.Ints("kernel"));
  OnnxExportNode::SetInts(n, "strides", p.Ints("strides", {1, 1}));
  auto pads = WindowPads(p, kh, kw);
  OnnxExportNode::SetInts(n, "pads", pads.ok() ? *pads : std::vector<int64_t>{0, 0, 0, 0});
}

onnx::NodeProto* EmitSame(OnnxExportNode& e, absl::string_view op_type) {
  return e.AddNode(op_type, e.inputs(), e.outputs());
}

}  // namespace taso::ops

#include "pool_util.h"

namespace taso::ops {

absl::StatusOr<bool> ReadOnnxPool(OnnxImportNode& node, Params& params) {
  auto ks = node.Ints("kernel_shape");
  if (ks.size() != 2 || node.inputs().empty()) return false;
  ASSIGN_OR_RETURN(bool ok, ReadOnnxWindow(node, node.inputs()[0].shape, ks[0], ks[1], params));
  if (!ok) return false;
  params.Set("kernel", ks).Set("ceil_mode", node.Int("ceil_mode", 0));
  return true;
}

std::vector<GeneratorVariant> PoolGeneratorVariants(const Params& extra) {
  std::vector<GeneratorVariant> out;
  for (int64_t s : {1, 2})
    for (const char* pad : {"same", "valid"}) {
      GeneratorVariant v;
      v.label = absl::StrCat("3x3,s", s, ",", pad);
      v.params = extra;
      v.params.Set("kernel", std::vector<int64_t>{3, 3}).Set("strides", std::vector<int64_t>{s, s}).Set("padding", pad);
      v.roles = {GenRole::kActivation};
      out.push_back(v);
    }
  return out;
}

std::optional<Params> WindowRuleParams(const Params& p, int64_t kh, int64_t kw) {
  Params out = p;
  if (p.Ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1}) return std::nullopt;
  out.Erase("dilations");
  if (p.Int("ceil_mode", 0) != 0) return std::nullopt;
  out.Erase("ceil_mode");
  if (p.Has("padding")) return out;
  const std::vector<int64_t> pads = p.Ints("pads", {0, 0, 0, 0});
  out.Erase("pads");
  if (pads == std::vector<int64_t>{0, 0, 0, 0}) return out.Set("padding", "valid");
  if (kh % 2 == 1 && kw % 2 == 1 && pads == std::vector<int64_t>{kh / 2, kw / 2, kh / 2, kw / 2})
    return out.Set("padding", "same");
  return std::nullopt;
}

absl::StatusOr<SmtForm> PoolSmt(absl::string_view op, const char* function, const Params& p, int num_inputs) {
  ASSIGN_OR_RETURN(auto window, WindowSmtParams(op, p));
  std::vector<std::pair<std::string, ParamValue>> params = {{"kernel", p.Ints("kernel")}};
  params.insert(params.end(), window.begin(), window.end());
  return SmtCall(op, num_inputs, 1, function, std::move(params));
}

absl::StatusOr<std::vector<OutputType>> PoolTypes(const Params& p, absl::Span<const InputInfo> in) {
  RETURN_IF_ERROR(ExpectInputs(in, 1, 1));
  RETURN_IF_ERROR(ExpectFloat(in[0], "X"));
  RETURN_IF_ERROR(ExpectRank(in[0], 4, "X"));
  auto k = p.Ints("kernel");
  if (k.size() != 2) return Bad("kernel needs 2 values");
  ASSIGN_OR_RETURN(Window2D w, ReadWindow(p, k[0], k[1]));
  if (w.pt >= w.kh || w.pb >= w.kh || w.pl >= w.kw || w.pr >= w.kw) return Bad("pads must be smaller than the kernel");
  const Shape& x = in[0].shape;
  const int64_t oh = WindowOutputSize(x[2], w.kh, w.sh, w.pt, w.pb, w.dh, w.ceil_mode);
  const int64_t ow = WindowOutputSize(x[3], w.kw, w.sw, w.pl, w.pr, w.dw, w.ceil_mode);
  if (oh < 1 || ow < 1) return Bad(absl::StrCat("kernel is larger than the padded input ", ShapeToString(x)));
  return std::vector<OutputType>{{DataType::kFloat32, Shape{x[0], x[1], oh, ow}}};
}

}  // namespace taso::ops
