#!/usr/bin/env bash
# Idempotent set-up: installs the Debian packages the build and the tests need.
# Safe to run again; does nothing when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  clang clang-format
  libz3-dev
  libprotobuf-dev protobuf-compiler
  libonnx-dev
  libabsl-dev
  catch2
  libdnnl-dev ocl-icd-opencl-dev
  libsqlite3-dev
  libjemalloc-dev
  libopenmpi-dev openmpi-bin
  python3-onnx python3-torch python3-torchvision python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Node.js and npm run ONNX Runtime (the npm package onnxruntime-node) for the cross-checks.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: installing nodejs npm"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
ort_dir="$(dirname "$0")/../tools/ort"
if ! (cd "$ort_dir" && node -e "process.exit(require('onnxruntime-node/package.json').version === require('./package.json').dependencies['onnxruntime-node'] ? 0 : 1)" 2>/dev/null); then
  echo "setup: installing onnxruntime-node (npm) in tools/ort"
  # Its install script would download GPU libraries, which fails here; the CPU build ships in the package.
  (cd "$ort_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-fund --no-audit --loglevel=error >/dev/null)
fi
echo "setup: all packages present"
