// The name of every operator of the library (OpDef::name(): how rules, kernels and model
// builders name it). Each operator's file under ops/ takes its name from here, and code
// outside ops/ names an operator only through these, so a misspelt name does not compile.
#pragma once

namespace taso::op_names {

inline constexpr char kAdd[] = "Add";
inline constexpr char kAveragePool[] = "AveragePool";
inline constexpr char kBatchNormalization[] = "BatchNormalization";
inline constexpr char kBlockDiag[] = "BlockDiag";
inline constexpr char kC_pool[] = "C_pool";
inline constexpr char kClip[] = "Clip";
inline constexpr char kConcat[] = "Concat";
inline constexpr char kConstant[] = "Constant";
inline constexpr char kConv2D[] = "Conv2D";
inline constexpr char kDiv[] = "Div";
inline constexpr char kDropout[] = "Dropout";
inline constexpr char kEinsum[] = "Einsum";
inline constexpr char kEnlarge[] = "Enlarge";
inline constexpr char kErf[] = "Erf";
inline constexpr char kFlatten[] = "Flatten";
inline constexpr char kGelu[] = "Gelu";
inline constexpr char kGemm[] = "Gemm";
inline constexpr char kGlobalAveragePool[] = "GlobalAveragePool";
inline constexpr char kHardSigmoid[] = "HardSigmoid";
inline constexpr char kHardSwish[] = "HardSwish";
inline constexpr char kI_conv[] = "I_conv";
inline constexpr char kI_ewmul[] = "I_ewmul";
inline constexpr char kI_matmul[] = "I_matmul";
inline constexpr char kIdentity[] = "Identity";
inline constexpr char kLayerNormalization[] = "LayerNormalization";
inline constexpr char kLayoutConvert[] = "LayoutConvert";
inline constexpr char kMatMul[] = "MatMul";
inline constexpr char kMaxPool[] = "MaxPool";
inline constexpr char kMergeGroups[] = "MergeGroups";
inline constexpr char kMul[] = "Mul";
inline constexpr char kOpaque[] = "Opaque";
inline constexpr char kPad[] = "Pad";
inline constexpr char kPow[] = "Pow";
inline constexpr char kReduceMean[] = "ReduceMean";
inline constexpr char kRelu[] = "Relu";
inline constexpr char kReshape[] = "Reshape";
inline constexpr char kScalarMul[] = "ScalarMul";
inline constexpr char kSigmoid[] = "Sigmoid";
inline constexpr char kSlice[] = "Slice";
inline constexpr char kSoftmax[] = "Softmax";
inline constexpr char kSplit[] = "Split";
inline constexpr char kSqrt[] = "Sqrt";
inline constexpr char kSub[] = "Sub";
inline constexpr char kTanh[] = "Tanh";
inline constexpr char kTranspose[] = "Transpose";

// Every name above: the operators the library registers, one each.
inline constexpr const char* kAll[] = {kAdd,
                                       kAveragePool,
                                       kBatchNormalization,
                                       kBlockDiag,
                                       kC_pool,
                                       kClip,
                                       kConcat,
                                       kConstant,
                                       kConv2D,
                                       kDiv,
                                       kDropout,
                                       kEinsum,
                                       kEnlarge,
                                       kErf,
                                       kFlatten,
                                       kGelu,
                                       kGemm,
                                       kGlobalAveragePool,
                                       kHardSigmoid,
                                       kHardSwish,
                                       kI_conv,
                                       kI_ewmul,
                                       kI_matmul,
                                       kIdentity,
                                       kLayerNormalization,
                                       kLayoutConvert,
                                       kMatMul,
                                       kMaxPool,
                                       kMergeGroups,
                                       kMul,
                                       kOpaque,
                                       kPad,
                                       kPow,
                                       kReduceMean,
                                       kRelu,
                                       kReshape,
                                       kScalarMul,
                                       kSigmoid,
                                       kSlice,
                                       kSoftmax,
                                       kSplit,
                                       kSqrt,
                                       kSub,
                                       kTanh,
                                       kTranspose};

}  // namespace taso::op_names
