#!/usr/bin/env bash
# Router-implementation speed (not a test): the same NoC testbench with the engine's built-in
# routers, pin-level SystemC routers, Verilated RTL routers and a mixed mesh. Reports simulated
# cycles per wall second, the ratio to the SystemC router mesh, and checks the four runs agree.
# Usage: bench/router_bench.sh [path/to/nmpsim]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
CYCLES=${CYCLES:-20000}
source "$(dirname "$0")/lib.sh"

for spec in "4x4 0.2" "8x8 0.1" "16x16 0.05"; do
  set -- $spec
  echo
  echo "## ${1} mesh, uniform traffic at $2 flits/node/cycle, ${CYCLES} measured cycles"
  for router in engine sc rtl mixed; do
    /usr/bin/time -v "$BIN" noc --mesh "$1" --injection-rate "$2" --cycles "$CYCLES" --warmup-cycles 2000 \
      --router "$router" --quiet --json "$tmp/$router.json" 2> "$tmp/$router.time"
  done
  sc_speed=$(field simulated_cycles_per_second "$tmp/sc.json")
  printf '%-8s %-12s %-10s %-12s %-10s\n' router cycles/s vs_sc avg_latency max_rss_MB
  for router in engine sc rtl mixed; do
    speed=$(field simulated_cycles_per_second "$tmp/$router.json")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/$router.time")
    printf '%-8s %-12.0f %-10.2f %-12.4f %-10.1f\n' "$router" "$speed" "$(awk -v a="$speed" -v b="$sc_speed" 'BEGIN{print a / b}')" \
      "$(field avg_packet_latency_cycles "$tmp/$router.json")" "$(awk -v k="$rss" 'BEGIN{print k/1024}')"
  done
  for router in sc rtl mixed; do
    if [ "$(field avg_packet_latency_cycles "$tmp/$router.json")" != "$(field avg_packet_latency_cycles "$tmp/engine.json")" ]; then
      echo "MISMATCH: --router $router disagrees with the engine" >&2
      exit 1
    fi
  done
done
