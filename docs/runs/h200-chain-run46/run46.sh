# Final commit c1920f8: the chain (auto: PDL) against prefetch=off and cuBLAS, one lease.
set -u
W=/tmp/w46; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run46.tgz -C $W .; }
for S in tg tgoff; do for a in $D/$S/tg-*/; do echo "== $S"; timeout 60 $B/cachet-runner $a --inputs=random:1 --check --compare-rewrites 2>&1 | grep -v "^  arg"; done; done > $W/check.log 2>&1; s
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_anchors.py 20 --json=$W/torch.json > $W/torch.log 2>&1; s
for i in 1 2; do for S in tg tgoff; do timeout 50 $B/cachet-bench $D/$S --repeat=20 --json=$W/$S-$i.json > $W/$S-$i.log 2>&1; s; done; done
grep -a "== \|check\|identical\|DIFF\|rror" $W/check.log | cut -c1-100
grep -a "copy\|tg" $W/torch.log | grep "^| " | cut -c1-160
grep -aH "^| " $W/tg*.log | grep -v -- "---\|case" | cut -c1-200
