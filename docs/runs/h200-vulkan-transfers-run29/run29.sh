set -u
W=/tmp/w29; mkdir -p $W; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
s() { tar czf $OUT/run29.tgz -C $W .; }
nvidia-smi -L > $W/device.log 2>&1
mkdir -p /work/main/build/runtime/test/shaders && cp $D/shaders/*.spv /work/main/build/runtime/test/shaders/
timeout 120 $B/cachet-runtime-test --skip-corrupt-modules > $W/runtime-test.log 2>&1; echo "exit $?" >> $W/runtime-test.log
timeout 120 $B/cachet-runtime-test --skip-corrupt-modules --force-staging > $W/runtime-test-staging.log 2>&1; echo "exit $?" >> $W/runtime-test-staging.log
$B/cachet-runtime-test --coop-module=$D/coop-matmul.spv > $W/coop-matmul.log 2>&1; s
for a in $D/vkattn/art/spirv-mma-*/; do
  case $a in *-d448/ | *-odd-*/) ;; *) continue ;; esac
  echo "== $a"; timeout 60 $B/cachet-runner $a --check --compare-rewrites; echo "exit $?"
done > $W/attn-check.log 2>&1; s
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks_throttle_reasons.active --format=csv,noheader -lms 100 > $W/clocks.csv 2>&1 &
P=$!
for i in 1 2; do for rt in old new; do for kv in f16 q8_0; do
  sleep 4
  if [ $rt = old ]; then BENCH="env LD_LIBRARY_PATH=$D/old/lib $D/old/cachet-bench"; else BENCH=$B/cachet-bench; fi
  echo "$(date +%T.%N) start $rt $kv $i" >> $W/marks.txt
  timeout 150 $BENCH $D/spirv-mma --filter="$kv pp512 @ d32768" --warmup=1 --repeat=5 --json=$W/$rt-$kv-$i.json > $W/$rt-$kv-$i.log 2>&1
  echo "$(date +%T.%N) end $rt $kv $i" >> $W/marks.txt
  s
done; done; done
kill $P; s
grep -ac "^PASS" $W/runtime-test*.log; grep -a "^FAIL\|exit\|failure\|mgpuMemcpy" $W/runtime-test*.log
grep -aoh "PASS\|FAIL.*\|byte-identical\|DIFFERENT.*\|exit [0-9]*" $W/attn-check.log | sort | uniq -c
python3 - <<'PY'
import json,glob
for f in sorted(glob.glob('/tmp/w29/*-*-[12].json')):
    for c in json.load(open(f))['cases']:
        print(f.split('/')[-1], c['label'], c['test'], c['identical'], *[(v, c[v]['kernels_ms']['median'], c[v]['device_ms']['median'], c[v]['device_ms']['min'], c[v]['device_ms']['max']) for v in ('off','on')])
PY
cat $W/marks.txt
awk -F, '{print $2}' $W/clocks.csv | uniq -c | tr '\n' ';'
