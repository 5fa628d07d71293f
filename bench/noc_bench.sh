#!/usr/bin/env bash
# NoC simulator benchmark (not a test): latency/throughput curves for uniform traffic on 8x8 and
# 16x16 meshes from low load to past saturation, simulated cycles per wall second, and the three
# speed/memory target runs of docs/PERFORMANCE.md. Usage: bench/noc_bench.sh [path/to/nmpsim]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
CYCLES=${CYCLES:-100000}
source "$(dirname "$0")/lib.sh"

curve() {
  local mesh=$1; shift
  echo
  echo "## uniform traffic, ${mesh} mesh, 4-flit packets, ${CYCLES} measured cycles"
  printf '%-8s %-9s %-9s %-9s %-9s %-12s\n' offered accepted avg_lat p99_lat cycles wall_cyc/s
  for rate in "$@"; do
    "$BIN" noc --mesh "$mesh" --injection-rate "$rate" --cycles "$CYCLES" --max-drain-cycles 200000 \
      --quiet --json "$tmp/r.json"
    printf '%-8s %-9.4f %-9.1f %-9.0f %-9s %-12.0f\n' "$rate" \
      "$(field accepted_flits_per_node_cycle "$tmp/r.json")" "$(field avg_packet_latency_cycles "$tmp/r.json")" \
      "$(field p99_packet_latency_cycles "$tmp/r.json")" "$(field simulated_cycles "$tmp/r.json")" \
      "$(field simulated_cycles_per_second "$tmp/r.json")"
  done
}

curve 8x8 0.02 0.05 0.1 0.15 0.2 0.25 0.3 0.33 0.36 0.38 0.40 0.45
curve 16x16 0.02 0.05 0.08 0.1 0.12 0.15 0.17 0.18 0.19 0.20 0.22

echo
echo "## speed targets (single thread; wall time and peak memory from /usr/bin/time -v)"
printf '%-8s %-6s %-12s %-10s %-10s\n' mesh rate cycles/s wall_s max_rss_MB
for spec in "8x8 0.1" "16x16 0.05" "32x32 0.025"; do
  set -- $spec
  /usr/bin/time -v "$BIN" noc --mesh "$1" --injection-rate "$2" --cycles "$CYCLES" --quiet --json "$tmp/t.json" \
    2> "$tmp/time.txt"
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
  printf '%-8s %-6s %-12.0f %-10.2f %-10.1f\n' "$1" "$2" "$(field simulated_cycles_per_second "$tmp/t.json")" \
    "$(field wall_seconds "$tmp/t.json")" "$(awk -v k="$rss" 'BEGIN{print k/1024}')"
done
