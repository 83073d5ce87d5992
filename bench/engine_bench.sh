#!/usr/bin/env bash
# Both search engines of taso-opt on the benchmark models (taso-models): the backtracking
# search (TASO's Algorithm 2, --time-limit, default 40 s) and the e-graph engine
# (equality saturation then extraction, --egraph-* limits). Per model and engine: search
# time, graphs expanded (backtracking) or saturation iterations (egraph), graphs seen or
# e-nodes, the stop reason, the estimated cost before and after the search (the search's
# own cost model: cpu at layouts by default), the cost of the written graph, and the
# self-check; for egraph also the extractor used, the integer program's status and the
# DAG costs of its choice and of greedy+local, and how many operators were measured. Usage:
#   bench/engine_bench.sh [MODEL ...]      (default: all six)
# ENGINE_BACKEND (default cpu), ENGINE_TIME_LIMIT (backtracking, default 40) and
# ENGINE_EXTRA (more taso-opt flags, e.g. "--egraph-nodes 50000") are passed on.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
backend="${ENGINE_BACKEND:-cpu}"
limit="${ENGINE_TIME_LIMIT:-40}"
extra="${ENGINE_EXTRA:-}"
out="$(mktemp -d)"
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(resnet50 resnext50 nasnet_a nasrnn bert inception_v3)
printf "%-13s %-12s %8s %7s %8s %-10s %12s %12s %12s %s\n" model engine search_s steps seen stop search_before search_after written_ms self_check
for m in "${models[@]}"; do
  build/taso-models "$m" -o "$out/$m.onnx" >/dev/null || { echo "$m: taso-models failed"; continue; }
  for engine in backtracking egraph; do
    # shellcheck disable=SC2086
    build/taso-opt "$out/$m.onnx" -o "$out/$m.$engine.onnx" --backend "$backend" --time-limit "$limit" \
      --search-engine "$engine" --report "$out/$m.$engine.json" $extra > "$out/$m.$engine.log" 2>&1
    status=$?
    if [ "$status" -ne 0 ]; then
      printf "%-13s %-12s failed: %s\n" "$m" "$engine" "$(tail -1 "$out/$m.$engine.log")"
      continue
    fi
    field() { sed -n "s/^ *\"$1\": \"*\([^,\"]*\)\"*,*$/\1/p" "$out/$m.$engine.json" | head -1; }
    expanded=$(field expansions)
    seen=$(field graphs_seen)
    stop=$(field stop_reason)
    if [ "$engine" = egraph ]; then  # its own figures: saturation iterations and e-nodes
      expanded=$(sed -n 's/.*"egraph": {"iterations": \([0-9]*\).*/\1/p' "$out/$m.$engine.json")
      seen=$(sed -n 's/.*"enodes": \([0-9]*\).*/\1/p' "$out/$m.$engine.json")
      # extractor, integer program status and DAG costs, operators measured / priced
      sed -n 's/.*"extractor": "\([^"]*\)".*"exact": "\([^"]*\)", "greedy_cost_ms": \([^,]*\), "exact_cost_ms": \([^,]*\), "measured_operators": \([0-9]*\), "priced_operators": \([0-9]*\).*/  extractor \1; program: \2 (greedy+local \3 ms, program \4 ms); measured \5 of \6 operators/p' \
        "$out/$m.$engine.json" > "$out/$m.extra"
    fi
    printf "%-13s %-12s %8.2f %7s %8s %-10s %12.4f %12.4f %12.4f %s\n" "$m" "$engine" "$(field search_seconds)" \
      "$expanded" "$seen" "$stop" "$(field search_cost_before_ms)" "$(field search_cost_after_ms)" \
      "$(field cost_after_ms)" "$(grep -o 'max |difference| of outputs [^ ]*' "$out/$m.$engine.log" | awk '{print "diff " $5}')"
    [ "$engine" = egraph ] && cat "$out/$m.extra"
  done
done
rm -rf "$out"
