#!/usr/bin/env bash
# taso-gen at K=2, 3 and 4 over the whole operator set: graphs enumerated, candidates,
# rules after each pruning stage, wall time and peak memory (TASO's Table 2.3 and the
# generator's speed). Usage: bench/gen_bench.sh [K ...]   (default: 2 3 4)
# Each run is limited to GEN_TIME_LIMIT seconds (default 1800) and GEN_MEMORY_MB.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -x build/taso-gen ] || bash scripts/build.sh >/dev/null
limit="${GEN_TIME_LIMIT:-1800}"
memory="${GEN_MEMORY_MB:-16384}"
out="$(mktemp -d)"
for k in "${@:-2 3 4}"; do
  for kk in $k; do
    echo "=== K=$kk (limit ${limit} s, memory budget ${memory} MiB, $(nproc) cores)"
    /usr/bin/time -f "  [time] wall %e s, peak RSS %M KB" \
      timeout "$limit" build/taso-gen -k "$kk" -o "$out/k$kk.pb" --max_memory_mb "$memory" 2>&1 | grep -v '^\s*$'
    status=${PIPESTATUS[0]}
    [ "$status" -eq 124 ] && echo "  stopped at the ${limit} s limit"
  done
done
rm -rf "$out"
