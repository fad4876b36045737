#!/usr/bin/env bash
# One device call for the kernels no GPU has run yet (sessions of
# 2026-12-07): the mma GEMM's first check and A/B, with the driver's
# cooperative-matrix shapes (gemm-mma-h200.sh), the tiled attention's checks
# and suites (attention-tiled-h200.sh with QUICK=1: no model), then the f16
# 8B model with and without the mma GEMM (vulkan-f16-model-h200.sh). The
# artifacts of each are prepared as their headers say; carry .device and
# .gl.
#
#   scripts/device/tiled-and-mma-h200.sh
#
# Logs: $OUT/gm.tgz, $OUT/tiled.tgz and $OUT/f16.tgz.
set -u
here=$(dirname "$0")
timeout 130 bash "$here/gemm-mma-h200.sh" 5
QUICK=1 timeout 215 bash "$here/attention-tiled-h200.sh"
T=105 timeout 215 bash "$here/vulkan-f16-model-h200.sh"
