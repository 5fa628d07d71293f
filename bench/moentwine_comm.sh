#!/usr/bin/env bash
# MoEntwine communication (docs/RESULTS.md "MoEntwine"): all-to-all (dispatch + combine) and all-reduce
# time per decode step, baseline mapping against ER-mapping on one wafer, and ER over all dies (the
# issue's baseline) against HER-mapping on the 4-wafer system; uniform gating, 256 tokens per
# attention TP group, flow fidelity, one step. Not a test. Weights at INT8 (--weight-bytes 1: experts, and here
# attention too), activations FP16.
# Usage: bench/moentwine_comm.sh [path/to/nmpsim]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
col() { awk -F, -v s="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == s { print $c[k] }' "$1"; }
printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' hardware TP model "all-to-all base us" "all-to-all new us" \
  "new / base" "all-reduce base us" "all-reduce new us" "TBT new / base"
echo "(base / new: moentwine-baseline / moentwine-er on one wafer; moentwine-er / moentwine-her on four)"
echo "|---|---|---|---|---|---|---|---|---|"
for cfg in wsc-4x4:4:16 wsc-6x6:4:36 wsc-8x8:16:64 wsc-4wafer-8x8:16:256; do  # hardware:TP:dies
  IFS=: read -r hw tp dies <<< "$cfg"
  base=moentwine-baseline new=moentwine-er
  [ "$hw" = wsc-4wafer-8x8 ] && base=moentwine-er new=moentwine-her
  batch=$(( 256 * dies / tp ))
  for model in deepseek-v3 qwen3-235b-a22b deepseek-v2 dbrx mixtral-8x22b; do
    "$BIN" run --hw "$hw" --attn-tp "$tp" --model "$model" --skew 0 --batch "$batch" --steps 1 --weight-bytes 1 \
      --fidelity flow --strategy "$base,$new" --no-plots --quiet --out "$tmp/r"
    s="$tmp/r/summary.csv"
    awk -v hw="$hw" -v tp="$tp" -v m="$model" -v ab="$(col "$s" "$base" moe_comm_us)" \
      -v ae="$(col "$s" "$new" moe_comm_us)" -v rb="$(col "$s" "$base" allreduce_us)" \
      -v re="$(col "$s" "$new" allreduce_us)" -v tb="$(col "$s" "$base" mean_tbt_us)" \
      -v te="$(col "$s" "$new" mean_tbt_us)" \
      'BEGIN { printf "| %s | %s | %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.3f |\n", hw, tp, m, ab, ae, ae / ab, rb, re, te / tb }'
  done
done
