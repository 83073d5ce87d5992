#!/usr/bin/env bash
# Whether two taso-opt builds write byte-identical models on the six benchmark models, at
# settings where the search is deterministic: the analytic backend (the default e-graph
# engine, and backtracking with a small budget), and the cpu backend searching layouts
# only (fusions and layouts, --search layouts) from one shared, pre-filled cost cache
# (cached costs are rescaled by a reference kernel timed in each run, so a substitution
# search there chooses between near-equal rewrites differently run to run).
# Usage: bench/byte_identity.sh OLD/taso-opt NEW/taso-opt [MODEL ...]
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 OLD/taso-opt NEW/taso-opt [MODEL ...]" >&2; exit 2; }
old="$1" new="$2"
shift 2
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(resnet50 resnext50 nasnet_a nasrnn bert inception_v3)
[ -x build/taso-models ] || bash scripts/build.sh >/dev/null
dir="$(mktemp -d)"
cache="$dir/costs.sqlite"
differ=0
# The same target wherever each build's ONNX Runtime is installed, and nothing timed that
# could change what is written.
fixed=(--target cpu --no-verify-speed --skip-self-check)
for m in "${models[@]}"; do
  build/taso-models "$m" -o "$dir/$m.onnx" >/dev/null || { echo "$m: taso-models failed"; differ=1; continue; }
  "$old" "$dir/$m.onnx" -o "$dir/fill.onnx" "${fixed[@]}" --cost-cache "$cache" --search layouts >/dev/null 2>&1
  for mode in analytic backtracking cpu; do
    flags=(--backend analytic)
    [ "$mode" = backtracking ] && flags=(--backend analytic --search-engine backtracking --budget 3 --time-limit 10000)
    [ "$mode" = cpu ] && flags=(--cost-cache "$cache" --search layouts)
    for side in old new; do
      bin="$old"; [ "$side" = new ] && bin="$new"
      "$bin" "$dir/$m.onnx" -o "$dir/$m.$mode.$side.onnx" "${fixed[@]}" "${flags[@]}" >/dev/null 2>&1 ||
        echo "$m $mode: $side failed"
    done
    if cmp -s "$dir/$m.$mode.old.onnx" "$dir/$m.$mode.new.onnx"; then echo "$m $mode: identical"
    else echo "$m $mode: DIFFERENT"; differ=1; fi
  done
done
rm -rf "$dir"
exit "$differ"
