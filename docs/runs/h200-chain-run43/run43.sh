# Same lease as run 42: PyTorch/cuBLAS anchors, then default vs PDL trigger=start again.
set -u
W=/tmp/w43; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run43.tgz -C $W .; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv > $W/smi.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
for i in 1 2; do for S in tg ps; do timeout 50 $B/cachet-bench $D/$S --repeat=20 --json=$W/$S-$i.json > $W/$S-$i.log 2>&1; s; done; done
cat $W/smi.log; grep -i "copy\|chain\|graph\|tg" $W/torch.log | head -20
grep -aH "^| " $W/*.log | grep -v -- "---\|case" | cut -c1-200
