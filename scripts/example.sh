#!/usr/bin/env bash
# The main job on a built-in example: builds a model of the suite (by default an LSTM
# cell written in primitive operators, as hand-written cells are exported, unrolled over
# 5 steps with its weights shared; or the model named, with taso-models' flags after it),
# optimizes it for ONNX Runtime with taso-opt (by default equality saturation over the
# proved rules, costs measured in ONNX Runtime, self-check against the original, the
# result timed against the original in ONNX Runtime and written only if faster), checks
# the written model's outputs in ONNX Runtime, and shows what each rewrite applied rests
# on: the rule and the axioms of its Z3 proof (taso-verify --explain).
#   scripts/example.sh                      lstm
#   scripts/example.sh lora_mlp --batch 32  LoRA adapters beside a transformer MLP
#   scripts/example.sh resnext50 --image-size 112
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-lstm}"
model_flags=("${@:2}")
bash scripts/build.sh taso-models taso-opt taso-verify
mkdir -p build/examples
build/taso-models "$model" "${model_flags[@]}" -o "build/examples/$model.onnx"
build/taso-opt "build/examples/$model.onnx" -o "build/examples/$model.opt.onnx" \
  --report "build/examples/$model.report.json"
node tools/ort/ort_run.js "build/examples/$model.onnx" --save-outputs "build/examples/$model.ort"
node tools/ort/ort_run.js "build/examples/$model.opt.onnx" --compare "build/examples/$model.ort"
# The rules applied, from the report's "rules_applied": {"r0025/0": 3,
# "gemm_merges_k4:r0005/0~": 1, ...}; a STEM: prefix names the database, rules/STEM.pb.
report="build/examples/$model.report.json"
rules=$(sed -n 's/.*"rules_applied": {\([^}]*\)}.*/\1/p' "$report" | grep -o '"[^"]*":' | sed 's/^"//; s/":$//' || true)
for rule in $rules; do
  if [[ "$rule" == gated_mixture_merge ]]; then  # no rule: checked by execution and timed
    echo; echo "== $rule: dense mixtures of experts merged (docs/ARCHITECTURE.md, rewrites checked only by execution)"
    continue
  fi
  database=rules/taso_k3.pb
  [[ "$rule" == *:* ]] && database="rules/${rule%%:*}.pb"
  echo
  echo "== why $rule holds (taso-verify $database --explain $rule):"
  build/taso-verify "$database" --explain "$rule"
done
