set -u
W=/tmp/w30; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run30.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
for a in $D/tgp8/tg-*/; do timeout 100 $B/cachet-runner $a --inputs=random:1 --check --compare-rewrites 2>&1 | grep -v "^  arg"; done > $W/check.log 2>&1; s
for i in 1 2 3; do for x in tgoff tgp8; do
  timeout 80 $B/cachet-bench $D/$x --repeat=20 --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
done; done
grep -a "check\|identical\|DIFF\|rror" $W/check.log | cut -c1-160
grep -aH "^| " $W/*.log | grep -v -- "---\|case"
