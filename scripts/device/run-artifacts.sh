#!/usr/bin/env bash
# Runs cachet artifacts on a GPU server that has no MLIR: the runtime-only
# runner checks each against its CPU reference, compares rewrites off and on
# byte for byte and times both. Usage (from the repository root there):
#
#   scripts/device/run-artifacts.sh DIR [runner options...]
#
# DIR holds bin/cachet-runner, lib/libcachet_runtime.so and art/*/ (artifact
# folders from `cachet-run --emit=...`). A .gl/ folder of Debian packages
# with the Vulkan loader is unpacked first where the server lacks one.
set -u
dir=${1:?usage: run-artifacts.sh DIR [runner options...]}
shift
if [ -d .gl ] && ! ldconfig -p | grep -q libvulkan.so.1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
command -v nvidia-smi >/dev/null && nvidia-smi -L
status=0
for art in "$dir"/art/*/; do
  echo "== $(basename "$art")"
  "$dir/bin/cachet-runner" "$art" "$@" || status=1
done
exit $status
