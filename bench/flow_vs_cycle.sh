#!/usr/bin/env bash
# How closely the flow-level model (--fidelity flow) tracks the cycle-level SystemC model:
# runs the same configurations in both modes and reports, per quantity (TBT, MoE communication,
# all-reduce, MoE compute), R^2 of flow against cycle and the largest relative error.
# Usage: bench/flow_vs_cycle.sh [path/to/nmpsim]   (a few minutes; not a test)
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows="$tmp/rows.txt"
: > "$rows"
get() {  # get DIR STRATEGY COLUMN-NAME   (from DIR/summary.csv)
  awk -F, -v s="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $1 == s { print $col[k] }' "$1/summary.csv"
}
for hw in hdmoe-4x4-2.5t75g hdmoe-4x4-5t50g hdmoe-4x4-10t25g hdmoe-4x8-5t50g; do
  for model in mixtral-8x7b deepseek-v2-lite; do
    for batch in 16 64; do
      for fid in cycle flow; do
        "$BIN" run --hw "$hw" --model "$model" --batch "$batch" --steps 1 --fidelity "$fid" --no-plots --quiet \
          --out "$tmp/$fid"
      done
      for s in tp ep cb; do
        line="$hw $model $batch $s"
        for key in mean_tbt_us moe_comm_us allreduce_us moe_compute_us; do
          line="$line $(get "$tmp/cycle" "$s" "$key") $(get "$tmp/flow" "$s" "$key")"
        done
        echo "$line" >> "$rows"
      done
    done
  done
done
printf '%-18s %-16s %5s %-3s %12s %12s %12s %12s\n' hardware model batch st tbt_cycle tbt_flow comm_cycle comm_flow
awk '{ printf "%-18s %-16s %5s %-3s %12.1f %12.1f %12.1f %12.1f\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$rows"
echo
awk '
function report(name, c, f,    i, mean, sst, sse, maxerr, e) {
  mean = 0; for (i = 1; i <= n; i++) mean += c[i]; mean /= n
  sst = 0; sse = 0; maxerr = 0
  for (i = 1; i <= n; i++) {
    sst += (c[i] - mean)^2; sse += (c[i] - f[i])^2
    if (c[i] > 0) { e = (f[i] - c[i]) / c[i]; if (e < 0) e = -e; if (e > maxerr) maxerr = e }
  }
  printf "%-16s R^2 = %.4f   max relative error = %.1f%%   (%d runs)\n", name, 1 - sse / sst, 100 * maxerr, n
}
{ n++; tc[n] = $5; tf[n] = $6; cc[n] = $7; cf[n] = $8; ac[n] = $9; af[n] = $10; mc[n] = $11; mf[n] = $12 }
END { report("TBT", tc, tf); report("MoE comm", cc, cf); report("all-reduce", ac, af); report("MoE compute", mc, mf) }' "$rows"
