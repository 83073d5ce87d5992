#!/usr/bin/env bash
# Installs what is missing, then configures and builds into build/ (Release): the targets
# named (scripts/build.sh taso-opt taso-models), else all of them. The compiler's output
# goes to build/build.log and is shown only where the build fails.
# TASO_WARNINGS_AS_ERRORS=ON (as the test command sets it) fails on any compiler warning.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON \
  ${TASO_WARNINGS_AS_ERRORS:+-DTASO_WARNINGS_AS_ERRORS=$TASO_WARNINGS_AS_ERRORS} >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
echo "build: ${*:-every target} (compiler output in build/build.log)"
if ! cmake --build build -j "$(nproc)" "${targets[@]}" > build/build.log 2>&1; then
  tail -n 150 build/build.log
  echo "build: failed (the whole output is in build/build.log)" >&2
  exit 1
fi
