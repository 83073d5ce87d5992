#!/usr/bin/env bash
# Fails when a file includes a header of a layer above its own. The layers, lowest first
# (CMakeLists.txt builds one library of each):
#   ir -> rules -> optimizer -> egraph -> backends -> pipeline -> tools
#   rules -> generator, verifier (neither over the other); ir -> models
# Tests may include anything and are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."

# The layers a file of each layer may include, its own among them.
declare -A ALLOWED=(
  [ir]="ir"
  [rules]="ir rules"
  [optimizer]="ir rules optimizer"
  [egraph]="ir rules optimizer egraph"
  [backends]="ir rules optimizer egraph backends"
  [pipeline]="ir rules optimizer egraph backends pipeline"
  [generator]="ir rules generator"
  [verifier]="ir rules verifier"
  [models]="ir models"
  [tools]="ir rules optimizer egraph backends pipeline generator verifier models tools"
)

# Where a quoted include is looked for: the including file's folder, then these.
INCLUDE_ROOTS=(include src ops examples generator verifier)

# The layer of a file at the top of src/ or include/taso/, by its name (as CMakeLists.txt
# assigns the sources): a header whose source is in src/backends/ or src/pipeline/ is in
# that layer.
top_level_layer() {
  local stem=$1
  if [[ -e src/backends/$stem.cc ]]; then echo backends; return; fi
  if [[ -e src/pipeline/$stem.cc ]]; then echo pipeline; return; fi
  case $stem in
    rules) echo rules ;;
    match* | rewrite* | cost* | search* | fold* | inference_fusion* | row_form*) echo optimizer ;;
    pipeline*) echo pipeline ;;
    *) echo ir ;;
  esac
}

layer_of() {
  local path=$1
  case $path in
    src/egraph/* | include/taso/egraph/*) echo egraph ;;
    src/backends/* | ops/cpu/* | ops/cuda/* | include/taso/backends/*) echo backends ;;
    src/pipeline/* | include/taso/pipeline/*) echo pipeline ;;
    src/tools/*) echo tools ;;
    generator/*) echo generator ;;
    verifier/*) echo verifier ;;
    examples/models/*) echo models ;;
    ops/*) echo ir ;;
    src/*.* | include/taso/*.*)
      local name=${path##*/}
      top_level_layer "${name%.*}" ;;
    *) echo unknown ;;
  esac
}

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
  [[ $layer == unknown ]] && continue
  while IFS= read -r header; do
    target=$(resolve "$file" "$header")
    [[ -z $target ]] && continue
    target_layer=$(layer_of "$target")
    if [[ " ${ALLOWED[$layer]} " != *" $target_layer "* ]]; then
      echo "$file ($layer) includes $target ($target_layer)"
      failures=$((failures + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find include src ops generator verifier examples -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' \) | sort)

if ((failures > 0)); then
  echo "check_layers: $failures includes of a higher layer" >&2
  exit 1
fi
echo "check_layers: no file includes a header of a layer above its own"
