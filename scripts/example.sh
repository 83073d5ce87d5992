#!/usr/bin/env bash
# The main job on a built-in example: builds a benchmark model (ResNeXt-50 by default),
# imports it, runs it with the reference executor, and checks an export/re-import round
# trip gives the identical graph and outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-resnext50}"
bash scripts/build.sh
mkdir -p build/examples
build/taso-models "$model" -o "build/examples/$model.onnx"
build/taso-run --roundtrip "build/examples/$model.onnx"
