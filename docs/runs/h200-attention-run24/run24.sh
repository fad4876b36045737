set -u
W=/tmp/w24; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run24.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
for a in $D/attn/art/nvvm-*/; do echo "== $a"; timeout 40 $B/cachet-runner $a --check --compare-rewrites; done > $W/check.log 2>&1; s
grep -ac "PASS" $W/check.log; grep -ac "byte-identical" $W/check.log; grep -a "FAIL\|DIFFERENT\|rror:" $W/check.log | head
for f in d4096 d32768 d65536; do timeout 150 $B/cachet-bench $D/att --filter=$f --repeat=10 --json=$W/att-$f.json > $W/att-$f.log 2>&1; s; done
for i in 1 2; do for x in att occ; do timeout 60 $B/cachet-bench $D/$x --filter="f16 pp512 @ d32768" --repeat=10 --json=$W/ab-$x-$i.json > $W/ab-$x-$i.log 2>&1; s; done; done
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
grep -aH "^| " $W/*.log | grep -v -- "---\|case" | grep -v "kernel\|tg\|copy"
