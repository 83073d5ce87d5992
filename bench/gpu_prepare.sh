#!/usr/bin/env bash
# Run HERE (a Debian 12 machine with a package registry), before bench/gpu_check.sh runs on
# a lent GPU machine, which has none (issue 44, part 3). Downloads into bench/gpu_debs/
# (ignored; carried to the GPU machine by the device tool's `carry`) the Debian 12 .deb files
# that building taso-opt, taso-run, taso-models and taso_tests and running them need and
# such a machine lacks: the dev packages of cmake/dependencies.cmake (protobuf and protoc,
# ONNX, abseil, oneDNN and the OpenCL loader its CMake config asks for, Z3, SQLite,
# jemalloc, Catch2), their runtime libraries, and pkgconf (CMake's pkg_check_modules needs
# a pkg-config). The GPU machine's image brings the compiler, CMake, ninja, CUDA, cuDNN,
# cuBLAS and the C and C++ runtime (ASSUMED below). Nothing is installed here.
#
# Usage: bash bench/gpu_prepare.sh        (again: downloads only what is missing)
# Prints each file and the total, and fails if the total would not leave the device
# tool's 64 MiB (working tree plus carried paths) enough room for the tracked tree.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=bench/gpu_debs

# What the build and the runs need, by package (Debian 12 names).
PACKAGES=(
  libprotobuf-dev libprotobuf32 protobuf-compiler libprotoc32      # protobuf, protoc for proto/rules.proto
  libonnx-dev libonnx1 libonnxifi                                  # ONNX (its CMake config names libonnxifi's files)
  libabsl-dev libabsl20220623                                      # abseil
  libdnnl-dev libdnnl2                                             # oneDNN 2.x, the cpu backend
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-c-headers opencl-clhpp-headers  # OpenCL: oneDNN's config and libdnnl2
  libz3-dev libz3-4                                                # Z3: the e-graph's exact extraction, taso-verify
  libsqlite3-dev libsqlite3-0                                      # the measured-cost cache
  libjemalloc-dev libjemalloc2                                     # configure asks for it (taso-gen, not built there)
  catch2                                                           # Catch2 2.x: taso_tests
  pkgconf pkgconf-bin libpkgconf3                                  # pkg-config for pkg_check_modules
)
# Dependencies the GPU machine's image is taken to have (compiler and C/C++ runtime), or
# that nothing built there uses (libprotobuf-lite32: the lite library; zlib1g-dev: only
# protobuf's gzip streams, which taso does not include; libc-dev comes with g++).
ASSUMED=(libc6 libgcc-s1 libstdc++6 libgomp1 zlib1g gcc-12-base libc-dev libc6-dev
         libprotobuf-lite32 zlib1g-dev)

command -v apt-get >/dev/null || { echo "gpu_prepare: error: apt-get not found (run this on the Debian 12 machine)" >&2; exit 1; }

# Every dependency of a listed package is listed or assumed: the set is closed.
in_set() { local x="$1"; shift; for y in "$@"; do [ "$x" = "$y" ] && return 0; done; return 1; }
open=0
for p in "${PACKAGES[@]}"; do
  # Depends lines, one per dependency: "dep | alternative ..." (any alternative will do).
  while IFS= read -r line; do
    ok=0
    for alt in $(echo "$line" | tr '|' ' '); do
      alt="${alt%%:*}"
      if in_set "$alt" "${PACKAGES[@]}" "${ASSUMED[@]}"; then ok=1; fi
    done
    if [ "$ok" = 0 ]; then echo "gpu_prepare: $p depends on $line, neither listed nor assumed" >&2; open=1; fi
  done < <(apt-cache show "$p" 2>/dev/null | awk '/^Package:/{n++} n==1 && /^Depends:/{sub(/^Depends: /, ""); print}' |
           tr ',' '\n' | sed 's/([^)]*)//g; s/^ *//; s/ *$//' | grep -v '^$')
done
[ "$open" = 0 ] || { echo "gpu_prepare: error: the package set is not closed (see above)" >&2; exit 1; }

mkdir -p "$dest"
missing=()
for p in "${PACKAGES[@]}"; do
  ls "$dest/${p}_"*.deb >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "gpu_prepare: downloading ${missing[*]}"
  (cd "$dest" && apt-get download "${missing[@]}") || {
    echo "gpu_prepare: error: apt-get download failed (apt-get update first?)" >&2; exit 1; }
fi
# One version of each package only (an older download left beside a newer one would be
# unpacked too).
for p in "${PACKAGES[@]}"; do
  n=$(ls "$dest/${p}_"*.deb 2>/dev/null | wc -l)
  [ "$n" = 1 ] || { echo "gpu_prepare: error: $n files for $p in $dest (remove the stale ones)" >&2; exit 1; }
done

ls -l "$dest"/*.deb | awk '{printf "  %9d  %s\n", $5, $NF}'
debs=$(du -cb "$dest"/*.deb | tail -1 | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | awk '$2 == "total" {s += $1} END {print s + 0}')
limit=$((64 * 1024 * 1024))
awk -v n="$(ls "$dest"/*.deb | wc -l)" -v d="$debs" -v t="$tree" 'BEGIN {
  printf "gpu_prepare: %d files, %.1f MiB of .deb; tracked tree %.1f MiB; together %.1f of 64 MiB\n", n, d / 1048576, t / 1048576, (d + t) / 1048576 }'
[ $((debs + tree)) -lt "$limit" ] || { echo "gpu_prepare: error: over the device tool's 64 MiB" >&2; exit 1; }
echo "gpu_prepare: ready; carry \"$dest\" in the device run (see the top of bench/gpu_check.sh)"
