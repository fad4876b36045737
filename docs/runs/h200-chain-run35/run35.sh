set -u
W=/tmp/w35; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run35.tgz -C $W .; }
which nsys ncu > $W/tools.log 2>&1; ls /usr/local/cuda*/bin 2>/dev/null | grep -i nsys >> $W/tools.log
for i in 1 2; do timeout 120 $D/pdl/pdl > $W/pdl-$i.log 2>&1; done; s
cat $W/tools.log $W/pdl-*.log
