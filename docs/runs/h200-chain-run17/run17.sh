set -u
W=$OUT; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
nvidia-smi -L > $W/smi.txt
for s in tg tgsep; do for a in $D/$s/tg-*/; do timeout 100 $B/cachet-runner $a --inputs=random:1 --check --compare-rewrites 2>&1 | grep -v "^  arg"; done; done > $W/check.log 2>&1
for i in 1 2; do
for s in tg tgsep tgpdl; do timeout 80 $B/cachet-bench $D/$s --repeat=20 --json=$W/$s-$i.json > $W/$s-$i.log 2>&1; done
done
timeout 80 $B/cachet-bench $D/k --repeat=20 --json=$W/kernel.json > $W/kernel.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1
cat $W/check.log | grep -i "check\|identical\|DIFF\|error"
grep -aH "^| " $W/*.log | grep -v -- "---\|case"
