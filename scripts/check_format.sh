#!/usr/bin/env bash
# Fails when a C++ or CUDA source of the project differs from what clang-format makes of
# it (.clang-format; clang-format-14, which scripts/setup.sh installs), naming the files.
# Fix with: git ls-files '*.cc' '*.h' '*.cu' | xargs clang-format-14 -i
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format-14 || command -v clang-format || true)
[[ -n $format ]] || { echo "check_format: clang-format not found (scripts/setup.sh installs it)"; exit 1; }
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu')
else
  mapfile -t files < <(find src include ops generator verifier examples tests -name '*.cc' -o -name '*.h' -o -name '*.cu')
fi
# One run over every file; --dry-run names each line it would change as an error.
status=0
report=$("$format" --dry-run --Werror "${files[@]}" 2>&1) || status=$?
mapfile -t unformatted < <(grep -oE '^[^ :]+:[0-9]+:[0-9]+: error' <<< "$report" | cut -d: -f1 | sort -u)
if (( status != 0 && ${#unformatted[@]} == 0 )); then
  echo "check_format: clang-format failed: ${report:0:2000}"
  exit 1
fi
if (( ${#unformatted[@]} > 0 )); then
  echo "check_format: ${#unformatted[@]} files differ from clang-format's layout:"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "check_format: ${#files[@]} files as clang-format lays them out"
