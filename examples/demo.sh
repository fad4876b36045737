#!/usr/bin/env bash
# The cachet demo: compiles the example decoder pieces for the default Vulkan
# device (lavapipe where there is no GPU), runs them, checks them against the
# CPU reference, compares cachet's rewrites off and on, and prints what each
# rewrite did. Usage: examples/demo.sh BUILD_BIN_DIR
# CACHET_PROFILE picks the device profile the rewrites decide from (default
# lavapipe).
set -uo pipefail
bin=${1:?usage: demo.sh BUILD_BIN_DIR}
here=$(cd "$(dirname "$0")" && pwd)
profile=${CACHET_PROFILE:-lavapipe}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

status=0
printf '%-24s %-8s %-15s %s\n' "example" "check" "off vs on" "what the rewrites did"
for pair in attention_q8_0_prefill:attention_q8_0_prefill \
            decode_matvec_chain:decode_layer \
            prefill_linear_bf16:prefill_linear; do
  example=${pair%%:*} entry=${pair##*:}
  out="$log/$example.out" err="$log/$example.err"
  "$bin/cachet-run" "$here/$example.mlir" --entry="$entry" --profile="$profile" \
      --check --compare-rewrites >"$out" 2>"$err"
  rc=$?
  [ "$rc" -eq 0 ] || status=1
  check=$(grep -c ': PASS$' "$out"); total=$(grep -c '^check result' "$out")
  same=$(grep -c ': byte-identical' "$out"); results=$(grep -c '^rewrites off vs on' "$out")
  # cachet-run compiles with the rewrites off and on: count each attention
  # (its file:line:col) once.
  raised=$(grep 'remark: cachet-raise-attention: raised' "$err" |
           cut -d: -f1-3 | sort -u | wc -l)
  once=$(grep -oE 'cachet-dequant-once-kv: rewritten.*scratch [0-9]+ bytes' "$err" |
         grep -oE 'scratch [0-9]+ bytes' | paste -sd ',')
  padded=$(grep -oE 'cachet-pad-weight-rows: padded [0-9]+ of [0-9]+ weights, \+[0-9]+ B' "$err" |
           sed -E 's/.*padded ([0-9]+) of ([0-9]+) weights, \+([0-9]+) B/\1 of \2 weights padded (+\3 B)/')
  did=""
  [ "$raised" -gt 0 ] && did="$raised attention raised; "
  [ -n "$once" ] && did="${did}K/V dequantized once ($once); "
  [ -n "$padded" ] && did="${did}$padded"
  printf '%-24s %-8s %-15s %s\n' "$example" "$check/$total" "$same/$results same" "${did:-none}"
  if [ "$rc" -ne 0 ]; then
    echo "  cachet-run failed ($rc):"; sed 's/^/    /' "$err" | grep -v remark | tail -5
  fi
done

# A whole decoder: a tiny random llama model (written as GGUF, loaded back)
# compiled once into prefill and decode functions at a run-time position,
# weights and KV cache resident on the device; the prompt, then greedy
# decoding, step by step beside the CPU reference and the rewrites-off
# build.
echo
echo "cachet-generate --random=tiny (2 layers, q8_0 KV cache):"
gen="$log/generate"
"$bin/cachet-generate" --random=tiny --kv=q8_0-packed --prompt-length=6 \
    --n-predict=8 --ctx=32 --ubatch=4 --profile="$profile" --check \
    --compare-rewrites --cache-dir="$gen.cache" --remarks="$gen.remarks" \
    >"$gen.out" 2>"$gen.err"
rc=$?
[ "$rc" -eq 0 ] || status=1
sed 's/^/  /' "$gen.out"
raised=$(grep -c 'cachet-raise-attention: raised' "$gen.remarks")
once=$(grep -c 'cachet-dequant-once-kv: rewritten' "$gen.remarks")
notOnce=$(grep -oE 'cachet-dequant-once-kv: not rewritten: [^(;]*' "$gen.remarks" |
          sed 's/.*not rewritten: //' | sort -u | head -1)
padded=$(grep -oE 'cachet-pad-weight-rows: padded [0-9]+ of [0-9]+ weights' "$gen.remarks" |
         sed -E 's/.*padded ([0-9]+) of ([0-9]+) weights/\1 of \2/' | head -1)
echo "  rewrites: $raised attentions raised (prefill and decode, both builds);" \
     "dequantized once in $once${notOnce:+ (else: $notOnce)};" \
     "weights padded: ${padded:-none}"
if [ "$rc" -ne 0 ]; then
  echo "  cachet-generate failed ($rc):"; sed 's/^/    /' "$gen.err" | tail -5
fi

echo
grep -h '^device:' "$log"/*.out | head -1
echo "profile: $profile; check = results within tolerance of the CPU reference;"
echo "off vs on = results byte-identical with cachet's rewrites off and on."
exit $status
