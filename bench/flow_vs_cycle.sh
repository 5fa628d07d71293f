#!/usr/bin/env bash
# How closely flow fidelity tracks cycle fidelity, on the fixed validation set of
# bench/flow_vs_cycle.configs (15 configurations x tp, ep, cb, hdmoe = 60 runs, one step each).
# Reports per run TBT and MoE communication at both fidelities and each run's host time; then R^2 and
# the largest relative error of flow against cycle, whether both pick the same fastest strategy per
# configuration, whether both count the same bytes on every link, and the distribution of the flow
# speed-up. Draws a scatter plot (PNG) of flow against cycle. Not a test (a ctest case checks a subset).
#
# Usage: bench/flow_vs_cycle.sh [--bin PATH] [--out DIR] [--reuse-cycle] [--only LABEL,...] [--png FILE]
#                                [--configs FILE] [--strategies LIST]
#   --out DIR        keep every run's output under DIR/{cycle,flow}/LABEL (default: a scratch directory)
#   --reuse-cycle    with --out: reuse cycle outputs already in DIR (the cycle runs take most of the time)
#   --only L1,L2     only these configurations
#   --png FILE       the scatter plot (default: DIR/flow_vs_cycle.png, or none without --out)
#   --configs FILE   another validation set in the same format (default: bench/flow_vs_cycle.configs)
#   --strategies L   the strategies each configuration runs (default: tp,ep,cb,hdmoe)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/apps/nmpsim OUT="" REUSE=0 ONLY="" PNG="" CONFIGS=bench/flow_vs_cycle.configs STRATEGIES=tp,ep,cb,hdmoe
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --reuse-cycle) REUSE=1; shift ;;
    --only) ONLY=",$2,"; shift 2 ;;
    --png) PNG=$2; shift 2 ;;
    --configs) CONFIGS=$2; shift 2 ;;
    --strategies) STRATEGIES=$2; shift 2 ;;
    *) echo "usage: $0 [--bin PATH] [--out DIR] [--reuse-cycle] [--only LABEL,...] [--png FILE] [--configs FILE] [--strategies LIST]" >&2
       exit 2 ;;
  esac
done
[[ "$STRATEGIES" =~ ^[a-z0-9,-]+$ ]] || { echo "error: --strategies: expected a comma-separated list of strategy names, got '$STRATEGIES'" >&2; exit 2; }
[ -f "$CONFIGS" ] || { echo "error: $CONFIGS: no such configuration file" >&2; exit 2; }
[ -x "$BIN" ] || { echo "error: $BIN is not an executable (build first, or pass --bin)" >&2; exit 2; }
if [ -z "$OUT" ]; then
  OUT=$(mktemp -d)
  trap 'rm -rf "$OUT"' EXIT
else
  mkdir -p "$OUT"
  [ -z "$PNG" ] && PNG="$OUT/flow_vs_cycle.png"
fi
rows="$OUT/rows.txt"
: > "$rows"
col() {  # col CSV STRATEGY COLUMN-NAME
  awk -F, -v s="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == s { print $c[k] }' "$1"
}
link_diff() {  # largest |cycle - flow| link bytes of one strategy
  awk -F, -v s="$3" 'FNR == 1 { f++; next } $1 == s { k = $2 "-" $3; if (f == 1) a[k] = $9; else b[k] = $9 }
    END { m = 0; for (k in a) { d = a[k] - b[k]; if (d < 0) d = -d; if (d > m) m = d } for (k in b) if (!(k in a)) m = b[k]; print m }' \
    "$1" "$2"
}
n=0
while read -r label args; do
  case "$label" in ''|'#'*) continue ;; esac
  [ -n "$ONLY" ] && [[ "$ONLY" != *",$label,"* ]] && continue
  n=$((n + 1))
  for fid in cycle flow; do
    dir="$OUT/$fid/$label"
    if [ "$fid" = cycle ] && [ "$REUSE" = 1 ] && [ -f "$dir/summary.csv" ]; then continue; fi
    printf '%-10s %-5s ...\r' "$label" "$fid" >&2
    # shellcheck disable=SC2086  # the configuration's arguments are words
    "$BIN" run $args --steps 1 --strategy "$STRATEGIES" --fidelity "$fid" --no-plots --quiet --out "$dir"
  done
  for s in ${STRATEGIES//,/ }; do
    c="$OUT/cycle/$label/summary.csv" f="$OUT/flow/$label/summary.csv"
    echo "$label $s $(col "$c" $s mean_tbt_us) $(col "$f" $s mean_tbt_us) $(col "$c" $s moe_comm_us)" \
      "$(col "$f" $s moe_comm_us) $(col "$c" $s wall_seconds) $(col "$f" $s wall_seconds)" \
      "$(link_diff "$OUT/cycle/$label/links.csv" "$OUT/flow/$label/links.csv" $s)" >> "$rows"
  done
done < "$CONFIGS"
printf '%-10s %-6s %11s %11s %7s %11s %11s %7s %9s %9s %8s\n' config strategy tbt_cyc_us tbt_flow_us err \
  comm_cyc_us comm_flow_us err cyc_s flow_s speedup
# A strategy whose placement is another's is simulated once (host time 0): no speed-up of its own.
awk '{ printf "%-10s %-6s %11.1f %11.1f %+6.1f%% %11.1f %11.1f %+6.1f%% %9.2f %9.4f %8s\n", $1, $2, $3, $4,
       100 * ($4 - $3) / $3, $5, $6, ($5 > 0 ? 100 * ($6 - $5) / $5 : 0), $7, $8,
       ($7 > 0 && $8 > 0 ? sprintf("%.0fx", $7 / $8) : "shared") }' "$rows"
