#!/usr/bin/env bash
# Installs every build and test dependency of cachet from Debian's packages.
# Idempotent: when everything is present it only checks and returns.
# Usage: scripts/install-deps.sh   (as root, or with sudo available)
set -euo pipefail

packages=(
  # LLVM/MLIR 22: headers, libMLIR.so, mlir-tblgen, FileCheck, lit, ld.lld.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools lld-22
  # Build tools.
  cmake ninja-build g++ python3
  # numpy: bench/gguf_reader.py decodes GGUF tensors with it (the lit
  # feature `numpy`; without it those tests are UNSUPPORTED).
  python3-numpy
  # Vulkan loader, headers and Mesa's lavapipe (Vulkan on the CPU).
  libvulkan-dev mesa-vulkan-drivers vulkan-tools spirv-tools
  # ROCm device bitcode for the ROCDL target.
  rocm-device-libs
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
