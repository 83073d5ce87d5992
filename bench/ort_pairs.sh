# Shared by the ONNX Runtime benchmarks (sourced from the repository root).

json_number() {  # FILE KEY -> the first number under "KEY"
  sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1" | head -1
}

# A B THREADS PAIRS ROUNDS [SHAPES] -> "a_ms b_ms spread" from the worker's paired timing (session
# pairs in both orders, ROUNDS runs of each in turn per pair): geometric means of the
# pairs' medians, and the spread of the ratio a/b (twice the standard error of the mean
# log-ratio over pairs). The worker runs with malloc keeping freed memory, as taso-opt
# starts it (src/backends/ort_worker.cc), so that the two time alike.
# SHAPES (optional) is the worker's JSON object of input sizes, {"src": [1, 64]}, for
# models with symbolic dimensions.
ort_pairs() {
  printf '{"op":"compare","model":"%s","against":"%s","threads":%d,"pairs":%d,"rounds":%d,"shapes":%s}\n' \
    "$1" "$2" "$3" "$4" "$5" "${6:-null}" |
    MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824 node tools/ort/ort_worker.js |
    awk '{
      if (match($0, /"error":"[^"]*"/)) { print "error " substr($0, RSTART, RLENGTH) > "/dev/stderr"; exit 1 }
      match($0, /"a_ms":\[[^\]]*\]/); na = split(substr($0, RSTART + 8, RLENGTH - 9), a, ",")
      match($0, /"b_ms":\[[^\]]*\]/); split(substr($0, RSTART + 8, RLENGTH - 9), b, ",")
      for (i = 1; i <= na; ++i) { la += log(a[i]); lb += log(b[i]); r = log(a[i] / b[i]); s += r; ss += r * r }
      m = s / na; v = na > 1 ? (ss - na * m * m) / (na - 1) : 0; if (v < 0) v = 0
      printf "%.3f %.3f %.4f\n", exp(la / na), exp(lb / na), 2 * sqrt(v / na)
    }'
}

# ORIGINAL OTHER THREADS PAIRS ROUNDS -> "ratio spread%": the original's time over the
# other's, and the spread in percent.
ort_ratio() {
  local timing orig other spread
  timing=$(ort_pairs "$@") || return 1
  read -r orig other spread <<< "$timing"
  awk -v o="$orig" -v n="$other" -v s="$spread" 'BEGIN { printf "%.3f %.1f\n", o / n, 100 * s }'
}
