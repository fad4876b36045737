#!/usr/bin/env bash
# One call: whether SPIR-V may take the decode kernel by default. On
# NVIDIA's Vulkan driver: the decode cases at d65536 (.device/dv65) checked
# against the CPU reference (rewrites off and on byte-identical), then the
# d32768 decode cases with the decode kernel (.device/dv) against what
# SPIR-V's auto runs today (.device/dva: the scalar flash-attention kernel),
# in turns.
#
#   scripts/device/vulkan-decode-h200.sh [REPEAT]
#
# Suites: bench/make-suite.py --preset=h200 --target=spirv --only='@ dN'
# (dv65: N=65536, dv: 32768, both --attention-kernel=decode; dva: 32768,
# auto), their pp512 cases removed from suite.json. .device/bin and
# .device/lib from build/, the Vulkan loader from .gl/. Logs:
# $OUT/vk.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/wv; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-5}
s() { tar czf $OUT/vk.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1; vulkaninfo --summary > $W/vulkan.log 2>&1
check $D/dv65/*/ > $W/dv65-check.log 2>&1; s
for x in dv dva; do
  timeout 60 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x.json > $W/$x.log 2>&1; s
done
