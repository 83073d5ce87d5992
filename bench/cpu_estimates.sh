#!/usr/bin/env bash
# Issue 44's judgement on the cpu target: each benchmark model optimized with no flags
# (`taso-opt M.onnx -o M.opt.onnx --target cpu`), then the input (A) and the written
# output (B) timed by `taso-run --executor cpu --time RUNS` in the order A B B A A B
# (each a fresh process, as a user runs a file), and taso-opt's estimates set beside the
# medians of those times. Usage:
#   bench/cpu_estimates.sh [MODEL ...]     (default: all six)
# CPU_EST_RUNS (default 40) runs per taso-run; CPU_EST_WORK keeps the files (default: a
# temporary folder). Columns: the speed-up (median of A over median of B, and the three
# pair ratios), the estimates before and after against the medians (est/run), and the
# estimates by operators alone (the cost model's sums; report's region_estimate), and the
# spread of the input's own three times (max over min: what the machine's drift gives).
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-opt ] || bash scripts/build.sh >/dev/null
runs="${CPU_EST_RUNS:-40}"
work="${CPU_EST_WORK:-$(mktemp -d)}"
mkdir -p "$work"
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(nasrnn bert resnet50 resnext50 inception_v3 nasnet_a)
median() { tr ' ' '\n' | sort -g | awk 'NF{a[n++]=$1} END{print (n%2 ? a[int(n/2)] : (a[n/2-1]+a[n/2])/2)}'; }
field() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -1; }
printf "%-13s %6s %9s %-20s %9s %9s %7s %9s %9s %7s %7s %s\n" model opt_s speedup pairs est_in run_in in_err \
  est_out run_out out_err A_max/min by_ops_in/out
for m in "${models[@]}"; do
  [ -f "$work/$m.onnx" ] || build/taso-models "$m" -o "$work/$m.onnx" >/dev/null || { echo "$m: taso-models failed"; continue; }
  start=$(date +%s)
  if ! build/taso-opt "$work/$m.onnx" -o "$work/$m.opt.onnx" --target cpu --report "$work/$m.json" > "$work/$m.log" 2>&1; then
    echo "$m: taso-opt failed: $(tail -1 "$work/$m.log")"
    continue
  fi
  opt_s=$(( $(date +%s) - start ))
  time_of() { build/taso-run "$1" --executor cpu --time "$runs" 2>&1 | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'; }
  a=() b=()
  for f in A B B A A B; do
    if [ "$f" = A ]; then a+=("$(time_of "$work/$m.onnx")"); else b+=("$(time_of "$work/$m.opt.onnx")"); fi
  done
  ra=$(echo "${a[*]}" | median) rb=$(echo "${b[*]}" | median)
  pairs=$(awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN{split(a,x," ");split(b,y," ");printf "%.3f,%.3f,%.3f", x[1]/y[1], x[2]/y[2], x[3]/y[3]}')
  ein=$(field "$work/$m.json" cost_before_ms) eout=$(field "$work/$m.json" cost_after_ms)
  oin=$(field "$work/$m.json" cost_before_by_operators_ms) oout=$(field "$work/$m.json" cost_after_by_operators_ms)
  spread=$(echo "${a[*]}" | tr ' ' '\n' | sort -g | awk 'NR==1{lo=$1} {hi=$1} END{printf "%.2f", hi/lo}')
  awk -v m="$m" -v s="$opt_s" -v ra="$ra" -v rb="$rb" -v p="$pairs" -v ei="$ein" -v eo="$eout" -v oi="${oin:--}" \
    -v oo="${oout:--}" -v sp="$spread" 'BEGIN{printf "%-13s %6d %8.3fx %-20s %9.2f %9.2f %+6.0f%% %9.2f %9.2f %+6.0f%% %7s %s/%s\n",
      m, s, ra/rb, p, ei, ra, 100*(ei/ra-1), eo, rb, 100*(eo/rb-1), sp, oi, oo}'
done
