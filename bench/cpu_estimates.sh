#!/usr/bin/env bash
# Issue 44's judgement on the cpu target, in rounds so that the machine's drift (up to 2x
# over minutes) falls on both sides of each comparison. A round, per model: `taso-opt
# M.onnx -o M.opt.onnx --target cpu` with no other flag (its report gives the estimates),
# then the input (A) and that round's written file (B) timed by `taso-run --executor cpu
# --time RUNS`, each a fresh process as a user runs a file, in PAIRS pairs of processes
# made in both orders (A B B A ...; the round's time of each is the median of its pairs').
# Each estimate is set against the times measured right after it; the columns are
# medians over the rounds with their range. Usage:
#   bench/cpu_estimates.sh [MODEL ...]     (default: all six)
# CPU_EST_ROUNDS (default 4) rounds; CPU_EST_PAIRS (default 2) process pairs per round;
# CPU_EST_RUNS (default 40) runs per taso-run;
# CPU_EST_WORK keeps the files (default: a temporary folder). Columns: what was written
# (rules kept, or "as read"), the speed-up A/B (median of the rounds' ratios, range), the
# input's estimate against its time (est_in/run_in: medians; in_err: median of the
# rounds' errors, range), the same for the written file, the input's own times max over
# min (the drift between processes, which no estimate can beat), and the cost model's sum
# by operators for the input (report's cost_before_by_operators_ms).
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
rounds="${CPU_EST_ROUNDS:-4}"
runs="${CPU_EST_RUNS:-40}"
pairs="${CPU_EST_PAIRS:-2}"
work="${CPU_EST_WORK:-$(mktemp -d)}"
mkdir -p "$work"
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(nasrnn bert resnet50 resnext50 inception_v3 nasnet_a)

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -1; }
run_ms() { build/taso-run "$1" --executor cpu --time "$runs" 2>&1 | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'; }
written() {  # "as-read" or the rules applied, e.g. "r0504x54"
  /usr/bin/python3 -c 'import json,sys
r = json.load(open(sys.argv[1])); s = r.get("speed_check") or {}
kept = r.get("rules_applied") or {}
print("as-read" if s.get("kept_input") or not kept else "+".join("%sx%s" % kv for kv in sorted(kept.items())))' "$1"
}
# Reads lines "a b est_in est_out written" and prints the model's row.
summarize() {
  awk -v m="$1" '
    function med(v, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
                                    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    function lo(v, n,   i, x) { x = v[1]; for (i = 2; i <= n; i++) if (v[i] < x) x = v[i]; return x }
    function hi(v, n,   i, x) { x = v[1]; for (i = 2; i <= n; i++) if (v[i] > x) x = v[i]; return x }
    { n++; a[n] = $1; b[n] = $2; ei[n] = $3; eo[n] = $4; w[$5]++
      sp[n] = $1 / $2; erri[n] = 100 * ($3 / $1 - 1); erro[n] = 100 * ($4 / $2 - 1) }
    END {
      if (n == 0) { printf "%-13s no round completed\n", m; exit }
      what = ""; for (k in w) what = what (what == "" ? "" : ",") k (w[k] < n ? "(" w[k] "/" n ")" : "")
      printf "%-13s %-22s %6.3fx %5.3f-%5.3f %8.2f %8.2f %+5.0f%% %+4.0f..%+4.0f %8.2f %8.2f %+5.0f%% %+4.0f..%+4.0f %5.2f\n",
        m, what, med(sp, n), lo(sp, n), hi(sp, n), med(ei, n), med(a, n), med(erri, n), lo(erri, n), hi(erri, n),
        med(eo, n), med(b, n), med(erro, n), lo(erro, n), hi(erro, n), hi(a, n) / lo(a, n) }'
}

printf "%-13s %-22s %7s %11s %8s %8s %6s %10s %8s %8s %6s %10s %5s\n" model written speedup range est_in run_in \
  in_err range est_out run_out out_err range A_drift
for m in "${models[@]}"; do
  [ -f "$work/$m.onnx" ] || build/taso-models "$m" -o "$work/$m.onnx" >/dev/null || { echo "$m: taso-models failed"; continue; }
  : > "$work/$m.rounds"
  for ((r = 0; r < rounds; r++)); do
    out="$work/$m.opt$r.onnx" report="$work/$m.$r.json"
    if ! build/taso-opt "$work/$m.onnx" -o "$out" --target cpu --report "$report" > "$work/$m.$r.log" 2>&1; then
      echo "$m: taso-opt failed in round $r: $(tail -1 "$work/$m.$r.log")"
      continue
    fi
    as=() bs=()
    for ((p = 0; p < pairs; p++)); do
      if (((r + p) % 2 == 0)); then as+=("$(run_ms "$work/$m.onnx")"); bs+=("$(run_ms "$out")")
      else bs+=("$(run_ms "$out")"); as+=("$(run_ms "$work/$m.onnx")"); fi
    done
    a=$(median "${as[@]}") b=$(median "${bs[@]}")
    echo "$a $b $(field "$report" cost_before_ms) $(field "$report" cost_after_ms) $(written "$report")" >> "$work/$m.rounds"
  done
  summarize "$m" < "$work/$m.rounds"
  echo "              by operators (input): $(field "$work/$m.0.json" cost_before_by_operators_ms) ms; rounds in $work/$m.rounds"
done
