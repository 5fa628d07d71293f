#!/usr/bin/env bash
# Regenerates docs/REPRODUCTION.md's MoEntwine section (issue 36) and its figures: communication as the
# paper reports it (Fig. 13), the token sweep (docs/moentwine_comm_sweep.png), step times for decode, prefill
# and hybrid steps with and without overlap, the sensitivity of the verdicts to each assumption, cycle-
# fidelity checks, the link heatmaps (docs/moentwine_links.png, Fig. 9) and the balancer with 1, 2 and 4
# shadow slots on drifting traces (Fig. 15-16; docs/moentwine_balance.png is the 1-slot run). Runs the
# balancer beside the rest (both cores). Not a test.
# Usage: bash bench/reproduce/moentwine.sh [path/to/nmpsim] [OUTDIR]   (OUTDIR keeps every run; default a temp dir)
#        RESUME=1 bash bench/reproduce/moentwine.sh BIN OUTDIR   reuses the runs (and balancer tables) that an
#        interrupted invocation finished in OUTDIR; the section then states no end-to-end time.
set -euo pipefail
source "$(dirname "$0")/common.sh"
docs="$here/../docs"
source "$here/lib.sh"
step "balancer with 1, 2 and 4 shadow slots (background, about 60 minutes)"
(
  for s in 1 2 4; do
    [ "${RESUME:-0}" = 1 ] && [ -f "$OUT/balance_slots$s.md" ] && [ -f "$OUT/balance_slots$s.csv" ] && continue
    png="$OUT/moentwine_balance_slots$s.png"
    [ "$s" = 1 ] && png="$docs/moentwine_balance.png"
    BAL_CSV="$OUT/balance_slots$s.csv" OUT_PNG="$png" bash "$here/moentwine_balance.sh" "$BIN" 32 "$s" \
      > "$OUT/balance_slots$s.md.part"
    publish "$OUT/balance_slots$s.md.part" "$OUT/balance_slots$s.md"
  done
) &
balancer=$!
trap 'kill "$balancer" 2> /dev/null; rm -rf "$tmp"' EXIT
step "communication, FTD figures, token sweep, sensitivity, cycle checks, step times"
resume=()
[ "${RESUME:-0}" = 1 ] && resume=(--resume)
python3 "$here/moentwine_repro.py" --bin "$BIN" --out "$OUT" --sections comm,comm_cycle,comm_vc8,ftd,sweep,sens,cycle,e2e \
  "${resume[@]}"
step "link heatmaps"
OUT_PNG="$docs/moentwine_links.png" bash "$here/moentwine_links.sh" "$BIN" > "$OUT/links.md.part"
publish "$OUT/links.md.part" "$OUT/links.md"
if command -v gnuplot > /dev/null; then
  # The token sweep's plot, drawn in the scratch directory from fixed file names (no path in gnuplot's program).
  python3 - "$OUT/sweep.csv" "$tmp" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for system in ("6x6", "8x8"):
    for s in ("moentwine-baseline", "moentwine-er"):
        with open("%s/sweep-%s-%s.dat" % (sys.argv[2], system, s), "w") as f:
            for r in rows:
                if r["system"] == system and r["strategy"] == s:
                    f.write("%s %s %s %s\n" % (r["tokens_per_group"], r["moe_comm_us"], r["allreduce_us"], r["comm_us"]))
PY
  (cd "$tmp" && gnuplot -e "set terminal pngcairo size 1000,450 font 'sans,10' noenhanced; set output 'sweep.png';
    set multiplot layout 1,2; set logscale xy; set xlabel 'tokens per TP group'; set ylabel 'us per decode step';
    set grid; set key top left;
    set title 'DeepSeek-V3, 6x6 wafer, TP 4';
    plot for [s in 'moentwine-baseline moentwine-er'] 'sweep-6x6-'.s.'.dat' using 1:4 with linespoints title s.' all-to-all + all-reduce',
         for [s in 'moentwine-baseline moentwine-er'] 'sweep-6x6-'.s.'.dat' using 1:2 with lines dashtype 2 title s.' all-to-all';
    set title 'Qwen3-235B, 8x8 wafer, TP 16';
    plot for [s in 'moentwine-baseline moentwine-er'] 'sweep-8x8-'.s.'.dat' using 1:4 with linespoints title s.' all-to-all + all-reduce',
         for [s in 'moentwine-baseline moentwine-er'] 'sweep-8x8-'.s.'.dat' using 1:2 with lines dashtype 2 title s.' all-to-all';
    unset multiplot")
  publish "$tmp/sweep.png" "$docs/moentwine_comm_sweep.png"
fi
step "waiting for the balancer"
wait "$balancer"
trap 'rm -rf "$tmp"' EXIT
elapsed=$(( $(date +%s) - start ))
[ "${RESUME:-0}" = 1 ] && elapsed=0  # runs from several invocations: no end-to-end time to state
python3 "$here/reproduce/moentwine_section.py" "$OUT" "$docs/REPRODUCTION.md" "$elapsed"
step "done: docs/REPRODUCTION.md, outputs in $OUT"
