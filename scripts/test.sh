#!/usr/bin/env bash
# Builds and runs every test (CTest over the Catch2 suite), then the tests again built
# with AddressSanitizer and UndefinedBehaviorSanitizer (scripts/test_sanitized.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
(cd build && ctest --output-on-failure -j 2)
bash scripts/test_sanitized.sh
