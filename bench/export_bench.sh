#!/usr/bin/env bash
# PyTorch's own exports of the patterns users write (bench/exports/patterns.py: torch 1.13's
# torch.onnx.export, rank-3 activations where a transformer has them), each optimized by
# taso-opt with no flags and timed in ONNX Runtime (CPU, level all, EXPORT_THREADS intra-op
# threads; default 0, ONNX Runtime's default session's) against the original, as
# is the pattern's hand merge (written as a second PyTorch module with the same weights,
# exported alike), each in its own interleaved run
# (EXPORT_PAIRS session pairs in both orders, EXPORT_ROUNDS runs of each in turn per pair).
# Prints per pattern: taso-opt's wall time and its search's (the e-graph's: the 10 s
# target), the ratio original/output with its spread
# (~95% half-width), the same for the hand merge, the share of the hand merge's gain the
# output reaches ((r - 1) / (h - 1)), and the output timed against the hand merge itself
# (vs_hand; where the two are one graph, it is the noise of the two runs). Usage:
#   bench/export_bench.sh [PATTERN ...]   (default: every pattern of patterns.py)
# EXPORT_PATTERNS names another script that writes patterns alike (held_out.py: the same
# kinds of model at other sizes).
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
source bench/ort_pairs.sh
threads="${EXPORT_THREADS:-0}"
pairs="${EXPORT_PAIRS:-8}"
rounds="${EXPORT_ROUNDS:-200}"
out="${EXPORT_WORK:-$(mktemp -d)}"
patterns="${EXPORT_PATTERNS:-bench/exports/patterns.py}"
mkdir -p "$out"
/usr/bin/python3 "$patterns" "$out" "$@" > "$out/names" 2> "$out/export.log" ||
  { echo "export_bench.sh: exporting failed (see $out/export.log)" >&2; exit 1; }

ratio() { ort_ratio "$1" "$2" "$threads" "$pairs" "$rounds"; }

printf "%-20s %7s %8s %9s %7s %9s %7s %7s %8s %7s %s\n" pattern opt_s search_s opt_ratio spread hand spread share \
  vs_hand share2 rewrites
while read -r name; do
  base="$out/$name"
  start=$(date +%s.%N)
  if ! build/taso-opt "$base.onnx" -o "$base.opt.onnx" --ort-threads "$threads" > "$base.log" 2>&1; then
    echo "$name: taso-opt failed: $(tail -1 "$base.log")"
    continue
  fi
  opt_s=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  rewrites=$(sed -n 's/^  rewrites applied *//p' "$base.log" | head -1)
  search_s=$(sed -n 's/^search (substitutions, e-graph): \([0-9.]*\) s$/\1/p' "$base.log" | head -1)
  read -r opt spread_opt <<< "$(ratio "$base.onnx" "$base.opt.onnx")"
  hand=- spread_hand=- vs_hand=-
  if [ -f "$base.hand.onnx" ]; then
    read -r hand spread_hand <<< "$(ratio "$base.onnx" "$base.hand.onnx")"
    read -r vs_hand _ <<< "$(ratio "$base.hand.onnx" "$base.opt.onnx")"
  fi
  share=$(awk -v r="$opt" -v h="$hand" 'BEGIN { if (h != "-" && h > 1.01) printf "%.0f%%", 100 * (r - 1) / (h - 1); else print "-" }')
  share2=$(awk -v d="$vs_hand" -v h="$hand" \
    'BEGIN { if (h != "-" && h > 1.01) printf "%.0f%%", 100 * (h * d - 1) / (h - 1); else print "-" }')
  printf "%-20s %7s %8s %8sx %6s%% %8sx %6s%% %7s %7sx %7s %s\n" "$name" "$opt_s" "${search_s:--}" "$opt" \
    "$spread_opt" "$hand" \
    "$spread_hand" "$share" "$vs_hand" "$share2" "${rewrites:-none}"
done < "$out/names"
echo "opt_ratio, hand: ONNX Runtime's time of the original over that of taso-opt's output / the hand merge,"
echo "each timed against the original in its own interleaved run; spread: ~95% half-width; share: the part"
echo "of the hand merge's gain the output reaches (- where the hand merge gains under 1%); vs_hand: the hand"
echo "merge's time over the output's, timed against each other; share2: the share from hand x vs_hand; hand -:"
echo "the pattern has no hand merge (bench/exports/patterns.py). Files: $out"
