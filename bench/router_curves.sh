#!/usr/bin/env bash
# Latency and accepted throughput against offered load for an RTL router beside its model (not a test),
# with the VC router (engine) drawn for comparison: two `nmpsim noc --curve` runs (the first fails if the
# RTL and its model differ at any load, for nmp and la) and one PNG.
# Usage: bench/router_curves.sh [path/to/nmpsim] [RTL name: la | nmp | la_vr | la_credit | yours] [out.png]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
NAME=${2:-la}
PNG=${3:-router_curves.png}
MESH=${MESH:-4x4}
CYCLES=${CYCLES:-5000}
RATES=${RATES:-0.05:0.7:0.05}
source "$(dirname "$0")/lib.sh"
kind=vc
[ "$NAME" != nmp ] && kind=lookahead  # la and the routers of your own are drawn beside the look-ahead model
common=(--mesh "$MESH" --cycles "$CYCLES" --warmup-cycles 1000 --max-drain-cycles 20000 --curve "$RATES")
"$BIN" noc "${common[@]}" --router-kind "$kind" --router "rtl:$NAME" --json "$tmp/rtl.json"
"$BIN" noc "${common[@]}" --quiet --json "$tmp/vc.json"
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
rtl, vc = json.load(open(d + "/rtl.json")), json.load(open(d + "/vc.json"))
with open(d + "/curve.dat", "w") as f:
    for p, q in zip(rtl["points"], vc["points"]):
        r, m, v = p["router"], p["model"], q["router"]
        f.write("%g %s %s %s %s %s %s\n" % (p["offered_flits_per_node_cycle"],
                m["avg_packet_latency_cycles"], m["accepted_flits_per_node_cycle"],
                r["avg_packet_latency_cycles"], r["accepted_flits_per_node_cycle"],
                v["avg_packet_latency_cycles"], v["accepted_flits_per_node_cycle"]))
PY
gnuplot <<GP
set terminal pngcairo noenhanced size 1100,450 font ",11"
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
