#!/usr/bin/env bash
# Models as users export them: small PyTorch models with a dynamic batch axis
# (torch.onnx.export(..., dynamic_axes=...)) at opsets 11, 13, 17, 18 and 21, one that
# flattens with view(x.size(0), -1), one that views heads as view(b, t, h, d // h), a
# small Swin Transformer, ones with dynamic image sizes or lengths too (a pooling, a
# reflecting pad, 1-D convolutions too large for 1), a decoder with its key/value cache
# (an attention mask over past + seq tokens), ones with modules as functions, one with
# its weights as external data, two as ONNX Runtime saves them optimized and one converted to float16, written by
# tests/python/export_dynamic_models.py with the system's PyTorch. Each goes through taso-opt with no flags but
# --no-verify-speed, so that the rewritten graph is what is written (the speed check may
# keep the input, which would leave nothing to check); the output must keep the batch axis
# symbolic and give the original's outputs in ONNX Runtime at batch 1 and at batch 4.
# tests/real_models.sh runs taso-opt with no flags at all.
# Usage: tests/dynamic_models.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
runner="$here/tools/ort/ort_run.js"
python=/usr/bin/python3  # the interpreter with torch and onnx
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$python" "$here/tests/python/export_dynamic_models.py" "$work/models"

# Random inputs for MODEL with its symbolic batch at BATCH and any other symbolic
# dimension (an image's height or width) at 24 + BATCH, in ort_run.js's format.
inputs() {  # model, batch, dir
  "$python" - "$@" <<'PY'
import json, os, sys
import numpy as np
import onnx
model, batch, out = onnx.load(sys.argv[1], load_external_data=False), int(sys.argv[2]), sys.argv[3]
os.makedirs(out, exist_ok=True)
rng, manifest = np.random.default_rng(batch), []
weights = {t.name for t in model.graph.initializer}
for i, v in enumerate(x for x in model.graph.input if x.name not in weights):
    shape = [d.dim_value if d.HasField("dim_value") else batch if d.dim_param == "batch" else 24 + batch
             for d in v.type.tensor_type.shape.dim]
    rng.uniform(-1, 1, shape).astype("<f4").tofile(os.path.join(out, f"i{i}.bin"))
    manifest.append({"name": v.name, "shape": shape, "file": f"i{i}.bin"})
json.dump(manifest, open(os.path.join(out, "manifest.json"), "w"))
PY
}

# The names of the output model's symbolic input dimensions.
symbolic_inputs() {  # model
  "$python" -c '
import sys, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
print(" ".join(d.dim_param for v in m.graph.input for d in v.type.tensor_type.shape.dim if d.dim_param))' "$1"
}

# The outputs' declared shapes, a line each: dimensions as sizes or names, "?" for none.
# With ANY_DIM_NAMES=1 every name is "*": a name the exporter made up for an output's
# dimension (torch's "SmallCnn31_dim_0" for a function's output) is written as the input
# dimension it equals.
declared_outputs() {  # model
  "$python" -c '
import sys, onnx
m, any_name = onnx.load(sys.argv[1], load_external_data=False), sys.argv[2] == "1"
for v in m.graph.output:
    t = v.type.tensor_type
    dims = [d.dim_value or ("*" if any_name else d.dim_param) for d in t.shape.dim]
    print(v.name, dims if t.HasField("shape") else "?")' "$1" "${ANY_DIM_NAMES:-0}"
}

check() {  # name, taso-opt flags; SYMBOLIC: the input dimensions to keep symbolic (batch)
  local name="$1"; shift
  local model="$work/models/$name.onnx" out="$work/$name.opt.onnx"
  if ! "$build/taso-opt" "$model" -o "$out" --no-verify-speed "$@" > "$work/$name.log" 2>&1; then
    cat "$work/$name.log"
    exit 1
  fi
  if [ "$(symbolic_inputs "$out")" != "${SYMBOLIC:-batch}" ]; then
    echo "$name: not kept symbolic: ${SYMBOLIC:-batch}"; cat "$work/$name.log"; exit 1
  fi
  if [ "$(declared_outputs "$out")" != "$(declared_outputs "$model")" ]; then
    echo "$name: the outputs are declared otherwise than in the input:"
    declared_outputs "$model"; declared_outputs "$out"; exit 1
  fi
  for batch in 1 4; do
    inputs "$model" "$batch" "$work/$name.in$batch"
    node "$runner" "$model" --inputs "$work/$name.in$batch" --save-outputs "$work/$name.out$batch" >/dev/null
    node "$runner" "$out" --inputs "$work/$name.in$batch" --compare "$work/$name.out$batch" >/dev/null
  done
  echo "$name: $(grep -E "nodes ->" "$work/$name.log" | cut -d: -f2-);" \
       "batch symbolic, ONNX Runtime agrees at batch 1 and 4; $(grep -E "^export" "$work/$name.log" || true)"
}

