// ONNX Runtime's own operators, registered with the ONNX library's schema registry so
// that its checker and shape inference know them as ONNX Runtime does. A model that ONNX
// Runtime's optimizer wrote (a session's `optimizedModelFilePath`) holds them: in ONNX's
// domain, LayerNormalization before opset 17 and SimplifiedLayerNormalization; in
// `com.microsoft`, the fused convolutions and products, the Gelus and the residual
// normalizations. Without these schemas the checker refuses the first kind (so taso-opt
// could not write back a model it read), and ONNX's inference types nothing the second
// kind computes, nor anything after it.
//
// The schemas are permissive where ONNX Runtime's would refuse (any tensor type, any
// attribute): they exist to accept and to type, and ONNX Runtime itself runs the written
// model in the end-to-end check. Their shape rules give a dimension only where it is
// certain, and leave the rest unknown.
#include <string>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

namespace taso::ops {
namespace {

constexpr char kRuntimeDomain[] = "com.microsoft";

// An input or output: its name, and whether the node may leave it out.
struct Formal {
  const char* name;
  bool optional = false;
};

// A schema whose formal parameters each take any tensor type, and any attribute.
onnx::OpSchema PermissiveSchema(const char* name, const char* domain, const std::vector<Formal>& inputs,
                                const std::vector<Formal>& outputs, onnx::InferenceFunction infer) {
  onnx::OpSchema schema(name, __FILE__, __LINE__);
  schema.SetDomain(domain).SinceVersion(1).AllowUncheckedAttributes().TypeAndShapeInferenceFunction(std::move(infer));
  auto add = [&schema](bool input, int i, const Formal& f) {
    const std::string type = std::string(input ? "I" : "O") + std::to_string(i);
    const auto option = f.optional ? onnx::OpSchema::Optional : onnx::OpSchema::Single;
    if (input)
      schema.Input(i, f.name, "", type, option);
    else
      schema.Output(i, f.name, "", type, option);
    schema.TypeConstraint(type, onnx::OpSchema::all_tensor_types(), "");
  };
  for (size_t i = 0; i < inputs.size(); ++i) add(true, static_cast<int>(i), inputs[i]);
  for (size_t i = 0; i < outputs.size(); ++i) add(false, static_cast<int>(i), outputs[i]);
  return schema;
}

bool HasOutput(onnx::InferenceContext& ctx, size_t i) {
  return ctx.getNumOutputs() > i && ctx.getOutputType(i) != nullptr;
}

// Output `out` is input 0's type and shape.
void LikeFirstInput(onnx::InferenceContext& ctx, size_t out) {
  if (!HasOutput(ctx, out)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, out);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, out);
}

// The element type of input `i`, or 0 where it is absent or untyped.
int32_t InputElemType(onnx::InferenceContext& ctx, size_t i) {
  const onnx::TypeProto* type = i < ctx.getNumInputs() ? ctx.getInputType(i) : nullptr;
  return type != nullptr && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
}

// A normalization's output: input 0's shape, in the type of its scale (input 1), as ONNX
// Runtime types it (a float32 input with a float16 scale gives float16), else input 0's.
void NormalizedOutput(onnx::InferenceContext& ctx) {
  if (!HasOutput(ctx, 0)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, InputElemType(ctx, 1) != 0 ? 1 : 0, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// The statistics a normalization may output (mean, inverse standard deviation), in the
// type `stash_type` names (float by default); their shape only where the normalized axes
// are the last one (input 0's shape, that axis 1), where every convention agrees.
void NormalizationStatistics(onnx::InferenceContext& ctx, size_t out) {
  if (!HasOutput(ctx, out)) return;
  onnx::updateOutputElemType(ctx, out, static_cast<int32_t>(onnx::getAttribute(ctx, "stash_type", 1)));
  if (!onnx::hasInputShape(ctx, 0)) return;
  const onnx::TensorShapeProto& x = onnx::getInputShape(ctx, 0);
  const int rank = x.dim_size();
  const int64_t axis = onnx::getAttribute(ctx, "axis", -1);
  if (rank == 0 || (axis != -1 && axis != rank - 1)) return;
  onnx::TensorShapeProto* shape = onnx::getOutputShape(ctx, out);
  for (int d = 0; d + 1 < rank; ++d) *shape->add_dim() = x.dim(d);
  shape->add_dim()->set_dim_value(1);
}

// LayerNormalization (ONNX's domain before opset 17, as ONNX Runtime defines it there) and
// SimplifiedLayerNormalization (root mean square, no mean).
void InferLayerNormalization(onnx::InferenceContext& ctx) {
  NormalizedOutput(ctx);
  NormalizationStatistics(ctx, 1);
  NormalizationStatistics(ctx, 2);
}
void InferSimplifiedLayerNormalization(onnx::InferenceContext& ctx) {
  NormalizedOutput(ctx);
  NormalizationStatistics(ctx, 1);
}

// SkipLayerNormalization and SkipSimplifiedLayerNormalization: the normalized sum of
// input and skip, then the statistics (shapes left unknown) and the sum itself.
void InferSkipNormalization(onnx::InferenceContext& ctx) {
  LikeFirstInput(ctx, 0);
  LikeFirstInput(ctx, 3);
}

void InferLikeFirstInput(onnx::InferenceContext& ctx) { LikeFirstInput(ctx, 0); }

// The shape rule of ONNX's own `op_type` (at `opset`), for an operator that ONNX Runtime
// fuses with an activation or a scale and whose output shape it does not change.
onnx::InferenceFunction OnnxRule(const char* op_type, int opset) {
  return [op_type, opset](onnx::InferenceContext& ctx) {
    if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, opset))
      schema->GetTypeAndShapeInferenceFunction()(ctx);
  };
}

// FusedMatMul: alpha * (A, its last two axes swapped if transA) x (B, likewise if transB),
// batch axes broadcast. With transBatchA or transBatchB (axes moved across the batch) or
// an operand of rank below 2 with a transpose asked, only the element type is given.
void InferFusedMatMul(onnx::InferenceContext& ctx) {
  if (onnx::getAttribute(ctx, "transA", 0) == 0 && onnx::getAttribute(ctx, "transB", 0) == 0 &&
      onnx::getAttribute(ctx, "transBatchA", 0) == 0 && onnx::getAttribute(ctx, "transBatchB", 0) == 0)
    return OnnxRule("MatMul", 13)(ctx);
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::getAttribute(ctx, "transBatchA", 0) != 0 || onnx::getAttribute(ctx, "transBatchB", 0) != 0 ||
      !onnx::hasNInputShapes(ctx, 2))
    return;
  onnx::TensorShapeProto a = onnx::getInputShape(ctx, 0);
  onnx::TensorShapeProto b = onnx::getInputShape(ctx, 1);
  if (a.dim_size() < 2 || b.dim_size() < 2) return;
  auto swap_last_two = [](onnx::TensorShapeProto& s) {
    s.mutable_dim()->SwapElements(s.dim_size() - 2, s.dim_size() - 1);
  };
  if (onnx::getAttribute(ctx, "transA", 0) != 0) swap_last_two(a);
  if (onnx::getAttribute(ctx, "transB", 0) != 0) swap_last_two(b);
  onnx::TensorShapeProto a_batch, b_batch, out;
  for (int d = 0; d + 2 < a.dim_size(); ++d) *a_batch.add_dim() = a.dim(d);
  for (int d = 0; d + 2 < b.dim_size(); ++d) *b_batch.add_dim() = b.dim(d);
  onnx::bidirectionalBroadcastShapeInference(a_batch, b_batch, out);
  *out.add_dim() = a.dim(a.dim_size() - 2);
  *out.add_dim() = b.dim(b.dim_size() - 1);
  *onnx::getOutputShape(ctx, 0) = out;
}

