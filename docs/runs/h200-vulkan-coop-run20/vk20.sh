set -u
W=$OUT; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks_throttle_reasons.active --format=csv,noheader -lms 100 > $W/clocks.csv 2>&1 &
P=$!
for d in d4096 d32768; do for kv in f16 q8_0 q4_0; do
  sleep 4
  echo "$(date +%T.%N) start $kv $d" >> $W/marks.txt
  timeout 100 $B/cachet-bench $D/spirv-mma --filter="$kv pp512 @ $d" --warmup=1 --repeat=5 --json=$W/$kv-$d.json > $W/$kv-$d.log 2>&1
  echo "$(date +%T.%N) end $kv $d" >> $W/marks.txt
done; done
kill $P
python3 - <<'PY' > $W/samples.txt
import json,os,glob
for f in sorted(glob.glob(os.environ['OUT']+'/*-d*.json')):
    for c in json.load(open(f))['cases']:
        for v in ('off','on'):
            print(c['label'], c['test'], v, c[v]['kernels_ms']['median'], [round(x,3) for x in c[v]['kernels_ms']['samples']])
PY
cat $W/samples.txt
cat $W/marks.txt
awk -F, '{print $2}' $W/clocks.csv | uniq -c | tr '\n' ';'
