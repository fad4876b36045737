# Weight loads before the PDL wait (pdl-wait=after-weight-loads), weights-first loop bodies; suites built at 27b1176 + the change (tg0: 27b1176 as is).
set -u
W=/tmp/w44; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run44.tgz -C $W .; }
for S in tg ps pw pwe pwp; do for a in $D/$S/tg-*/; do echo "== $S"; timeout 60 $B/cachet-runner $a --inputs=random:1 --check --compare-rewrites 2>&1 | grep -v "^  arg"; done; done > $W/check.log 2>&1; s
for i in 1 2; do
  for S in tg0 tg ps pw pwe pwp; do timeout 50 $B/cachet-bench $D/$S --repeat=20 --json=$W/$S-$i.json > $W/$S-$i.log 2>&1; s; done
done
grep -a "== \|check\|identical\|DIFF\|rror" $W/check.log | cut -c1-100
grep -aH "^| " $W/*.log | grep -v -- "---\|case" | cut -c1-200
