#!/usr/bin/env bash
# ONNX Runtime against taso-opt: for every benchmark model (taso-models) and for
# torchvision's ResNet-50, ResNeXt-50 and Inception-v3 exported by PyTorch, the ONNX
# Runtime time (CPU provider, highest optimization level, median of ORT_RUNS runs taken
# in turn, geometric mean over 4 session pairs made in both orders) of the original and
# of taso-opt's output, our cpu executor's time of the optimized graph (and of the
# original, timed as taso-opt --measure does), and taso-opt's search time. Usage:
#   bench/ort_bench.sh [MODEL ...]   (default: the six benchmark models and tv_resnet50,
#                                     tv_resnext50, tv_inception_v3)
# OPT_BUDGET (default 10), OPT_TIME_LIMIT (default 40 s), ORT_RUNS (default 20).
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
budget="${OPT_BUDGET:-10}"
limit="${OPT_TIME_LIMIT:-40}"
runs="${ORT_RUNS:-20}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(resnet50 resnext50 nasnet_a nasrnn bert inception_v3 tv_resnet50 tv_resnext50 tv_inception_v3)

ort_ms() {  # original, optimized -> their median ms at the highest level, timed in turn
  local json
  json=$(node tools/ort/ort_run.js "$1" --against "$2" --level all --runs "$runs" --pairs 4 --json)
  echo "$(sed -n 's/.*"median_ms":\([0-9.e-]*\).*/\1/p' <<< "$json") $(sed -n 's/.*"against_median_ms":\([0-9.e-]*\).*/\1/p' <<< "$json")"
}

printf "%-16s %8s %12s %12s %9s %12s %12s %9s %s\n" model search_s ort_orig_ms ort_opt_ms ort_x ours_orig_ms ours_opt_ms ours_x rules
for m in "${models[@]}"; do
  case "$m" in
    tv_*)
      /usr/bin/python3 tests/python/export_torch_models.py "$out" "${m#tv_}" >/dev/null 2>&1 &&
        mv "$out/${m#tv_}.onnx" "$out/$m.onnx" || { echo "$m: export failed"; continue; } ;;
    *) build/taso-models "$m" -o "$out/$m.onnx" >/dev/null || { echo "$m: taso-models failed"; continue; } ;;
  esac
  if ! build/taso-opt "$out/$m.onnx" -o "$out/$m.opt.onnx" --budget "$budget" --time-limit "$limit" \
      --measure "$runs" --report "$out/$m.json" > "$out/$m.log" 2>&1; then
    printf "%-16s taso-opt failed: %s\n" "$m" "$(tail -1 "$out/$m.log")"
    continue
  fi
  search=$(sed -n 's/.*"search_seconds": \([0-9.e-]*\).*/\1/p' "$out/$m.json")
  ours_before=$(sed -n 's/.*"before_ms": \([0-9.e-]*\).*/\1/p' "$out/$m.json")
  ours_after=$(sed -n 's/.*"after_ms": \([0-9.e-]*\).*/\1/p' "$out/$m.json")
  # The substitutions kept: rule x applications, comma-separated ("-" for none).
  rules=$(sed -n 's/.*"rules_applied": {\(.*\)}.*/\1/p' "$out/$m.json" | tr -d '" ' | sed 's/:/x/g')
  read -r orig opt <<< "$(ort_ms "$out/$m.onnx" "$out/$m.opt.onnx")"
  awk -v m="$m" -v s="$search" -v o="$orig" -v p="$opt" -v b="$ours_before" -v a="$ours_after" -v r="${rules:--}" 'BEGIN {
    printf "%-16s %8.2f %12.3f %12.3f %8.3fx %12.3f %12.3f %8.3fx %s\n", m, s, o, p, o / p, b, a, b / a, r }'
done
echo "ort_x: ONNX Runtime's time of the original over that of taso-opt's output (both at level all)."
echo "ours_x: our cpu executor's time of the original over that of the optimized graph (at its layouts)."
