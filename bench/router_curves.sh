#!/usr/bin/env bash
# Latency and accepted throughput against offered load for an RTL router beside its model (not a test):
# `nmpsim noc` at a range of injection rates with the model (--router sc) and the RTL (--router rtl:NAME),
# a table, and a PNG with both curves. The two must agree to the last digit; the VC router (engine)
# is drawn for comparison.
# Usage: bench/router_curves.sh [path/to/nmpsim] [RTL name: la | nmp] [out.png]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
NAME=${2:-la}
PNG=${3:-router_curves.png}
MESH=${MESH:-4x4}
CYCLES=${CYCLES:-5000}
RATES=${RATES:-"0.05 0.1 0.15 0.2 0.25 0.3 0.35 0.4 0.45 0.5 0.55 0.6 0.65 0.7"}
source "$(dirname "$0")/lib.sh"
kind=vc
[ "$NAME" = la ] && kind=lookahead
printf '%-6s %-10s %-12s %-12s %-12s %-12s %-12s\n' rate impl avg_latency accepted "" vc_latency vc_accepted
: > "$tmp/curve.dat"
for r in $RATES; do
  for impl in sc "rtl:$NAME"; do
    "$BIN" noc --mesh "$MESH" --router-kind "$kind" --router "$impl" --injection-rate "$r" --cycles "$CYCLES" \
      --warmup-cycles 1000 --max-drain-cycles 20000 --quiet --json "$tmp/$impl.json" || true
  done
  "$BIN" noc --mesh "$MESH" --injection-rate "$r" --cycles "$CYCLES" --warmup-cycles 1000 --max-drain-cycles 20000 \
    --quiet --json "$tmp/vc.json" || true
  ms=$(field avg_packet_latency_cycles "$tmp/sc.json"); mr=$(field avg_packet_latency_cycles "$tmp/rtl:$NAME.json")
  as=$(field accepted_flits_per_node_cycle "$tmp/sc.json"); ar=$(field accepted_flits_per_node_cycle "$tmp/rtl:$NAME.json")
  vl=$(field avg_packet_latency_cycles "$tmp/vc.json"); va=$(field accepted_flits_per_node_cycle "$tmp/vc.json")
  printf '%-6s %-10s %-12s %-12s %-12s %-12s %-12s\n' "$r" model "$ms" "$as" "" "$vl" "$va"
  printf '%-6s %-10s %-12s %-12s\n' "$r" "rtl:$NAME" "$mr" "$ar"
  if [ "$ms" != "$mr" ] || [ "$as" != "$ar" ]; then echo "MISMATCH at rate $r: the RTL disagrees with its model" >&2; exit 1; fi
  echo "$r $ms $as $mr $ar $vl $va" >> "$tmp/curve.dat"
done
gnuplot <<GP
set terminal pngcairo size 1100,450 font ",11"
set output "$PNG"
set multiplot layout 1,2 title "$MESH mesh, uniform traffic: rtl:$NAME beside its model (and the VC router)"
set xlabel "offered load (flits/node/cycle)"
set ylabel "mean packet latency (cycles)"
set logscale y
set key top left
plot "$tmp/curve.dat" u 1:2 w lp lw 2 pt 7 t "model ($kind, sc)", "" u 1:4 w p pt 6 ps 2 t "RTL (rtl:$NAME)", \
     "" u 1:6 w lp dt 2 t "VC router (engine)"
unset logscale y
set ylabel "accepted throughput (flits/node/cycle)"
plot "$tmp/curve.dat" u 1:3 w lp lw 2 pt 7 t "model ($kind, sc)", "" u 1:5 w p pt 6 ps 2 t "RTL (rtl:$NAME)", \
     "" u 1:7 w lp dt 2 t "VC router (engine)", x w l lc rgb "gray" t "offered"
unset multiplot
GP
echo "curves written to $PNG"
