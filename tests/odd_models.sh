#!/usr/bin/env bash
# taso-opt on odd but valid models and on invalid ones, written by
# tests/python/make_odd_models.py (which says what each case expects): a valid model is
# optimized and the result gives the original's answers in ONNX Runtime (a "refusable"
# one may instead be refused with one line giving the known reason); an invalid one is
# refused with exactly one line on stderr (giving the reason the case names, if any), an
# exit code from 1 to 127 and no output file.
# Usage: tests/odd_models.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
runner="$here/tools/ort/ort_run.js"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0

fail() {  # name, message
  echo "FAIL $1: $2"
  failures=$((failures + 1))
}

# Runs taso-opt on case $1; sets status and leaves stderr in $work/$1.err. Without the
# speed check the rewritten graph is what is written, so its answers are what is compared
# (the speed check may keep the input, which would compare the input with itself).
optimize() {
  status=0
  "$build/taso-opt" "$work/$1.onnx" -o "$work/$1.opt.onnx" --budget 20 --time-limit 20 --no-verify-speed \
    --cost-cache "$work/costs.sqlite" > "$work/$1.out" 2> "$work/$1.err" || status=$?
}

# The optimized model gives the original's outputs on ONNX Runtime (inputs from one seed,
# initializers that are also inputs fed other values too).
same_in_ort() {  # name
  # (ONNX Runtime warns on stderr about initializers that are also inputs.)
  node "$runner" "$work/$1.onnx" --seed 7 --save-outputs "$work/$1.expected" > /dev/null 2> "$work/$1.ort"
  if ! node "$runner" "$work/$1.opt.onnx" --seed 7 --compare "$work/$1.expected" > "$work/$1.ort" 2>&1; then
    fail "$1" "ONNX Runtime gives other answers: $(tail -1 "$work/$1.ort")"
    return
  fi
  echo "ok   $1: optimized, same answers in ONNX Runtime"
}

# Refused in one line (containing $2 when given), exit 1 to 127, nothing written.
refused_cleanly() {  # name, expected text
  local lines
  lines=$(wc -l < "$work/$1.err")
  if [ "$status" -lt 1 ] || [ "$status" -gt 127 ]; then
    fail "$1" "exit code $status, expected 1 to 127: $(head -c 300 "$work/$1.err")"
  elif [ "$lines" -ne 1 ]; then
    fail "$1" "$lines lines on stderr, expected one: $(head -c 300 "$work/$1.err")"
  elif [ -e "$work/$1.opt.onnx" ] || [ -e "$work/$1.opt.onnx.tmp" ]; then
    fail "$1" "an output file was left behind"
  elif [ -n "$2" ] && ! grep -qF -- "$2" "$work/$1.err"; then
    fail "$1" "refused without the reason '$2': $(cat "$work/$1.err")"
  else
    echo "ok   $1: refused: $(cat "$work/$1.err")"
  fi
}

/usr/bin/python3 "$here/tests/python/make_odd_models.py" "$work"
while IFS=$'\t' read -r name expectation reason; do
  optimize "$name"
  case "$expectation" in
    valid)
      if [ "$status" -ne 0 ]; then fail "$name" "not optimized (exit $status): $(cat "$work/$name.err")"
      else same_in_ort "$name"; fi ;;
    refusable)
      if [ "$status" -eq 0 ]; then same_in_ort "$name"; else refused_cleanly "$name" "$reason"; fi ;;
    invalid)
      refused_cleanly "$name" "$reason" ;;
    *) fail "$name" "unknown expectation '$expectation'" ;;
  esac
done < "$work/cases.tsv"

# The limit is the flag's: lowered to 100 bytes, it refuses a small valid model and names the
# flag that raises it.
cp "$work/matmul_weight_input.onnx" "$work/small_limit.onnx"
status=0
"$build/taso-opt" "$work/small_limit.onnx" -o "$work/small_limit.opt.onnx" --max-memory-gb 0.0000001 \
  > /dev/null 2> "$work/small_limit.err" || status=$?
refused_cleanly small_limit "--max-memory-gb"

if [ "$failures" -gt 0 ]; then
  echo "$failures odd model case(s) failed"
  exit 1
fi
echo "all odd model cases passed"
