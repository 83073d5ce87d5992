#!/usr/bin/env bash
# Fails when a C++ source file does not compile on its own: each .cc file is parsed alone
# (g++ -fsyntax-only, with the flags of its target), naming each file and its first errors.
# The unity builds of scripts/build.sh and CI compile eight files as one, so a file that
# lacks an #include compiles there when a neighbour has it, and fails in any other build
# (the GPU check's, a user's). Each .cc file includes its own header first, so the headers
# that have a .cc file are checked too. Configures a non-unity tree in build-includes/
# (generating the protobuf sources it needs); about 10 minutes on 2 cores for every file.
# Usage: scripts/check_includes.sh [SOURCE ...]   (e.g. src/pipeline/speed_stage.cc: only those)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-includes
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=OFF >/dev/null
mapfile -t generated < <(ninja -C "$dir" -t targets all | grep -oE '^[^:]+\.pb\.(h|cc):' | tr -d : | sort -u)
ninja -C "$dir" "${generated[@]}" >/dev/null
# Every C++ object (the CUDA device sources are left to nvcc's own build).
mapfile -t objects < <(ninja -C "$dir" -t targets all | grep -oE '^[^:]+\.cc\.o' | sort -u)
if (($# > 0)); then
  mapfile -t objects < <(printf '%s\n' "${objects[@]}" | grep -F "${@/#/-e.dir/}")
  ((${#objects[@]} > 0)) || { echo "check_includes: no source file of a target is named $*"; exit 1; }
fi
mkdir -p "$dir/syntax"
rm -f "$dir"/syntax/*.log
check_one() {
  local object=$1 log
  log="$2/syntax/$(tr '/' '_' <<< "$object").log"
  if ! (cd "$2" && eval "$(ninja -t commands -s "$object") -fsyntax-only") > "$log" 2>&1; then
    local source=${object#*.dir/}
    echo "check_includes: ${source%.o} does not compile alone:"
    grep -m 5 'error' "$log" | sed 's/^/  /'
    return 1
  fi
  rm -f "$log"
}
export -f check_one
status=0
printf '%s\n' "${objects[@]}" | xargs -P "$(nproc)" -I{} bash -c 'check_one "$@"' _ {} "$dir" || status=$?
if ((status != 0)); then
  echo "check_includes: fix by including, in each file named, the headers of what it uses"
  exit 1
fi
echo "check_includes: every source file checked compiles alone (${#objects[@]})"
