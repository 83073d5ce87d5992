#!/usr/bin/env bash
# taso-opt on every benchmark model (taso-models): search time, estimated cost before and
# after, end-to-end time of the original and the optimized graph on the backend's executor
# (cpu, or cuda with OPT_BACKEND=cuda; median of OPT_RUNS runs taken in turn), nodes, peak
# memory, and whether the
# self-check passed. Usage:
#   bench/opt_bench.sh [MODEL ...]      (default: all six)
# Times are in ms; est_* are the cost model's sums, run_* the measured medians; wall_s is
# the whole taso-opt run (search, layouts, self-check, measuring, export), opt_s the same
# less measuring (what optimizing a model takes without --measure).
# OPT_BUDGET (default 10 expansions), OPT_TIME_LIMIT (default 40 s), OPT_BACKEND
# (default cpu), OPT_SEARCH (default both on cpu, substitutions on cuda) and OPT_RUNS
# (default 20) are passed to taso-opt.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
budget="${OPT_BUDGET:-10}"
limit="${OPT_TIME_LIMIT:-40}"
backend="${OPT_BACKEND:-cpu}"
runs="${OPT_RUNS:-20}"
default_search=both
[ "$backend" = cpu ] || default_search=substitutions
search="${OPT_SEARCH:-$default_search}"
out="$(mktemp -d)"
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(resnet50 resnext50 nasnet_a nasrnn bert inception_v3)
printf "%-13s %9s %7s %6s %10s %10s %10s %10s %8s %9s %11s %9s %s\n" model search_s wall_s opt_s est_before est_after run_before run_after speedup nodes expansions peak_MiB self_check
for m in "${models[@]}"; do
  build/taso-models "$m" -o "$out/$m.onnx" >/dev/null || { echo "$m: taso-models failed"; continue; }
  /usr/bin/time -f "%M %e" -o "$out/$m.mem" build/taso-opt "$out/$m.onnx" -o "$out/$m.opt.onnx" --backend "$backend" \
    --budget "$budget" --time-limit "$limit" --search "$search" --measure "$runs" --report "$out/$m.json" > "$out/$m.log" 2>&1
  status=$?
  field() { sed -n "s/.*\"$1\": \([^,]*\),*/\1/p" "$out/$m.json" | head -1; }
  if [ "$status" -ne 0 ]; then
    printf "%-13s failed: %s\n" "$m" "$(tail -1 "$out/$m.log")"
    continue
  fi
  nodes=$(sed -n 's/.*: \([0-9]* nodes -> [0-9]*\) nodes.*/\1/p' "$out/$m.log" | tr -d ' ' | sed 's/nodes->/->/')
  before=$(sed -n 's/.*"before_ms": \([0-9.e-]*\).*/\1/p' "$out/$m.json")
  after=$(sed -n 's/.*"after_ms": \([0-9.e-]*\).*/\1/p' "$out/$m.json")
  read -r mem wall < "$out/$m.mem"
  measuring=$(sed -n 's/.*"after_ms": [0-9.e-]*, "seconds": \([0-9.e-]*\).*/\1/p' "$out/$m.json")
  printf "%-13s %9.2f %7.1f %6.1f %10.3f %10.3f %10.3f %10.3f %7.3fx %9s %11s %9d %s\n" "$m" "$(field search_seconds)" "$wall" \
    "$(awk -v w="$wall" -v m="${measuring:-0}" 'BEGIN { print w - m }')" \
    "$(field cost_before_ms)" "$(field cost_after_ms)" "$before" "$after" "$(awk -v a="$before" -v b="$after" 'BEGIN { print a / b }')" \
    "$nodes" "$(field expansions)" "$(( mem / 1024 ))" \
    "$(grep -o 'max |difference| of outputs [^ ]*' "$out/$m.log" | awk '{print "diff " $5}')"
done
rm -rf "$out"
