// The benchmark models of TASO's evaluation, built in code with deterministic weights.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/onnx/onnx_io.h"

namespace taso::models {

struct ModelOptions {
  int64_t batch = 1;
  int64_t image_size = 0;  // 0: the model's own (224, or 299 for Inception-v3)
  int64_t layers = 0;      // 0: the model's own depth (BERT layers, NasRNN and LSTM steps)
  uint64_t seed = 1;
};

struct ModelInfo {
  std::string name;
  std::string description;
  std::function<absl::StatusOr<OnnxModel>(const ModelOptions&)> build;
};

const std::vector<ModelInfo>& AllModels();
absl::StatusOr<OnnxModel> BuildModel(const std::string& name, const ModelOptions& options = {});

absl::StatusOr<OnnxModel> BuildResNet50(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildResNeXt50(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildNasNetA(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildNasRnn(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildBert(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildInceptionV3(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildLoraMlp(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildTaskHeads(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildQkvAttention(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildLoraAttention(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildHeadAttention(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildLstm(const ModelOptions& o);
absl::StatusOr<OnnxModel> BuildRegNetX200(const ModelOptions& o);

}  // namespace taso::models
