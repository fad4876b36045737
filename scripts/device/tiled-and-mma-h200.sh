#!/usr/bin/env bash
# One device call for the two kernels no GPU has run yet (sessions of
# 2026-12-07): the tiled attention's checks and suites
# (attention-tiled-h200.sh with QUICK=1: no model) and the mma GEMM's first
# check and A/B (gemm-mma-h200.sh). The artifacts of both are prepared as
# their headers say; carry .device and .gl.
#
#   scripts/device/tiled-and-mma-h200.sh
#
# Logs: $OUT/tiled.tgz and $OUT/gm.tgz.
set -u
here=$(dirname "$0")
QUICK=1 timeout 280 bash "$here/attention-tiled-h200.sh"
timeout 300 bash "$here/gemm-mma-h200.sh" 5
