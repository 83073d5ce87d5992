#!/usr/bin/env bash
# The cpu target on PyTorch's dynamic-axes exports (torch.onnx.export with dynamic batch
# and sequence, as users export transformers): a two-layer GPT (bench/exports/gpt_dynamic.py)
# at opsets 13 and 17, and nn.TransformerEncoderLayer (d 256, 4 heads, batch_first) at
# opset 17. Per model: `taso-opt M.onnx -o M.cpu.onnx --target cpu` with no other flag
# (its speed check, at the sizes it searched at, and its end-to-end check), then the
# input (A) against the written file (B) at a user's size (--input-shape x=BATCHxSEQxD)
# with `taso-run A --executor cpu --time RUNS --against B`, ROUNDS processes (this model
# first in each; each process times executor pairs in both orders). Prints taso-opt's
# verdict lines and each round's ratio A/B with their median. Usage:
#   bench/cpu_dynamic.sh            (CPU_DYN_ROUNDS default 3, CPU_DYN_RUNS default 20,
#                                    CPU_DYN_SIZE default 4x128: batch x sequence)
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
rounds="${CPU_DYN_ROUNDS:-3}"
runs="${CPU_DYN_RUNS:-20}"
size="${CPU_DYN_SIZE:-4x128}"
work="${CPU_DYN_WORK:-$(mktemp -d)}"
mkdir -p "$work"

/usr/bin/python3 bench/exports/gpt_dynamic.py "$work/gpt_13.onnx" 13 || exit 1
/usr/bin/python3 bench/exports/gpt_dynamic.py "$work/gpt_17.onnx" 17 || exit 1
/usr/bin/python3 - "$work/encoder_17.onnx" <<'EOF' || exit 1
import sys
import torch
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True).eval()
axes = {0: "batch", 1: "seq"}
torch.onnx.export(layer, (torch.randn(1, 64, 256),), sys.argv[1], opset_version=17, input_names=["x"],
                  output_names=["y"], dynamic_axes={"x": axes, "y": axes})
EOF

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for m in gpt_13:384 gpt_17:384 encoder_17:256; do
  name=${m%%:*} width=${m##*:}
  in="$work/$name.onnx" out="$work/$name.cpu.onnx"
  echo "== $name"
  if ! build/taso-opt "$in" -o "$out" --target cpu > "$work/$name.log" 2>&1; then
    echo "   taso-opt failed: $(tail -1 "$work/$name.log")"
    continue
  fi
  grep -E "^speed check|^verified in|^  timed at larger|^end-to-end:|^  rewrites applied" "$work/$name.log" |
    cut -c1-200 | sed 's/^/   /'
  ratios=()
  for ((r = 0; r < rounds; r++)); do
    line=$(build/taso-run "$in" --executor cpu --time "$runs" --input-shape "x=${size}x$width" --against "$out" 2>&1 |
      grep "in turn:")
    ratio=$(sed -n 's/.*(this \/ other \([0-9.]*\)).*/\1/p' <<< "$line")
    echo "   round $((r + 1)) at x=${size}x$width: ${line#*in turn: }"
    [ -n "$ratio" ] && ratios+=("$ratio")
  done
  [ ${#ratios[@]} -gt 0 ] && echo "   input / output at x=${size}x$width: median $(median "${ratios[@]}") (rounds: ${ratios[*]})"
done
echo "files in $work"
