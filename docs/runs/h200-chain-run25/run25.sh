set -u
W=/tmp/w25; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run25.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
for x in tgpdl0; do for a in $D/$x/tg-*/; do timeout 100 $B/cachet-runner $a --inputs=random:1 --check --compare-rewrites 2>&1 | grep -v "^  arg"; done; done > $W/check.log 2>&1; s
for i in 1 2; do for x in tgoff tgpdl0 tgpdl; do
  timeout 80 $B/cachet-bench $D/$x --repeat=20 --json=$W/$x-$i.json > $W/$x-$i.log 2>&1; s
done; done
A=$(ls -d $D/tgoff/tg-*/ | head -1)
timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active $B/cachet-runner $A --inputs=random:1 --repeat=1 > $W/ncu-chain.txt 2>&1; s
grep -a "check\|identical\|DIFF\|rror" $W/check.log | cut -c1-160
grep -aH "^| " $W/*.log | grep -v -- "---\|case"
grep -a "_kernel\|duration\|bytes_read\|pct_of_peak" $W/ncu-chain.txt | head -80
