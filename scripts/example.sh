#!/usr/bin/env bash
# The main job on a built-in example: builds a benchmark model (ResNeXt-50 at 112x112 by
# default, or the model named), optimizes it with taso-opt (substitutions and layouts
# searched jointly on measured cpu kernel costs, self-check against the original),
# measures both graphs end to end on the cpu executor, checks the written model on ONNX
# Runtime against the original, and shows what each rewrite applied rests on: the rule
# and the axioms of its Z3 proof (taso-verify --explain).
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-resnext50}"
sizes=()
[ $# -eq 0 ] && sizes=(--image-size 112)
bash scripts/build.sh
mkdir -p build/examples
build/taso-models "$model" "${sizes[@]}" -o "build/examples/$model.onnx"
build/taso-opt "build/examples/$model.onnx" -o "build/examples/$model.opt.onnx" --budget 20 --measure 10 \
  --report "build/examples/$model.report.json"
node tools/ort/ort_run.js "build/examples/$model.onnx" --save-outputs "build/examples/$model.ort"
node tools/ort/ort_run.js "build/examples/$model.opt.onnx" --compare "build/examples/$model.ort"
# The rules applied, from the report's "rules_applied": {"r0025/0": 3,
# "gemm_merges_k4:r0005/0~": 1, ...}; a STEM: prefix names the database, rules/STEM.pb.
report="build/examples/$model.report.json"
rules=$(sed -n 's/.*"rules_applied": {\([^}]*\)}.*/\1/p' "$report" | grep -o '"[^"]*":' | sed 's/^"//; s/":$//' || true)
for rule in $rules; do
  database=rules/taso_k3.pb
  [[ "$rule" == *:* ]] && database="rules/${rule%%:*}.pb"
  echo
  echo "== why $rule holds (taso-verify $database --explain $rule):"
  build/taso-verify "$database" --explain "$rule"
done
