#!/usr/bin/env bash
# Installs what is missing, then configures and builds into build/ (Release).
# TASO_WARNINGS_AS_ERRORS=ON (as the test command sets it) fails on any compiler warning.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  ${TASO_WARNINGS_AS_ERRORS:+-DTASO_WARNINGS_AS_ERRORS=$TASO_WARNINGS_AS_ERRORS} >/dev/null
cmake --build build -j "$(nproc)"
