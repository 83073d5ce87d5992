#!/usr/bin/env bash
# Builds and runs every test (CTest over the Catch2 suite), then the IR and ONNX I/O
# tests again built with AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/test_sanitized.sh ir; `scripts/test_sanitized.sh` alone runs the whole suite
# so, which is not yet timed within CI's limit).
set -euo pipefail
cd "$(dirname "$0")/.."
TASO_WARNINGS_AS_ERRORS=ON bash scripts/build.sh
(cd build && ctest --output-on-failure -j 2)
bash scripts/test_sanitized.sh ir
