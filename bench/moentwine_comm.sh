#!/usr/bin/env bash
# MoEntwine communication (docs/RESULTS.md "MoEntwine"): all-to-all (dispatch + combine) and all-reduce
# time per decode step, baseline mapping against ER-mapping, uniform gating, 256 tokens per attention
# TP group, flow fidelity, one step. Not a test. Weights at INT8 (--weight-bytes 1: experts, and here
# attention too), activations FP16.
# Usage: bench/moentwine_comm.sh [path/to/nmpsim]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
col() { awk -F, -v s="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == s { print $c[k] }' "$1"; }
printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' hardware TP model "all-to-all base us" "all-to-all ER us" \
  "ER / base" "all-reduce base us" "all-reduce ER us" "TBT ER / base"
echo "|---|---|---|---|---|---|---|---|---|"
for cfg in wsc-4x4:4 wsc-6x6:4 wsc-8x8:16; do
  hw=${cfg%%:*} tp=${cfg##*:}
  side=${hw#wsc-}; side=${side%%x*}
  batch=$(( 256 * side * side / tp ))
  for model in deepseek-v3 qwen3-235b-a22b deepseek-v2 dbrx mixtral-8x22b; do
    "$BIN" run --hw "$hw" --attn-tp "$tp" --model "$model" --skew 0 --batch "$batch" --steps 1 --weight-bytes 1 \
      --fidelity flow --strategy moentwine-baseline,moentwine-er --no-plots --quiet --out "$tmp/r"
    s="$tmp/r/summary.csv"
    awk -v hw="$hw" -v tp="$tp" -v m="$model" -v ab="$(col "$s" moentwine-baseline moe_comm_us)" \
      -v ae="$(col "$s" moentwine-er moe_comm_us)" -v rb="$(col "$s" moentwine-baseline allreduce_us)" \
      -v re="$(col "$s" moentwine-er allreduce_us)" -v tb="$(col "$s" moentwine-baseline mean_tbt_us)" \
      -v te="$(col "$s" moentwine-er mean_tbt_us)" \
      'BEGIN { printf "| %s | %s | %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.3f |\n", hw, tp, m, ab, ae, ae / ab, rb, re, te / tb }'
  done
done
