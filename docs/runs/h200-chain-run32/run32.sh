set -u
W=/tmp/w32; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run32.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
for a in $D/tg/tg-*/; do timeout 100 $B/cachet-runner $a --inputs=random:1 --check --compare-rewrites 2>&1 | grep -v "^  arg"; done > $W/check.log 2>&1; s
timeout 80 $B/cachet-bench $D/tg --repeat=20 --json=$W/tg-1.json > $W/tg-1.log 2>&1; s
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
timeout 80 $B/cachet-bench $D/tg --repeat=20 --json=$W/tg-2.json > $W/tg-2.log 2>&1; s
grep -a "check\|identical\|DIFF\|rror" $W/check.log | cut -c1-160
grep -aH "^| " $W/tg-*.log $W/torch.log | grep -v -- "---\|case" | grep -v "attention"
