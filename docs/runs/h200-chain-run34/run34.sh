set -u
W=/tmp/w34; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run34.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
LD_TRACE_LOADED_OBJECTS=1 $B/cachet-bench | grep cachet > $W/libs.log
LD_LIBRARY_PATH=$D/oldlib:$LD_LIBRARY_PATH LD_TRACE_LOADED_OBJECTS=1 $B/cachet-bench | grep cachet >> $W/libs.log
for S in tg tgp0 tgs0 tgp; do for a in $D/$S/tg-*/; do echo "== $S"; timeout 100 $B/cachet-runner $a --inputs=random:1 --check --compare-rewrites 2>&1 | grep -v "^  arg"; done; done > $W/check.log 2>&1; s
for i in 1 2; do
  timeout 80 $B/cachet-bench $D/tg --repeat=20 --json=$W/tg-new-$i.json > $W/tg-new-$i.log 2>&1; s
  LD_LIBRARY_PATH=$D/oldlib:$LD_LIBRARY_PATH timeout 80 $B/cachet-bench $D/tg --repeat=20 --json=$W/tg-old-$i.json > $W/tg-old-$i.log 2>&1; s
  for S in tgp0 tgs0 tgp; do timeout 80 $B/cachet-bench $D/$S --repeat=20 --json=$W/$S-$i.json > $W/$S-$i.log 2>&1; s; done
done
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
timeout 80 $B/cachet-bench $D/tg --repeat=20 --json=$W/tg-new-3.json > $W/tg-new-3.log 2>&1; s
cat $W/libs.log
grep -a "== \|check\|identical\|DIFF\|rror" $W/check.log | cut -c1-160
grep -aH "^| " $W/*.log | grep -v -- "---\|case" | grep -v "attention" | cut -c1-220
