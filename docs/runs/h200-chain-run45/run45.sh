# Commit 9c672a6 (auto: PDL, trigger first, weight loads before the wait): the whole h200 suite and the PyTorch/cuBLAS anchors in one lease.
set -u
W=/tmp/w45; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run45.tgz -C $W .; }
for a in $D/tg/tg-*/; do timeout 60 $B/cachet-runner $a --inputs=random:1 --check --compare-rewrites 2>&1 | grep -v "^  arg"; done > $W/check.log 2>&1; s
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
timeout 200 $B/cachet-bench $D/full --repeat=20 --json=$W/full.json > $W/full.log 2>&1; s
for i in 1 2; do timeout 50 $B/cachet-bench $D/tg --repeat=20 --json=$W/tg-$i.json > $W/tg-$i.log 2>&1; s; done
grep -a "check\|identical\|DIFF\|rror" $W/check.log | cut -c1-100
grep -a "^| " $W/torch.log $W/full.log $W/tg-*.log | grep -v -- "---\|case" | cut -c1-220
