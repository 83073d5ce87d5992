#include "models/models.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso::models {

const std::vector<ModelInfo>& AllModels() {
  static const std::vector<ModelInfo> kModels = {
      {"resnet50", "ResNet-50, 224x224, batch 1", BuildResNet50},
      {"resnext50", "ResNeXt-50 32x4d (32 groups), 224x224, batch 1", BuildResNeXt50},
      {"regnetx_200mf", "RegNetX-200MF (groups of 8 channels), 224x224, batch 1", BuildRegNetX200},
      {"nasnet_a", "NasNet-A (TASO's cells), 224x224, batch 1", BuildNasNetA},
      {"nasrnn", "NasRNN, hidden 512, 5 steps", BuildNasRnn},
      {"lstm", "LSTM cell in primitive operators, hidden 512, 5 steps, shared weights", BuildLstm},
      {"bert", "BERT encoder (8 layers), sequence 64, hidden 1024, 16 heads", BuildBert},
      {"inception_v3", "Inception-v3, 299x299, batch 1", BuildInceptionV3},
      {"lora_mlp", "MLP d 768, hidden 3072, unmerged rank-16 LoRA adapters; --batch = tokens", BuildLoraMlp},
      {"task_heads", "eight heads Linear(768,64)-ReLU-Linear(64,4) on one [1,768] feature", BuildTaskHeads},
      {"qkv_attention", "attention block d 768, 12 heads, separate Q, K, V projections; --batch = tokens",
       BuildQkvAttention},
      {"lora_attention", "attention block d 768, 12 heads, rank-16 LoRA adapters on Q, K, V, O; --batch = tokens",
       BuildLoraAttention},
      {"head_attention", "causal attention d 768 written per head (12 x Q, K, V of 64); --batch = tokens",
       BuildHeadAttention},
  };
  return kModels;
}

absl::StatusOr<OnnxModel> BuildModel(const std::string& name, const ModelOptions& options) {
  std::vector<std::string> names;
  for (const ModelInfo& m : AllModels()) {
    if (m.name == name) return m.build(options);
    names.push_back(m.name);
  }
  return absl::NotFoundError(absl::StrCat("unknown model '", name, "' (known: ", absl::StrJoin(names, ", "), ")"));
}

}  // namespace taso::models
