#!/usr/bin/env bash
# The suite of real-model patterns against their hand-made ceilings, in ONNX Runtime (CPU,
# level all, SUITE_THREADS intra-op threads, default 0: its default session's): per case,
# the original (taso-models), taso-opt's output (SUITE_ENGINE: egraph or backtracking, with
# the speed check) and, where bench/hand/ has one, the best rewrite done by hand. Each is
# timed against the original in one interleaved run (SUITE_PAIRS session pairs in both
# orders, SUITE_ROUNDS runs of each in turn per pair): measured ratio original/other with
# its spread, and the share of the ceiling's gain taso-opt reaches ((r - 1) / (h - 1)); then
# taso-opt's output timed against the hand rewrite itself (vs_hand: the hand's time over the
# output's), and the share from that (r' = h * vs_hand): where the two are alike, gains of
# 2% drift between the two runs more than they differ; and the same two graphs on our own
# cpu executor (taso-opt --measure SUITE_MEASURE: medians of runs in turn), so that the two
# runtimes can be compared. Then, unless SUITE_EXPORTS=0 or cases are named, the same
# patterns as users write them in PyTorch and export them (bench/export_bench.sh: each
# with its hand merge written in PyTorch), with the same threads, pairs and rounds.
# Usage:
#   bench/suite_bench.sh [CASE ...]   CASE: MODEL or MODEL:TOKENS (default: lora_mlp:1
#                                     lora_mlp:32 lora_attention:1 lora_attention:32
#                                     task_heads:1 task_heads:32 qkv_attention:1
#                                     qkv_attention:32 head_attention:32 nasrnn lstm)
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
source bench/ort_pairs.sh
engine="${SUITE_ENGINE:-egraph}"
threads="${SUITE_THREADS:-0}"
pairs="${SUITE_PAIRS:-12}"
rounds="${SUITE_ROUNDS:-100}"
measure="${SUITE_MEASURE:-10}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cases=("$@")
exports="${SUITE_EXPORTS:-1}"
[ ${#cases[@]} -gt 0 ] && exports=0
[ ${#cases[@]} -eq 0 ] && cases=(lora_mlp:1 lora_mlp:32 lora_attention:1 lora_attention:32 task_heads:1 task_heads:32
  qkv_attention:1 qkv_attention:32 head_attention:32 nasrnn lstm)

# MODEL -> the hand-rewrite script for it, or nothing.
hand_script() {
  case "$1" in
    lora_mlp | lora_attention) echo bench/hand/fold_adapters.py ;;
    task_heads) echo bench/hand/merge_heads.py ;;
    qkv_attention | head_attention) echo bench/hand/merge_projections.py ;;
    nasrnn) echo bench/hand/merge_cell_products.py ;;
    lstm) echo bench/hand/batch_steps.py ;;
    resnext50 | regnetx_200mf) echo bench/hand/regroup_convs.py ;;
  esac
}

# ORIGINAL OTHER -> "ratio spread" (original time over other's).
ratio() { ort_ratio "$1" "$2" "$threads" "$pairs" "$rounds"; }

printf "%-12s %6s %7s %9s %8s %8s %8s %8s %8s %8s %8s %s\n" model tokens opt_s opt_ratio spread hand spread share \
  vs_hand share2 cpu_exec rewrites
for c in "${cases[@]}"; do
  m="${c%%:*}"
  tokens=1
  [ "$c" != "$m" ] && tokens="${c#*:}"
  base="$out/$m.$tokens"
  build/taso-models "$m" --batch "$tokens" -o "$base.onnx" > /dev/null || { echo "$c: taso-models failed"; continue; }
  start=$(date +%s.%N)
  if ! build/taso-opt "$base.onnx" -o "$base.opt.onnx" --search-engine "$engine" --ort-threads "$threads" \
      --measure "$measure" --report "$base.json" > "$base.log" 2>&1; then
    echo "$c: taso-opt failed: $(tail -1 "$base.log")"
    continue
  fi
  opt_s=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  rewrites=$(sed -n 's/^  rewrites applied *//p' "$base.log" | head -1)
  cpu=$(sed -n 's/.*"measured": {[^}]*"before_ms": \([0-9.e+-]*\), "after_ms": \([0-9.e+-]*\).*/\1 \2/p' "$base.json" |
    awk '{ printf "%.3f", $1 / $2 }')
  read -r opt spread_opt <<< "$(ratio "$base.onnx" "$base.opt.onnx")"
  hand="-" spread_hand="-" share="-" vs_hand="-" share2="-"
  script=$(hand_script "$m")
  if [ -n "$script" ] && /usr/bin/python3 "$script" "$base.onnx" "$base.hand.onnx" > /dev/null; then
    read -r hand spread_hand <<< "$(ratio "$base.onnx" "$base.hand.onnx")"
    read -r vs_hand _ <<< "$(ratio "$base.hand.onnx" "$base.opt.onnx")"
    share=$(awk -v r="$opt" -v h="$hand" 'BEGIN { if (h > 1) printf "%.0f%%", 100 * (r - 1) / (h - 1); else print "-" }')
    share2=$(awk -v d="$vs_hand" -v h="$hand" \
      'BEGIN { if (h > 1) printf "%.0f%%", 100 * (h * d - 1) / (h - 1); else print "-" }')
  fi
  printf "%-12s %6s %7s %8sx %7s%% %7sx %7s%% %8s %7sx %8s %7sx %s\n" "$m" "$tokens" "$opt_s" "$opt" "$spread_opt" \
    "$hand" "$spread_hand" "$share" "$vs_hand" "$share2" "${cpu:--}" "${rewrites:-none}"
done
echo "opt_ratio, hand: ONNX Runtime's time of the original over that of taso-opt's output / the hand"
echo "rewrite, each timed against the original in its own interleaved run; spread: ~95% half-width;"
echo "share: the part of the hand rewrite's gain taso-opt's output reaches; vs_hand: the hand rewrite's time"
echo "over taso-opt's output's, timed against each other; share2: the share from hand * vs_hand;"
echo "opt_s: taso-opt's wall time;"
echo "cpu_exec: the original's time over the output's on our cpu executor (taso-opt --measure)."
[ "$exports" = 1 ] || exit 0
echo
echo "The same patterns exported by PyTorch (bench/export_bench.sh):"
EXPORT_THREADS="$threads" EXPORT_PAIRS="$pairs" EXPORT_ROUNDS="$rounds" bash bench/export_bench.sh
