// taso-models NAME -o FILE.onnx: writes one of the benchmark models as ONNX.
#include <cstdio>

#include "absl/flags/flag.h"
#include "cli.h"
#include "models/models.h"

ABSL_FLAG(std::string, o, "", "output ONNX file");
ABSL_FLAG(bool, list, false, "list the models and exit");
ABSL_FLAG(int64_t, batch, 1, "batch size (CNNs, NasRNN, LSTM; tokens for lora_mlp, task_heads, qkv_attention)");
ABSL_FLAG(int64_t, image_size, 0, "image height and width (0: the model's own)");
ABSL_FLAG(int64_t, layers, 0, "depth: BERT layers, NasRNN and LSTM steps, NasNet cells per stage (0: the model's own)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the deterministic random weights");

int main(int argc, char** argv) {
  constexpr const char* kTool = "taso-models";
  auto args = taso::cli::Init(argc, argv, "taso-models NAME -o FILE.onnx   (--list shows the models)");
  if (absl::GetFlag(FLAGS_list)) {
    for (const auto& m : taso::models::AllModels()) std::printf("%-14s %s\n", m.name.c_str(), m.description.c_str());
    return 0;
  }
  if (args.size() != 1) return taso::cli::Usage(kTool, "expected one model name");
  const std::string out = absl::GetFlag(FLAGS_o);
  if (out.empty()) return taso::cli::Usage(kTool, "no output file given (-o FILE.onnx)");
  taso::models::ModelOptions options;
  options.batch = absl::GetFlag(FLAGS_batch);
  options.image_size = absl::GetFlag(FLAGS_image_size);
  options.layers = absl::GetFlag(FLAGS_layers);
  options.seed = absl::GetFlag(FLAGS_seed);
  if (options.batch < 1 || options.image_size < 0 || options.layers < 0)
    return taso::cli::Usage(kTool, "batch must be positive, image size and layers not negative");
  auto model = taso::models::BuildModel(args[0], options);
  if (!model.ok()) return taso::cli::Fail(kTool, model.status());
  if (auto s = taso::ExportOnnxFile(*model, out); !s.ok()) return taso::cli::Fail(kTool, s);
  std::printf("%s: wrote %s (%d nodes, %zu weights)\n", args[0].c_str(), out.c_str(), model->graph.num_nodes(),
              model->graph.weights().size());
  return 0;
}
