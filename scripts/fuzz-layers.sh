#!/usr/bin/env bash
# Compiles and runs random small Llama layers written by cachet-gen.
#
# scripts/fuzz-layers.sh [--build=DIR] [--seeds=LIST] [--timeout=SECONDS]
#                        [--keep=DIR] [--gen-options="more cachet-gen options"]
#                        [-- extra cachet-run options]
#
# Each seed of LIST (default 1..8) draws the shapes (heads, GQA ratio, head
# dimension, hidden and MLP sizes, new and cached tokens, spare cache rows)
# and the variants (f16 / bf16, KV format, product and softmax spellings,
# argument or constant weights), writes the layer with cachet-gen and runs
#   cachet-run FILE --entry=layer --check --compare-rewrites
# under a time cap. The same seed gives the same case everywhere (the draws
# come from the seed alone, not from bash's RANDOM). One line per case: PASS,
# FAIL (with the first error line) or TIMEOUT, then a summary; the exit status
# is 1 when a case did not pass. --keep=DIR keeps every case's IR and log.
set -u

build=build
seeds="1 2 3 4 5 6 7 8"
timeout_s=120
keep=""
genopts=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
  --build=*) build="${1#--build=}" ;;
  --seeds=*) seeds="${1#--seeds=}"; seeds="${seeds//,/ }" ;;
  --timeout=*) timeout_s="${1#--timeout=}" ;;
  --keep=*) keep="${1#--keep=}" ;;
  --gen-options=*) genopts="${1#--gen-options=}" ;;
  --) shift; extra=("$@"); break ;;
  -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "fuzz-layers.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
gen="$build/bin/cachet-gen"
run="$build/bin/cachet-run"
for tool in "$gen" "$run"; do
  [ -x "$tool" ] || { echo "fuzz-layers.sh: $tool not found (--build=DIR)" >&2; exit 2; }
done
work="${keep:-$(mktemp -d)}"
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

# Knuth's 64-bit linear congruential generator (bash arithmetic wraps at 64
# bits), high bits out: the draws depend on the seed only. No subshells: they
# would lose the state.
state=0
pick() { # pick WORD...: sets v to one of the words
  local words=("$@")
  state=$(( state * 6364136223846793005 + 1442695040888963407 ))
  v="${words[$(( ((state >> 33) & 0x7fffffff) % ${#words[@]} ))]}"
}

pass=0; fail=0; timeouts=0
for seed in $seeds; do
  state=$seed
  pick 0; pick 0
  pick 1 2; kvheads=$v
  pick 1 2 4; heads=$((kvheads * v))
  pick f16 bf16 q8_0 q8_0 q4_0 q8_0-packed; kv=$v
  case $kv in f16|bf16) pick 16 32 64 ;; *) pick 32 64 ;; esac; headdim=$v
  pick 32 64 96; hidden=$v
  pick 32 64 160; ffn=$v
  pick 1 1 2 3 5; tokens=$v
  pick 0 1 4 7; past=$v
  pick 0 0 3; spare=$v
  pick f16 f16 bf16; dtype=$v
  if [ "$tokens" = 1 ]; then pick named generic matvec; else pick named generic; fi
  matmul=$v
  pick named decomposed; softmax=$v
  pick args args constants; weights=$v
  # Packed projection weights (drawn last: the earlier draws of a seed stay
  # what they were), where every row holds whole blocks of 32.
  pick dense dense q8_0 q4_0 q4_1 q5_0 iq4_nl; wformat=$v
  if [ "$weights" != args ] || [ $((hidden % 32)) != 0 ] || \
     [ $((ffn % 32)) != 0 ] || [ $((heads * headdim % 32)) != 0 ]; then
    wformat=dense
  fi
  opts="--hidden=$hidden --heads=$heads --kv-heads=$kvheads --head-dim=$headdim \
--ffn=$ffn --tokens=$tokens --past=$past --max-seq=$((past + tokens + spare)) \
--dtype=$dtype --kv=$kv --matmul=$matmul --softmax=$softmax --weights=$weights \
--weight-format=$wformat $genopts"
  file="$work/seed$seed.mlir"
  log="$work/seed$seed.log"
  # shellcheck disable=SC2086
  if ! "$gen" $opts -o "$file" 2>"$log"; then
    echo "FAIL    seed $seed: cachet-gen $opts: $(head -1 "$log")"
    fail=$((fail + 1))
    continue
  fi
  timeout "$timeout_s" "$run" "$file" --entry=layer --check --compare-rewrites \
    "${extra[@]}" >"$log" 2>&1
  status=$?
  if [ $status = 0 ]; then
    echo "PASS    seed $seed: $opts"
    pass=$((pass + 1))
  elif [ $status = 124 ]; then
    echo "TIMEOUT seed $seed: $opts (over ${timeout_s}s)"
    timeouts=$((timeouts + 1))
  else
    why=$(grep -m1 -E "error|FAIL|differ|cachet-run|cachet-runner|Assertion|Segmentation" "$log")
    echo "FAIL    seed $seed: $opts: exit $status: ${why:-$(tail -1 "$log")}"
    fail=$((fail + 1))
  fi
done
echo "fuzz-layers: $pass passed, $fail failed, $timeouts timed out"
[ $fail = 0 ] && [ $timeouts = 0 ]
