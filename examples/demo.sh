#!/usr/bin/env bash
# The cachet demo: runs cachet's pipeline over the example decoder pieces and
# prints what each step did. Usage: examples/demo.sh BUILD_BIN_DIR
set -euo pipefail
bin=${1:?usage: demo.sh BUILD_BIN_DIR}
here=$(cd "$(dirname "$0")" && pwd)
profile=${CACHET_PROFILE:-lavapipe}

echo "cachet demo: device profile '$profile'"
echo
for example in attention_q8_0_prefill decode_matvec_chain prefill_linear_bf16; do
  input="$here/$example.mlir"
  echo "== $example.mlir"
  out=$("$bin/cachet-opt" "$input" -cachet-attach-device=profile="$profile" \
        -cachet-pad-weight-rows -mlir-pass-statistics 2>&1)
  ops=$(grep -oE '^ +%[^=]+= ([a-z_]+\.[a-z_]+)' <<<"$out" |
        sed -E 's/.*= //' | sort | uniq -c | sort -rn | awk '{printf "%s x%s  ", $2, $1}')
  echo "   ops: $ops"
  sed -nE 's/.*#cachet.device<name = "([^"]+)", vendor = "([^"]+)", arch = "([^"]+)".*/   profile attached: \1 (\2 \3)/p' <<<"$out"
  sed -nE 's/.*remark: cachet-pad-weight-rows: (padded [0-9]+ of [0-9]+ weights.*)/   weight rows: \1/p' <<<"$out"
  echo
done
