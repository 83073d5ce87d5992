#!/usr/bin/env bash
# The speed check at larger sizes (src/pipeline/speed_at_sizes.h) on a real export: a
# PyTorch mixture of four experts with top-2 gating, exported with dynamic batch and
# tokens (bench/exports/moe_variants.py moe4_top2). taso-opt, with no flags, searches it
# at batch 1 and one token; its summary says what the speed check kept and what it timed
# at larger sizes. Then the input and the written file, their tokens fixed in copies, are
# timed against each other in ONNX Runtime (ort_ratio of bench/ort_pairs.sh: PAIRS session
# pairs in both orders, ROUNDS runs each) at each size of TOKENS, twice in turn.
# Usage: bench/larger_sizes.sh [RUNS_OF_TASO_OPT]   (default 2; each writes its own file)
# LARGER_TOKENS (default "1 64 256 512"), LARGER_PAIRS (10), LARGER_ROUNDS (100),
# LARGER_WORK keeps the files (default: a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/ort_pairs.sh
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
python=/usr/bin/python3
work="${LARGER_WORK:-$(mktemp -d)}"
mkdir -p "$work"
"$python" bench/exports/moe_variants.py "$work" >/dev/null 2>&1
model="$work/moe4_top2.onnx"

# IN OUT TOKENS: a copy of IN with its inputs' tokens fixed at TOKENS and batch at 1.
fixed() {
  "$python" - "$@" <<'PY'
import sys, onnx
m = onnx.load(sys.argv[1])
for i in m.graph.input:
    for d in i.type.tensor_type.shape.dim:
        if d.dim_param in ("batch", "tokens"):
            d.dim_value = 1 if d.dim_param == "batch" else int(sys.argv[3])
del m.graph.value_info[:]
for o in m.graph.output:
    o.type.tensor_type.ClearField("shape")
onnx.save(m, sys.argv[2])
PY
}

for run in $(seq 1 "${1:-2}"); do
  out="$work/moe4_top2.run$run.onnx"
  echo "== taso-opt run $run"
  build/taso-opt "$model" -o "$out" | grep -E "^verified|^  (timed|not timed) at larger|rewrites applied|written is|gated" || true
  for tokens in ${LARGER_TOKENS:-1 64 256 512}; do
    fixed "$model" "$work/in.t$tokens.onnx" "$tokens"
    fixed "$out" "$work/out.t$tokens.onnx" "$tokens"
    for again in 1 2; do
      echo "tokens=$tokens input/written: $(ort_ratio "$work/in.t$tokens.onnx" "$work/out.t$tokens.onnx" 0 \
        "${LARGER_PAIRS:-10}" "${LARGER_ROUNDS:-100}") (ratio, spread %)"
    done
  done
done
