#!/usr/bin/env bash
# taso-gen spread over MPI ranks (generator/team.h) writes the database one process
# writes, byte for byte: at K=3 over every operator, with 2 ranks (their graphs partly on
# disk), 3 (a count that does not divide the shards) and 4 (each with fewer graphs than
# one of the rule finder's slices, which then spans ranks). An error in one rank ends the
# whole job with one line and no output file, rather than leaving the others waiting.
# Usage: tests/gen_ranks.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
command -v mpirun > /dev/null || { echo "FAIL: mpirun not found (scripts/setup.sh installs openmpi-bin)"; exit 1; }
# Open MPI refuses root unless told; a container may have one core for three ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ranks() {  # N, then taso-gen's arguments
  local n=$1
  shift
  timeout 300 mpirun -np "$n" --oversubscribe --bind-to none "$build/taso-gen" "$@"
}

"$build/taso-gen" -k 3 -o "$work/one.pb" --quiet > "$work/one.txt"
ranks 2 -k 3 -o "$work/two.pb" --quiet --max_memory_mb 8 --spill_dir "$work" > "$work/two.txt"
ranks 3 -k 3 -o "$work/three.pb" --quiet > "$work/three.txt"
ranks 4 -k 3 -o "$work/four.pb" --quiet --threads 1 > "$work/four.txt"
for n in two three four; do cmp "$work/one.pb" "$work/$n.pb"; done
# The report counts every rank's graphs: the same table but for times and memory.
for n in two three four; do
  diff <(grep -v "wall time\|fingerprinted\|sorting\|^wrote" "$work/one.txt") \
    <(grep -v "wall time\|fingerprinted\|sorting\|^wrote" "$work/$n.txt")
done
[ "$(grep -c "^taso-gen: K=3" "$work/two.txt")" = 1 ] || { echo "FAIL: not one report from two ranks"; exit 1; }

# Rank 0 cannot write the output: the job ends, not hangs.
status=0
ranks 2 -k 3 -o /nonexistent/dir/rules.pb --quiet > "$work/err.out" 2> "$work/err.txt" || status=$?
if [ "$status" = 0 ] || [ "$status" = 124 ]; then
  echo "FAIL: an unwritable output under mpirun exited $status"
  exit 1
fi
grep -q "taso-gen: error: cannot write '/nonexistent/dir/rules.pb'" "$work/err.txt" ||
  { echo "FAIL: no clear error:"; cat "$work/err.txt"; exit 1; }
[ ! -e /nonexistent/dir/rules.pb ]
echo "gen-ranks: 1 to 4 ranks wrote the same $(stat -c %s "$work/one.pb")-byte database"
