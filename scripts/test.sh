#!/usr/bin/env bash
# Builds and runs every test (CTest over the Catch2 suite).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure -j 2
