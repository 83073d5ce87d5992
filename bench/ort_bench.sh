#!/usr/bin/env bash
# ONNX Runtime against taso-opt --target ort: for every benchmark model (taso-models) and
# the torchvision models and transformer layers PyTorch exports for the tests, taso-opt's
# output for the ort target, then, timed apart from taso-opt's own speed check, the ONNX
# Runtime time (CPU provider, level all, ORT_THREADS intra-op threads) of the original
# and of the output: ORT_PAIRS session pairs made in both orders, ORT_ROUNDS runs of each
# in turn per pair (by default as many as fill about ORT_PAIR_MS of the original's
# estimated time, 10 to 200: sub-millisecond models need hundreds), geometric means of
# the pairs' medians, and the spread (twice the standard error of the mean log-ratio over
# pairs). Against it, taso-opt's estimated
# ratio (its ort cost model: operators measured in ONNX Runtime) and its search time.
# With ORT_RAW=1, a second row per model times the search's output without the speed
# check (--no-verify-speed); with ORT_CPU=1, a row times taso-opt --target cpu's output
# (merged convolutions and the like), estimated by the ort cost model in two taso-opt
# runs (--budget 0) sharing the cache: the cost model's fidelity where graphs differ. Usage:
#   bench/ort_bench.sh [MODEL ...]   (default: every model of taso-models, lora_mlp32,
#                                     lora_attention32 and head_attention32 (NAME32: the
#                                     model at 32 tokens) and tv_NAME for each NAME of
#                                     tests/python/export_torch_models.py)
# OPT_BUDGET and OPT_TIME_LIMIT (default: taso-opt's), ORT_THREADS (default 0: ONNX Runtime's default session's, as taso-opt), ORT_PAIRS
# (default 8), ORT_ROUNDS (default: from ORT_PAIR_MS, default 300), OPT_CACHE (default:
# taso-opt's).
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
limits=()
[ -n "${OPT_BUDGET:-}" ] && limits+=(--budget "$OPT_BUDGET")
[ -n "${OPT_TIME_LIMIT:-}" ] && limits+=(--time-limit "$OPT_TIME_LIMIT")
threads="${ORT_THREADS:-0}"
pairs="${ORT_PAIRS:-8}"
pair_ms="${ORT_PAIR_MS:-300}"
cache=()
[ -n "${OPT_CACHE:-}" ] && cache=(--cost-cache "$OPT_CACHE")
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
models=("$@")
[ ${#models[@]} -eq 0 ] &&
  models=($(build/taso-models --list | awk '{print $1}') lora_mlp32 lora_attention32 head_attention32
    $(/usr/bin/python3 -c "import sys; sys.path.insert(0, 'tests/python'); import export_torch_models as e
print(' '.join('tv_' + name for name in e.MODELS))"))

source bench/ort_pairs.sh

# ESTIMATED_MS -> runs of each model per session pair: ORT_ROUNDS, or enough to fill
# ORT_PAIR_MS, 10 to 200.
rounds_for() {
  [ -n "${ORT_ROUNDS:-}" ] && { echo "$ORT_ROUNDS"; return; }
  awk -v t="$1" -v p="$pair_ms" 'BEGIN { r = t > 0 ? int(p / t + 0.5) : 200; print (r < 10 ? 10 : (r > 200 ? 200 : r)) }'
}

# MODEL LABEL [taso-opt flags...]: optimizes for ort, times both in ONNX Runtime, prints a row.
bench_row() {
  local m="$1" label="$2"
  shift 2
  local opt="$out/$m.$label.onnx" report="$out/$m.$label.json" log="$out/$m.$label.log"
  if ! build/taso-opt "$out/$m.onnx" -o "$opt" --target ort --ort-threads "$threads" "${limits[@]}" \
      --report "$report" "${cache[@]}" "$@" > "$log" 2>&1; then
    printf "%-23s %-8s taso-opt failed: %s\n" "$m" "$label" "$(tail -1 "$log")"
    return
  fi
  local search before after kept
  search=$(json_number "$report" search_seconds)
  before=$(json_number "$report" cost_before_ms)
  after=$(json_number "$report" cost_after_ms)
  kept=$(sed -n 's/.*"rewrites": \([0-9]*\), "rewrites_kept": \([0-9]*\).*/\2\/\1/p' "$report" | head -1)
  local rounds timing
  rounds=$(rounds_for "$before")
  timing=$(ort_pairs "$out/$m.onnx" "$opt" "$threads" "$pairs" "$rounds") || { printf "%-23s %-8s ONNX Runtime timing failed\n" "$m" "$label"; return; }
  read -r orig new spread <<< "$timing"
  awk -v m="$m" -v l="$label" -v s="$search" -v o="$orig" -v n="$new" -v sp="$spread" -v b="$before" -v a="$after" \
      -v p="$pairs" -v r="$rounds" -v k="${kept:--}" 'BEGIN {
    est = b / a; meas = o / n
    printf "%-23s %-8s %8.2f %11.3f %11.3f %8.3fx %7.1f%% %5d %5d %8.3fx %+7.1f%% %s\n",
           m, l, s, o, n, meas, 100 * sp, p, p * r, est, 100 * (est / meas - 1), k }'
}

# MODEL: the ort cost model's estimate for taso-opt --target cpu's output against ONNX
# Runtime's measurement (the two estimates come from two runs: the reference's timing
# drift between them weighs on the estimated ratio).
cpu_row() {
  local m="$1" cpu="$out/$m.cpu.onnx"
  if ! build/taso-opt "$out/$m.onnx" -o "$cpu" --target cpu "${limits[@]}" \
      --skip-self-check > "$out/$m.cpu.log" 2>&1; then
    printf "%-23s %-8s taso-opt --target cpu failed: %s\n" "$m" cpu "$(tail -1 "$out/$m.cpu.log")"
    return
  fi
  local est=()
  for f in "$out/$m.onnx" "$cpu"; do
    build/taso-opt "$f" -o "$out/$m.est.onnx" --target ort --ort-threads "$threads" --budget 0 --no-verify-speed \
      --skip-self-check --report "$out/$m.est.json" "${cache[@]}" > /dev/null 2>&1 || { echo "$m: estimate failed"; return; }
    est+=("$(json_number "$out/$m.est.json" cost_before_ms)")
  done
  local rounds timing orig new spread
  rounds=$(rounds_for "${est[0]}")
  timing=$(ort_pairs "$out/$m.onnx" "$cpu" "$threads" "$pairs" "$rounds") || { printf "%-23s %-8s ONNX Runtime timing failed\n" "$m" cpu; return; }
  read -r orig new spread <<< "$timing"
  awk -v m="$m" -v o="$orig" -v n="$new" -v sp="$spread" -v b="${est[0]}" -v a="${est[1]}" -v p="$pairs" \
      -v r="$rounds" 'BEGIN { est = b / a; meas = o / n
    printf "%-23s %-8s %8s %11.3f %11.3f %8.3fx %7.1f%% %5d %5d %8.3fx %+7.1f%% -\n",
           m, "cpu", "-", o, n, meas, 100 * sp, p, p * r, est, 100 * (est / meas - 1) }'
}

printf "%-23s %-8s %8s %11s %11s %9s %8s %5s %5s %9s %8s %s\n" model output search_s ort_orig_ms ort_out_ms \
  measured spread pairs runs estimated est_err kept
for m in "${models[@]}"; do
  case "$m" in
    *32)
      build/taso-models "${m%32}" --batch 32 -o "$out/$m.onnx" >/dev/null || { echo "$m: taso-models failed"; continue; } ;;
    tv_*)
      /usr/bin/python3 tests/python/export_torch_models.py "$out" "${m#tv_}" >/dev/null 2>&1 &&
        mv "$out/${m#tv_}.onnx" "$out/$m.onnx" || { echo "$m: export failed"; continue; } ;;
    *) build/taso-models "$m" -o "$out/$m.onnx" >/dev/null || { echo "$m: taso-models failed"; continue; } ;;
  esac
  bench_row "$m" verified
  [ "${ORT_RAW:-0}" = 1 ] && bench_row "$m" raw --no-verify-speed
  [ "${ORT_CPU:-0}" = 1 ] && cpu_row "$m"
done
echo "measured: ONNX Runtime's time of the original over that of the output, timed apart from taso-opt;"
echo "spread: the measured ratio's ~95% half-width; estimated: taso-opt's ort cost model's ratio;"
echo "est_err: estimated over measured, less 1; kept: rewrites kept by the speed check / applied by the search."
