set -u
W=$OUT; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,clocks_throttle_reasons.active --format=csv -lms 100 > $W/clocks.csv 2>&1 &
P=$!
timeout 200 $B/cachet-bench $D/spirv-mma --filter="f16 pp512 @ d32768" --repeat=20 --json=$W/f16.json > $W/f16.log 2>&1
timeout 100 $B/cachet-bench $D/spirv-mma --filter="q8_0 pp512 @ d4096" --repeat=10 --json=$W/q8.json > $W/q8.log 2>&1
kill $P
python3 - <<'PY'
import json,os
for f in ['f16','q8']:
    d=json.load(open(os.environ['OUT']+'/'+f+'.json'))
    for c in d['cases']:
        print(f, c['label'], c['test'], 'off', [round(x,2) for x in c['off']['kernels_ms']['samples']])
        print(f, c['label'], c['test'], 'on ', [round(x,2) for x in c['on']['kernels_ms']['samples']])
PY
awk -F, 'NR>1{print $2,$3,$4,$5,$6}' $W/clocks.csv | uniq -c | head -60
