#!/usr/bin/env bash
# One call (run 90): the mma-sync decode kernel with the splits' merge in
# the last workgroup of each KV head to finish (decode-fold-merge, the
# default) against the merge in a second kernel, on the H200 (CUDA).
#
#   scripts/device/decode-merge-h200.sh [REPEAT] [ROUNDS]
#
# Checks every case of .device/fm (the default) and the random decode
# shapes on mma.sync of .device/fz92 / fz93 (bench/make-attention-fuzz.py
# --decode --seed 92 / 93 with decode-mma-sync=1, the cases that took
# mma.sync) against the CPU reference, rewrites off and on byte-identical,
# and with --repeat=3 a call after the timed ones byte-identical to the
# first (the arrival counts back at zero); then times .device/fm and
# .device/nf (decode-fold-merge=false) in turns for ROUNDS rounds, then
# PyTorch SDPA (bench/torch_anchors.py).
#
# Suites: bench/make-suite.py --preset=h200 --target=nvvm --only=decode
# (fm; nf with --compile-options="attention-options={decode-fold-merge=false}").
# .device/bin and .device/lib from build/. Logs: $OUT/merge.tgz.
set -u
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
W=/tmp/wm; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. "$(dirname "$0")/env.sh"
R=${1:-10}; N=${2:-2}
s() { tar czf $OUT/merge.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
checkr() {
  for c in "$@"; do
    echo "== $c"
    timeout 60 $B/cachet-runner $c --check --compare-rewrites --repeat=3 2>&1 | grep -a "check\|rewrites off vs\|after the timed\|error"
  done
}
checkr $D/fm/*/ > $W/fm-check.log 2>&1; s
checkr $D/fz9*/art/*/ > $W/fz-check.log 2>&1; s
for i in $(seq 1 $N); do
  for x in fm nf; do
    timeout 80 $B/cachet-bench $D/$x --repeat=$R --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
  done
done
PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_anchors.py $R --json=$W/torch.json > $W/torch.log 2>&1; s
