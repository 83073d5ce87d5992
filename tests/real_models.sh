#!/usr/bin/env bash
# Models as a new user brings them, each with operators outside the library: exported by
# PyTorch at test time (tests/python/export_real_models.py: a segmentation network, a
# video network, an LSTM language model on int64 token ids, a transformer decoder block
# with boolean masks, Mod/Where/Expand and a computed Slice bound, a small Swin
# Transformer whose paddings and window masks are computed from shapes). Each goes through
# `taso-opt M -o OUT` with no flags; the self-check must run and compare tensors around
# the opaque nodes, and the written model must give the original's outputs in ONNX
# Runtime. The measured-cost cache goes to a temporary XDG_CACHE_HOME.
# Usage: tests/real_models.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
runner="$here/tools/ort/ort_run.js"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"

models=(lraspp_mobilenet r3d_18 lstm_lm decoder_block mod_where_slice swin_tiny)
/usr/bin/python3 "$here/tests/python/export_real_models.py" "$work" "${models[@]}" >/dev/null 2>"$work/export.log" ||
  { cat "$work/export.log"; exit 1; }

for name in "${models[@]}"; do
  model="$work/$name.onnx" out="$work/$name.opt.onnx" log="$work/$name.log"
  if ! "$build/taso-opt" "$model" -o "$out" > "$log" 2>&1; then
    cat "$log"
    exit 1
  fi
  # The check ran, compared tensors around opaque nodes and names the nodes it fed.
  coverage=$(grep -E "^self-check: [0-9]+ random inputs \(inputs in [^)]*\), [1-9][0-9]* compared tensors \(1 outputs, [1-9][0-9]* opaque inputs\).*; [1-9][0-9]* opaque nodes \(.+\) fed random values(; [0-9]+ of the optimized graph.s [0-9]+ library nodes run, .*)?$" "$log") ||
    { echo "$name: no self-check coverage line"; cat "$log"; exit 1; }
  echo "$name: $(grep -E " nodes -> " "$log" | sed 's/^[^:]*: //')"
  echo "  $coverage"
  node "$runner" "$model" --seed 5 --save-outputs "$work/$name.expected" >/dev/null
  node "$runner" "$out" --seed 5 --compare "$work/$name.expected" | sed "s/^/  /"
done

# Swin's paddings fold and its masks are typed (ONNX's inference again over the folded
# values), so nothing after the first window is left alone.
if grep -q "reads a tensor of unknown shape" "$work/swin_tiny.log"; then
  echo "swin_tiny: nodes were left alone for want of a shape:"; cat "$work/swin_tiny.log"; exit 1
fi
