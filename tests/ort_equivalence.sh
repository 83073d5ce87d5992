#!/usr/bin/env bash
# Equivalence in ONNX Runtime: for a CNN with grouped convolutions (ResNeXt-50), a network
# of NasNet-A cells and a transformer (BERT), at reduced sizes, taso-opt's output gives the
# outputs the original gives, on ONNX Runtime's CPU provider at its highest optimization
# level. A control checks that the comparison tells different outputs apart.
# Usage: tests/ort_equivalence.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
runner="$here/tools/ort/ort_run.js"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

check() {  # name, taso-models flags
  local name="$1"; shift
  "$build/taso-models" "$name" "$@" -o "$work/$name.onnx" >/dev/null
  if ! "$build/taso-opt" "$work/$name.onnx" -o "$work/$name.opt.onnx" --budget 10 --time-limit 60 \
      --cost-cache "$work/costs.sqlite" > "$work/$name.log" 2>&1; then
    cat "$work/$name.log"
    exit 1
  fi
  grep -E "nodes ->|applied|none kept" "$work/$name.log" | sed "s/^/  /" || true
  node "$runner" "$work/$name.onnx" --level all --seed 5 --save-outputs "$work/$name.expected" >/dev/null
  node "$runner" "$work/$name.opt.onnx" --level all --seed 5 --compare "$work/$name.expected"
}

check resnext50 --image-size 64
check nasnet_a --image-size 64 --layers 1
check bert --layers 1

# The runner refuses bad input in one line with exit status 2.
refuses() {  # expected message, runner arguments
  local expected="$1"; shift
  local status=0 out
  out=$(node "$runner" "$@" 2>&1) || status=$?
  if [ "$status" -ne 2 ] || ! grep -q "$expected" <<< "$out"; then
    echo "ort_run.js $*: expected exit 2 and '$expected', got $status: $out"
    exit 1
  fi
}
refuses "cannot read" "$work/missing.onnx"
echo "not a model" > "$work/junk.onnx"
refuses "ONNX Runtime cannot load" "$work/junk.onnx"
refuses "unknown --level" "$work/bert.onnx" --level fastest
refuses "manifest.json missing" "$work/bert.onnx" --compare "$work"
echo "runner: bad input refused"

# Control: other inputs give other outputs, and the comparison says so.
if node "$runner" "$work/bert.onnx" --seed 6 --compare "$work/bert.expected" >/dev/null; then
  echo "control failed: outputs for other inputs compared equal"
  exit 1
fi
echo "control: other inputs are told apart"
