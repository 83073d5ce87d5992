#!/usr/bin/env bash
# Fails when a file includes a header of a layer that its own may not use, or a header of
# ops/ outside ops/ and the backends' kernels (generic code reaches an operator through the
# operator interface or its typed view in include/taso/ir/ops/). The layers, their folders
# and what each may use are read from cmake/layers.txt, the table CMakeLists.txt builds the
# libraries from. Tests may include anything and are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A ALLOWED   # layer -> " itself and the layers it may use "
declare -A LAYER_AT  # folder -> layer
while read -r layer folders uses; do
  [[ -z $layer || $layer == \#* ]] && continue
  ALLOWED[$layer]=" $layer ${uses//,/ } "
  for folder in ${folders//,/ }; do LAYER_AT[$folder]=$layer; done
done < cmake/layers.txt

# The layer of a file: that of the longest folder of the table holding it, else none.
layer_of() {
  local dir=${1%/*}
  while [[ $dir == */* || -n ${LAYER_AT[$dir]:-} ]]; do
    [[ -n ${LAYER_AT[$dir]:-} ]] && { echo "${LAYER_AT[$dir]}"; return; }
    dir=${dir%/*}
  done
  echo none
}

# Where a quoted include is looked for: the including file's folder, then these.
INCLUDE_ROOTS=(include src ops examples generator verifier)

# The file a quoted include names, or nothing for a header outside the tree (absl/...,
# onnx/..., generated ones).
resolve() {
  local from=$1 header=$2 root
  if [[ -f $(dirname "$from")/$header ]]; then
    realpath --relative-to=. "$(dirname "$from")/$header"
    return
  fi
  for root in "${INCLUDE_ROOTS[@]}"; do
    [[ -f $root/$header ]] && { echo "$root/$header"; return; }
  done
  return 0
}

failures=0
while IFS= read -r file; do
  layer=$(layer_of "$file")
  [[ $layer == none ]] && continue
  while IFS= read -r header; do
    target=$(resolve "$file" "$header")
    [[ -z $target ]] && continue
    if [[ $target == ops/* && $file != ops/* && $file != src/backends/*/kernels/* ]]; then
      echo "$file includes $target, a header private to ops/"
      failures=$((failures + 1))
    fi
    target_layer=$(layer_of "$target")
    if [[ ${ALLOWED[$layer]} != *" $target_layer "* ]]; then
      echo "$file ($layer) includes $target ($target_layer)"
      failures=$((failures + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find include src ops generator verifier examples -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' \) | sort)

if ((failures > 0)); then
  echo "check_layers: $failures includes of a layer not below the includer's or private to ops/" >&2
  exit 1
fi
echo "check_layers: every include is of the file's own layer or one it may use"
