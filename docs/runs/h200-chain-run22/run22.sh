set -u
W=$OUT; D=.device; B=$D/bin; dir=$D
. scripts/device/env.sh
for i in 1 2; do for s in tg tg-rpb8 tg-rpb2 tg-lpl2 tg-lpl8 tg-rps2; do
  timeout 60 $B/cachet-bench $D/$s --repeat=20 > $W/$s-$i.log 2>&1
done; done
for f in $W/*.log; do echo "$(basename $f) $(grep -a '^| bf16' $f)"; done
