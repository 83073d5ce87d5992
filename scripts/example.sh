#!/usr/bin/env bash
# The main job on a built-in example: builds a benchmark model (NasRNN by default),
# optimizes it with taso-opt (cpu kernel costs, self-check against the original), and
# runs the written model with the reference executor.
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-nasrnn}"
bash scripts/build.sh
mkdir -p build/examples
build/taso-models "$model" -o "build/examples/$model.onnx"
build/taso-opt "build/examples/$model.onnx" -o "build/examples/$model.opt.onnx" --budget 20 \
  --report "build/examples/$model.report.json"
build/taso-run "build/examples/$model.opt.onnx"
