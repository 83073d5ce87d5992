#!/usr/bin/env bash
# Idempotent set-up: installs the Debian packages the build and the tests need.
# Safe to run again; does nothing when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libz3-dev
  libprotobuf-dev protobuf-compiler
  libonnx-dev
  libabsl-dev
  catch2
  libdnnl-dev ocl-icd-opencl-dev
  libsqlite3-dev
  python3-onnx python3-torch python3-torchvision python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"
