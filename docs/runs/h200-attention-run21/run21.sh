set -u
W=$OUT; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
for i in 1 2; do for s in att att0; do
  timeout 120 $B/cachet-bench $D/$s --repeat=10 --json=$W/$s-$i.json > $W/$s-$i.log 2>&1
done; done
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1
grep -aH "^| " $W/att*.log $W/torch.log | grep -v -- "---\|case" | grep -v "kernel\|tg\|copy"