for name in cnn_opset11 cnn_opset13 cnn_opset17 cnn_opset18 cnn_opset21 mlp_opset13 view_opset13 heads_view_opset13 \
  swin_opset14; do
  check "$name"
done

# The heads' views (and Swin's windows, paddings and masks) are opaque where their targets
# depend on the batch, but what reads them is typed at the size searched, so the search
# reaches the attention after them.
for name in heads_view_opset13 swin_opset14; do
  if grep -q "reads a tensor of unknown shape" "$work/$name.log"; then
    echo "$name: nodes after the views were left alone:"; cat "$work/$name.log"; exit 1
  fi
done

# Position ids sliced to the input's length, then embedded: the slice is typed only once
# the length is folded at the sizes built. A file taso-opt wrote, optimized again, declares
# the slice's type with seq named; one passed through ONNX's shape inference, with no
# shape. Either declaration was taken over the folded value's (seq was written fixed at 1).
SYMBOLIC="batch seq" check positions_opset14
cp "$work/positions_opset14.opt.onnx" "$work/models/positions_again.onnx"
for name in positions_again positions_inferred_opset14; do
  SYMBOLIC="batch seq" check "$name"
  if grep -q "reads a tensor of unknown shape" "$work/$name.log"; then
    echo "$name: nodes after the positions were left alone:"; cat "$work/$name.log"; exit 1
  fi
done

# Height and width: a 1x1 image fits no convolution without padding, so the search takes
# the smallest power of two the model builds at (8), and keeps them symbolic.
SYMBOLIC="batch height width" check image_sizes_opset12
grep -q "symbolic dimension 'height': searched at 8 (no --input-shape given; the smallest power of two" \
  "$work/image_sizes_opset12.log" || { echo "image_sizes_opset12: not searched at 8"; exit 1; }

# Sizes ONNX's inference lets through for opaque nodes but ONNX Runtime refuses: a
# reflecting pad of 3 needs 4 pixels, a 1-D convolution of 10 then 3 needs 32 samples.
SYMBOLIC="batch height width" check reflection_opset13
SYMBOLIC="batch length" check audio_opset17
grep -q "symbolic dimension 'height': searched at 4 (no --input-shape given; the smallest power of two" \
  "$work/reflection_opset13.log" || { echo "reflection_opset13: not searched at 4"; exit 1; }
grep -q "symbolic dimension 'length': searched at 32 (no --input-shape given; the smallest power of two" \
  "$work/audio_opset17.log" || { echo "audio_opset17: not searched at 32"; exit 1; }

# Beyond opset 17 the installed ONNX checker cannot check the output: ONNX Runtime does, the
# output says so, and the opset is the input's.
for opset in 18 21; do
  grep -q "export: opset $opset is beyond the installed ONNX checker (17): validated by ONNX Runtime" \
    "$work/cnn_opset$opset.log" || { echo "cnn_opset$opset: no ONNX Runtime validation"; exit 1; }
  written=$("$python" -c 'import sys, onnx; print(onnx.load(sys.argv[1]).opset_import[0].version)' \
    "$work/cnn_opset$opset.opt.onnx")
  [ "$written" = "$opset" ] || { echo "cnn_opset$opset: written at opset $written"; exit 1; }
done

# A decoder with its key/value cache: its attention mask spans the past + seq tokens, so
# the model does not build with 'total' apart from them; it is kept as their sum (it was
# written fixed at 1), and the output agrees in ONNX Runtime at seq 3, past 5, total 8.
# With the heads' width computed from the shape, the model imports apart from them with
# the attention opaque (of unknown shape), and does not compute there all the same (total
# was kept apart, and ONNX Runtime could not run the input at the sizes checked).
"$python" - "$work/cached_decoder.in" <<'PY'
import json, os, sys
import numpy as np
out, rng = sys.argv[1], np.random.default_rng(0)
os.makedirs(out, exist_ok=True)
batch, seq, past = 2, 3, 5
tensors = {"input_ids": rng.integers(0, 50, (batch, seq)), "attention_mask": np.ones((batch, past + seq)),
           "past_k": rng.uniform(-1, 1, (batch, 2, past, 16)), "past_v": rng.uniform(-1, 1, (batch, 2, past, 16))}
tensors["attention_mask"][0, :2] = 0  # two cached tokens masked out in the first sequence
for name, t in tensors.items():
    t.astype("<f4").tofile(os.path.join(out, name + ".bin"))
json.dump([{"name": n, "shape": list(t.shape), "file": n + ".bin"} for n, t in tensors.items()],
          open(os.path.join(out, "manifest.json"), "w"))
