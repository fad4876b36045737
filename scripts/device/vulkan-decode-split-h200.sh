#!/usr/bin/env bash
# One short call on the GPU server, NVIDIA's Vulkan driver: the SPIR-V
# decode kernel over q8_0 / q4_0 caches with 2 workgroups per compute unit
# (decode-workgroups-per-cu=2) against the default (4) at tg1 / tg4 @
# d4096 and d65536, in turns; and cachet-runner --repeat=3 (exit 139
# before the runner loaded each variant once).
#
# Prepared here: .device/sw2/{def,wpu2}-{4096,65536}: bench/make-suite.py
#   --target=spirv --only='@ dN' [--compile-options='attention-options=
#   {decode-workgroups-per-cu=2}'], the decode q8_0 / q4_0 cases kept;
#   build/bin -> .device/bin, build/lib/libcachet_runtime.so -> .device/lib.
#
#   scripts/device/vulkan-decode-split-h200.sh [ROUNDS]
#
# Logs and JSON: $OUT/split.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/split; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
s() { tar czf $OUT/split.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
art=$(ls -d $D/sw2/def-4096/decode-q8_0-tg1-*/ | head -1)
timeout 60 $B/cachet-runner $art --repeat=3 > $W/repeat.log 2>&1; echo "rc $?" >> $W/repeat.log
s
for r in $(seq ${1:-2}); do
  for d in 4096 65536; do for v in def wpu2; do
    timeout 60 $B/cachet-bench $D/sw2/$v-$d --repeat=10 --json=$W/$v-$d-$r.json > $W/$v-$d-$r.log 2>&1
  done; done
  s
done
