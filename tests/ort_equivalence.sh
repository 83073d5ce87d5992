#!/usr/bin/env bash
# Equivalence in ONNX Runtime: for a CNN with grouped convolutions (ResNeXt-50), a network
# of NasNet-A cells and a transformer (BERT), at reduced sizes, taso-opt's output gives the
# outputs the original gives, on ONNX Runtime's CPU provider at its highest optimization
# level. A control checks that the comparison tells different outputs apart. Without the
# speed check the rewritten graph is written, so its answers are what is compared (the
# speed check may keep the input, which would compare the input with itself).
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
  if ! "$build/taso-opt" "$work/$name.onnx" -o "$work/$name.opt.onnx" --budget 10 --time-limit 60 --no-verify-speed \
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
  if [ "$status" -ne 2 ] || ! grep -q -e "$expected" <<< "$out"; then
    echo "ort_run.js $*: expected exit 2 and '$expected', got $status: $out"
    exit 1
  fi
}
refuses "cannot read" "$work/missing.onnx"
echo "not a model" > "$work/junk.onnx"
refuses "ONNX Runtime cannot load" "$work/junk.onnx"
refuses "unknown --level" "$work/bert.onnx" --level fastest
refuses "manifest.json missing" "$work/bert.onnx" --compare "$work"
refuses "--profile must be a whole number" "$work/bert.onnx" --profile -1
refuses "--pairs must be a positive whole number" "$work/bert.onnx" --against "$work/bert.opt.onnx" --pairs 0
echo "runner: bad input refused"

# Timing against another model on session pairs made in both orders.
node "$runner" "$work/bert.onnx" --against "$work/bert.opt.onnx" --runs 4 --pairs 2 --json | node -e '
const s = JSON.parse(require("fs").readFileSync(0, "utf8"));
if (s.pairs !== 2 || s.runs !== 10 || !(s.median_ms > 0) || !(s.against_median_ms > 0)) {
  console.log("bad timing summary", JSON.stringify(s)); process.exit(1);
}
console.log(`timing: ${s.pairs} session pairs, ${s.runs} runs each`);
'

# The profile: products' FLOPs from shapes (a grouped convolution, a batched product, a
# Gemm), and rows for a model's convolutions whose node counts add up to what ran.
node -e '
const {flops} = require(process.argv[1]);
const want = [[flops("Conv", [[1, 16, 8, 8], [32, 4, 3, 3]], [[1, 32, 8, 8]]), 2 * 32 * 64 * 4 * 9],
              [flops("MatMul", [[2, 5, 7], [2, 7, 3]], [[2, 5, 3]]), 2 * 2 * 5 * 3 * 7],
              [flops("Gemm", [[4, 6], [6, 9]], [[4, 9]]), 2 * 4 * 9 * 6],
              [flops("MatMul", [[1, 128, 256]], [[1, 128, 1024]]), 2 * 128 * 1024 * 256],  // packed weight
              [flops("Conv", [[1, 16, 8, 8]], [[1, 32, 8, 8]]), 0],
              [flops("Relu", [[4, 6]], [[4, 6]]), 0]];
for (const [got, expected] of want) if (got !== expected) { console.log(`flops ${got}, expected ${expected}`); process.exit(1); }
' "$here/tools/ort/ort_profile.js"
node "$runner" "$work/resnext50.onnx" --profile 3 --json | node -e '
const rows = JSON.parse(require("fs").readFileSync(0, "utf8")).profile;
const convs = rows.filter(r => /Conv (dense|grouped)/.test(r.op));
const share = rows.reduce((s, r) => s + r.share, 0);
if (!convs.some(r => r.op.endsWith("grouped")) || convs.some(r => !(r.gflops > 0) || !Number.isInteger(r.nodes)) ||
    Math.abs(share - 1) > 1e-9) { console.log("bad profile", JSON.stringify(rows)); process.exit(1); }
console.log(`profile: ${rows.length} operator types, ${convs.map(r => `${r.op} ${r.nodes}`).join(", ")}`);
'


# Control: other inputs give other outputs, and the comparison says so.
if node "$runner" "$work/bert.onnx" --seed 6 --compare "$work/bert.expected" >/dev/null; then
  echo "control failed: outputs for other inputs compared equal"
  exit 1
fi
echo "control: other inputs are told apart"