PY
for name in cached_decoder cached_decoder_heads_from_shape; do
  decoder="$work/models/${name}_opset14.onnx" decoder_out="$work/$name.opt.onnx" log="$work/$name.log"
  "$build/taso-opt" "$decoder" -o "$decoder_out" --no-verify-speed > "$log" 2>&1 || { cat "$log"; exit 1; }
  [ "$(symbolic_inputs "$decoder_out")" = "batch seq batch total batch past batch past" ] &&
    grep -q "symbolic dimension 'total': .*kept symbolic, as seq + past" "$log" ||
    { echo "$name: total not kept as seq + past"; cat "$log"; exit 1; }
  # Its first step, the cache empty, was run end to end too (past=0, total=seq).
  grep -qE "end-to-end +passed .*(and at|;) batch=[0-9]+, past=0, seq=([0-9]+), total=\2" "$log" ||
    { echo "$name: not run with an empty cache"; cat "$log"; exit 1; }
  node "$runner" "$decoder" --inputs "$work/cached_decoder.in" --save-outputs "$work/$name.out" >/dev/null
  node "$runner" "$decoder_out" --inputs "$work/cached_decoder.in" --compare "$work/$name.out" >/dev/null
  echo "${name}_opset14: total kept as seq + past; ONNX Runtime agrees at seq 3, past 5, total 8"
done

# Exported with modules as model-local functions (export_modules_as_functions, nested in
# the NormMlp blocks): each call is replaced by its function's nodes, so that the search
# reaches them as in the plain export (a call was one opaque node), and the written model
# holds no function.
check cnn_opset15
for name in cnn_function_opset15 norm_mlp_functions_opset15; do
  ANY_DIM_NAMES=1 check "$name"
  { grep -q "^import: [0-9]* calls* of the model's functions replaced by their nodes" "$work/$name.log" &&
    ! grep -q "not in the operator library" "$work/$name.log"; } ||
    { echo "$name: the functions' calls were not replaced"; cat "$work/$name.log"; exit 1; }
  functions=$("$python" -c 'import sys, onnx; print(len(onnx.load(sys.argv[1]).functions))' "$work/$name.opt.onnx")
  [ "$functions" = 0 ] || { echo "$name: $functions functions written"; exit 1; }
done
[ "$(grep "nodes ->" "$work/cnn_function_opset15.log" | cut -d: -f2-)" = \
  "$(grep "nodes ->" "$work/cnn_opset15.log" | cut -d: -f2-)" ] ||
  { echo "cnn_function_opset15: searched otherwise than the plain export"; exit 1; }

# External data: read beside the model, written beside the output.
check cnn_external
[ -s "$work/cnn_external.opt.onnx.data" ] || { echo "cnn_external: no data file beside the output"; exit 1; }

# Models as ONNX Runtime saves them optimized offline (tools/ort/ort_save.js): its own
# operators in them (LayerNormalization at opset 14, SkipLayerNormalization, BiasGelu,
# FusedConv), known to ONNX's checker and inference only through ops/runtime_schemas.cc,
# and what follows them typed.
node "$here/tools/ort/ort_save.js" "$work/models/norm_mlp_opset14.onnx" "$work/models/norm_mlp_ort_saved.onnx"
node "$here/tools/ort/ort_save.js" "$work/models/cnn_opset13.onnx" "$work/models/cnn_ort_saved.onnx"
for name in norm_mlp_ort_saved cnn_ort_saved; do
  check "$name"
  if grep -qE "reads a tensor of unknown shape|computes on undefined" "$work/$name.log"; then
    echo "$name: nodes after ONNX Runtime's operators were left untyped:"; cat "$work/$name.log"; exit 1
  fi
done

# A model converted to float16 throughout (at opset 13, and at 21, beyond the installed
# ONNX checker, where ONNX Runtime validates the written file on inputs of its types):
# nothing in it computes with the library's operators, so it is written as read; its batch
# stays symbolic, and ONNX Runtime ran both files (the end-to-end check, at batch 2 too).
for name in cnn_float16 cnn_float16_opset21; do
  if ! "$build/taso-opt" "$work/models/$name.onnx" -o "$work/$name.opt.onnx" > "$work/$name.log" 2>&1; then
    cat "$work/$name.log"; exit 1
  fi
  [ "$(symbolic_inputs "$work/$name.opt.onnx")" = batch ] ||
    { echo "$name: the batch was not kept symbolic"; cat "$work/$name.log"; exit 1; }
  grep -qE "end-to-end +passed in ONNX Runtime .*also at batch=2," "$work/$name.log" ||
    { echo "$name: not checked end to end"; cat "$work/$name.log"; exit 1; }
  echo "$name: $(grep -E "nodes ->" "$work/$name.log" | cut -d: -f2- | cut -d';' -f1); batch symbolic," \
       "checked end to end in ONNX Runtime; $(grep -E "^export" "$work/$name.log")"
done
grep -q "export: opset 21 is beyond the installed ONNX checker (17): validated by ONNX Runtime" \
  "$work/cnn_float16_opset21.log" || { echo "cnn_float16_opset21: not validated by ONNX Runtime"; exit 1; }
