set -u
W=/tmp/w26; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run26.tgz -C $W .; }
for x in tgoff tglpl8 tglpl2 tgrpb2 tgrps2 tgrpb8 tgsep; do
  A=$(ls -d $D/$x/tg-*/ | head -1)
  timeout 100 ncu --clock-control none --launch-count 24 --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active $B/cachet-runner $A --inputs=random:1 --repeat=1 > $W/ncu-$x.txt 2>&1; s
  echo "== $x"; grep -a "decode_chain_kernel (\|duration\|bytes_read\|pct_of_peak_sustained_elapsed" $W/ncu-$x.txt | awk '/decode_chain_kernel \(/{printf "\n%s", $2} /duration/{printf " %s us", $3} /bytes_read/{printf " %s %s", $3, $2} /elapsed/{printf " %s%%", $3}' | head -30; echo
done