void RegisterRuntimeSchemas() {
  onnx::OpSchemaRegistry::DomainToVersionRange::Instance().AddDomainToVersion(kRuntimeDomain, 1, 1);
  const char* onnx_domain = "";
  onnx::RegisterSchema(PermissiveSchema("LayerNormalization", onnx_domain, {{"X"}, {"Scale"}, {"B", true}},
                                        {{"Y"}, {"Mean", true}, {"InvStdDev", true}}, InferLayerNormalization));
  onnx::RegisterSchema(PermissiveSchema("SimplifiedLayerNormalization", onnx_domain, {{"X"}, {"scale"}},
                                        {{"Y"}, {"inv_std_var", true}}, InferSimplifiedLayerNormalization));
  const std::vector<Formal> skip_outputs = {
      {"output"}, {"mean", true}, {"inv_std_var", true}, {"input_skip_bias_sum", true}};
  onnx::RegisterSchema(PermissiveSchema("SkipLayerNormalization", kRuntimeDomain,
                                        {{"input"}, {"skip"}, {"gamma"}, {"beta", true}, {"bias", true}}, skip_outputs,
                                        InferSkipNormalization));
  onnx::RegisterSchema(PermissiveSchema("SkipSimplifiedLayerNormalization", kRuntimeDomain,
                                        {{"input"}, {"skip"}, {"gamma"}, {"bias", true}}, skip_outputs,
                                        InferSkipNormalization));
  onnx::RegisterSchema(PermissiveSchema("FusedConv", kRuntimeDomain, {{"X"}, {"W"}, {"B", true}, {"Z", true}}, {{"Y"}},
                                        OnnxRule("Conv", 11)));
  onnx::RegisterSchema(
      PermissiveSchema("FusedGemm", kRuntimeDomain, {{"A"}, {"B"}, {"C", true}}, {{"Y"}}, OnnxRule("Gemm", 13)));
  onnx::RegisterSchema(PermissiveSchema("FusedMatMul", kRuntimeDomain, {{"A"}, {"B"}}, {{"Y"}}, InferFusedMatMul));
  onnx::RegisterSchema(PermissiveSchema("Gelu", kRuntimeDomain, {{"X"}}, {{"Y"}}, InferLikeFirstInput));
  onnx::RegisterSchema(PermissiveSchema("QuickGelu", kRuntimeDomain, {{"X"}}, {{"Y"}}, InferLikeFirstInput));
  onnx::RegisterSchema(
      PermissiveSchema("FastGelu", kRuntimeDomain, {{"X"}, {"bias", true}}, {{"Y"}}, InferLikeFirstInput));
  onnx::RegisterSchema(PermissiveSchema("BiasGelu", kRuntimeDomain, {{"A"}, {"B"}}, {{"C"}}, InferLikeFirstInput));
}

struct Registrar {
  Registrar() { RegisterRuntimeSchemas(); }
} const registrar;

}  // namespace
}  // namespace taso::ops
