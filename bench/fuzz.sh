#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/ (Release with debug info), and runs each for
# SECONDS (default 60), one after the other, on a copy of its seed corpus
# (tests/fuzz/corpus/<target>). Usage:
#   bench/fuzz.sh [SECONDS] [TARGET ...]     (targets: onnx_import onnx_mutate rules axioms rewrite)
# Prints per target: seconds run, executions per second, corpus size at the end (files),
# libFuzzer's coverage (cov: edges reached, ft: features) and findings (inputs that
# crashed, leaked, hung or ran out of memory, saved under the work folder; each should
# become a file under tests/fuzz/regressions/<target>/). Exits 1 if anything was found.
# FUZZ_MERGE=1 merges the inputs that add coverage back into tests/fuzz/corpus/<target>.
# FUZZ_WORK (default: a new folder under /tmp, kept) holds the corpus copies, logs and
# findings; FUZZ_TIMEOUT (default 20 s) is the time one input may take, FUZZ_RSS_MB
# (default 2048) the memory the process may use.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift $(($# > 0 ? 1 : 0))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(onnx_import onnx_mutate rules axioms rewrite)

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (libFuzzer needs clang); scripts/setup.sh installs it" >&2
  exit 1
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTASO_FUZZ=ON \
  -DTASO_BUILD_TESTS=OFF >/dev/null || exit 1
cmake --build build-fuzz --target fuzzers -j "${FUZZ_BUILD_JOBS:-2}" | tail -1 || exit 1

work="${FUZZ_WORK:-$(mktemp -d /tmp/taso-fuzz.XXXXXX)}"
echo "fuzz.sh: corpora, logs and findings in $work"
# The last value libFuzzer printed for a field ("cov: 123", "exec/s: 45").
field() { grep -o "$1: [0-9]*" "$2" | tail -1 | sed 's/.*: //'; }

printf "%-12s %8s %8s %8s %8s %8s %9s\n" target seconds exec/s corpus cov ft findings
found=0
for t in "${targets[@]}"; do
  fuzzer="build-fuzz/tests/fuzz/${t}_fuzz"
  [ -x "$fuzzer" ] || { echo "fuzz.sh: no target '$t'" >&2; exit 1; }
  dir="$work/$t"
  mkdir -p "$dir/corpus" "$dir/findings"
  cp tests/fuzz/corpus/"$t"/* "$dir/corpus/"
  start=$(date +%s)
  "$fuzzer" "$dir/corpus" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-20}" \
    -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -artifact_prefix="$dir/findings/" -print_final_stats=1 >"$dir/log" 2>&1
  elapsed=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
  findings=$(find "$dir/findings" -type f ! -name 'slow-unit-*' | wc -l)
  found=$((found + findings))
  printf "%-12s %8s %8s %8s %8s %8s %9s\n" "$t" "$elapsed" "$((${execs:-0} / (elapsed > 0 ? elapsed : 1)))" \
    "$(find "$dir/corpus" -type f | wc -l)" "$(field cov "$dir/log")" "$(field ft "$dir/log")" "$findings"
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$fuzzer" -merge=1 tests/fuzz/corpus/"$t" "$dir/corpus" >"$dir/merge.log" 2>&1 ||
      echo "fuzz.sh: merging $t failed (see $dir/merge.log)" >&2
  fi
done
if [ "$found" -gt 0 ]; then
  echo "findings:"
  find "$work" -path '*/findings/*' -type f ! -name 'slow-unit-*'
  exit 1
fi
