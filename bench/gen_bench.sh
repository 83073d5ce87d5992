#!/usr/bin/env bash
# taso-gen at K=2, 3 and 4 over the whole operator set: graphs enumerated, candidates,
# rules after each pruning stage, wall time and peak memory (TASO's Table 2.3 and the
# generator's speed). Usage: bench/gen_bench.sh [K ...]   (default: 2 3 4)
# Each run is limited to GEN_TIME_LIMIT seconds (default 1800); the enumerated graphs are
# held in GEN_MEMORY_MB (default 1024) and the rest spilled to disk, up to GEN_DISK_MB
# (default 65536), in GEN_SPILL_DIR (default $TMPDIR or /tmp). GEN_OPS: an operator
# subset (--ops); GEN_BIN: another taso-gen (default build/taso-gen); GEN_RANKS: run as
# that many MPI ranks (mpirun -np N --bind-to none; the same database).
set -uo pipefail
cd "$(dirname "$0")/.."
bin="${GEN_BIN:-build/taso-gen}"
[ -x "$bin" ] || bash scripts/build.sh >/dev/null
limit="${GEN_TIME_LIMIT:-1800}"
memory="${GEN_MEMORY_MB:-1024}"
disk="${GEN_DISK_MB:-65536}"
ops=()
[ -n "${GEN_OPS:-}" ] && ops=(--ops "$GEN_OPS")
spill=()
[ -n "${GEN_SPILL_DIR:-}" ] && spill=(--spill_dir "$GEN_SPILL_DIR")
ranks=()
[ -n "${GEN_RANKS:-}" ] && ranks=(mpirun -np "$GEN_RANKS" --bind-to none)
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out="$(mktemp -d)"
for k in "${@:-2 3 4}"; do
  for kk in $k; do
    echo "=== K=$kk (limit ${limit} s, memory ${memory} MiB, disk ${disk} MiB, $(nproc) cores${GEN_OPS:+, --ops $GEN_OPS}${GEN_RANKS:+, $GEN_RANKS ranks})"
    /usr/bin/time -f "  [time] wall %e s, peak RSS %M KB" \
      timeout "$limit" "${ranks[@]}" "$bin" -k "$kk" -o "$out/k$kk.pb" --max_memory_mb "$memory" --max_disk_mb "$disk" \
      "${ops[@]}" "${spill[@]}" 2>&1 | grep -v '^\s*$'
    status=${PIPESTATUS[0]}
    [ "$status" -eq 124 ] && echo "  stopped at the ${limit} s limit"
  done
done
rm -rf "$out"
