#!/usr/bin/env bash
# The memory a command and the processes it starts hold, sampled twice a second: for each
# sample the seconds since the start, each process's resident set (MB) and their total, to
# LOG; the largest total printed at the end. A forked child counts its parent's pages
# again until it execs (a sample can catch one), so read the peak beside the log.
#   bench/peak_memory.sh LOG build/taso-opt model.onnx -o out.onnx --progress-log
set -uo pipefail
log=$1
shift
: >"$log"
start=$(date +%s.%N)
"$@" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  t=$(echo "$(date +%s.%N) - $start" | bc)
  ps -e -o pid=,ppid=,rss=,comm= | awk -v root="$pid" -v t="$t" '
    { parent[$1] = $2; rss[$1] = $3; name[$1] = $4 }
    END {
      line = sprintf("%.1f", t); total = 0
      for (p in parent) {
        q = p
        while (q in parent && q != root && q > 1) q = parent[q]
        if (q == root) { line = line " " name[p] ":" int(rss[p] / 1024); total += rss[p] }
      }
      print line, "total:" int(total / 1024)
    }' >>"$log"
  sleep 0.5
done
wait "$pid"
rc=$?
echo "peak_memory: largest total $(awk '{sub("total:", "", $NF); v = $NF + 0; if (v > m) m = v} END {print m + 0}' "$log") MB (samples in $log); exit $rc"
exit $rc
