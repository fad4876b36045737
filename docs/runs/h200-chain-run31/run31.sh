set -u
W=/tmp/w31; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run31.tgz -C $W .; }
for i in 1 2; do for x in tgp8 tgp16 tgp8l2; do
  timeout 80 $B/cachet-bench $D/$x --repeat=20 --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
done; done
grep -aH "^| " $W/*.log | grep -v -- "---\|case"
