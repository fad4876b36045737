set -u
W=/tmp/w23; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run23.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
for set in attn-sync attn-sync2; do
  for a in $D/$set/art/nvvm-*/; do echo "== $a"; timeout 40 $B/cachet-runner $a --check --compare-rewrites; done > $W/check-$set.log 2>&1
done; s
grep -aoh "PASS\|FAIL.*\|byte-identical\|DIFFERENT.*\|rror.*" $W/check-*.log | sort | uniq -c
for i in 1 2; do for x in att0 sync s32 s128 sr2; do
  timeout 100 $B/cachet-bench $D/$x --repeat=10 --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
done; done
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
grep -aH "^| " $W/*.log | grep -v -- "---\|case" | grep -v "kernel\|tg\|copy"
grep -ai "sdpa" $W/torch.log
