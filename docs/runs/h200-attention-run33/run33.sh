set -u
W=/tmp/w33; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run33.tgz -C $W .; }
for a in $D/attn128/art/nvvm-*/; do echo "== $a"; timeout 40 $B/cachet-runner $a --check --compare-rewrites; done > $W/check.log 2>&1; s
for i in 1 2; do for x in att att128; do
  timeout 60 $B/cachet-bench $D/$x --repeat=10 --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
done; done
grep -ac "PASS" $W/check.log; grep -ac "byte-identical" $W/check.log; grep -a "FAIL\|DIFFERENT\|rror:" $W/check.log | head -5
grep -aH "^| " $W/att*.log | grep -v -- "---\|case"
