set -u
W=/tmp/w36; mkdir -p $W; D=.device
s() { tar czf $OUT/run36.tgz -C $W .; }
for i in 1 2; do timeout 200 $D/pdl/mv > $W/mv-$i.log 2>&1; s; done
cat $W/mv-*.log