echo
awk -v configs="$n" '
function report(name, c, f,    i, mean, sst, sse, maxerr, e) {
  mean = 0; for (i = 1; i <= runs; i++) mean += c[i]; mean /= runs
  sst = 0; sse = 0; maxerr = 0
  for (i = 1; i <= runs; i++) {
    sst += (c[i] - mean)^2; sse += (c[i] - f[i])^2
    if (c[i] > 0) { e = (f[i] - c[i]) / c[i]; if (e < 0) e = -e; if (e > maxerr) maxerr = e }
  }
  printf "%-9s R^2 = %.4f   max relative error = %.1f%%\n", name, 1 - sse / sst, 100 * maxerr
}
{ runs++; tc[runs] = $3; tf[runs] = $4; cc[runs] = $5; cf[runs] = $6; if ($9 > maxlink) maxlink = $9
  cyc[$1, $2] = $3
  if (!($1 in bc) || $3 < bc[$1]) { bc[$1] = $3; wc[$1] = $2 }
  if (!($1 in bf) || $4 < bf[$1]) { bf[$1] = $4; wf[$1] = $2 } }
END {
  printf "%d runs in %d configurations\n", runs, configs
  report("TBT", tc, tf); report("MoE comm", cc, cf)
  # Flow picks the right strategy when its pick is the fastest at cycle level, or ties with it there
  # (within 0.1% of the cycle TBT: the choice costs nothing measurable).
  agree = 0; ties = 0
  for (k in wc) {
    if (wc[k] == wf[k]) { agree++; continue }
    d = (cyc[k, wf[k]] - bc[k]) / bc[k]
    if (d <= 0.001) { agree++; ties++
      printf "fastest strategy on %s: cycle %s, flow %s, a cycle-level tie (%+.3f%%)\n", k, wc[k], wf[k], 100 * d }
    else printf "fastest strategy differs on %s: cycle %s, flow %s (flow'"'"'s pick %+.2f%% slower at cycle level)\n", k, wc[k], wf[k], 100 * d
  }
  printf "fastest strategy agrees on %d of %d configurations (%d of them cycle-level ties within 0.1%%)\n", agree, configs, ties
  printf "largest difference in any link'"'"'s bytes between the fidelities: %.0f bytes\n", maxlink
}' "$rows"
awk '$7 > 0 && $8 > 0 { print $7 / $8 }' "$rows" | sort -g | awk '{ v[NR] = $1 } END {
  printf "flow speed-up (cycle host time / flow host time, %d runs simulated on their own): min %.1fx, median %.1fx, max %.0fx\n", NR, v[1], v[int((NR + 1) / 2)], v[NR] }'
if [ -n "$PNG" ] && command -v gnuplot > /dev/null; then
  # gnuplot sees no user string: it reads and writes fixed names in a scratch directory.
  plotdir=$(mktemp -d)
  cp "$rows" "$plotdir/rows.txt"
  runs=$(wc -l < "$rows")
  (cd "$plotdir" && gnuplot) <<EOF
set terminal pngcairo size 1100,480 font ",10" noenhanced
set output "plot.png"
rows = "rows.txt"
set multiplot layout 1,2 title "Flow fidelity against cycle fidelity (bench/flow_vs_cycle.sh, $runs runs)"
set logscale xy
set grid
set key top left
set xlabel "cycle fidelity (us)"
set ylabel "flow fidelity (us)"
set title "MoE communication per step"
plot rows using 5:6 with points pt 7 ps 0.8 title "runs", x with lines lc rgb "#888888" title "y = x", \
  x * 1.15 with lines dt 2 lc rgb "#bbbbbb" title "+-15%", x / 1.15 with lines dt 2 lc rgb "#bbbbbb" notitle
set title "Time between tokens"
plot rows using 3:4 with points pt 7 ps 0.8 title "runs", x with lines lc rgb "#888888" title "y = x", \
  x * 1.05 with lines dt 2 lc rgb "#bbbbbb" title "+-5%", x / 1.05 with lines dt 2 lc rgb "#bbbbbb" notitle
unset multiplot
EOF
  mv "$plotdir/plot.png" "$PNG"
  rm -rf "$plotdir"
  echo "scatter plot: $PNG"
fi
