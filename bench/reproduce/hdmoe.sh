#!/usr/bin/env bash
# Regenerates docs/REPRODUCTION.md's HD-MoE section (issue 35): the authors' accounting reproduced, the
# solver and link-cost study under their accounting, the sensitivity to each of their assumptions, and
# the end-to-end decode table at B = 8-128 with cycle-fidelity checks, the ablations (link balance,
# dynamic pre-broadcast, compute tail) and gamma. Uses both cores (the MILP's time
# limits are wall-clock: run it on an idle machine). Not a test.
# Usage: bash bench/reproduce/hdmoe.sh [path/to/nmpsim] [OUTDIR]   (OUTDIR keeps every run; default a temp dir)
set -euo pipefail
source "$(dirname "$0")/common.sh"
step "the authors' accounting (TP rows, EP draws)"
python3 "$here/hdmoe_authors.py" --bin "$BIN" --seeds 10 --out "$OUT/authors" > "$OUT/authors.txt"
step "solver time and link cost under their accounting (about 20 minutes)"
python3 "$here/hdmoe_solver_study.py" --bin "$BIN" --out "$OUT/solver" > "$OUT/solver.txt"
step "sensitivity to their assumptions"
python3 "$here/hdmoe_sensitivity.py" --bin "$BIN" --out "$OUT/sensitivity" > "$OUT/sensitivity.txt"
step "end-to-end decode at B = 8-128, cycle checks"
python3 "$here/hdmoe_e2e.py" --bin "$BIN" --out "$OUT/e2e" > "$OUT/e2e.txt"
step "ablations: link-balance convergence, dynamic pre-broadcast (cycle), compute tail"
bash "$here/hdmoe_ablation.sh" "$BIN" 1,5,6 > "$OUT/ablation.txt"
step "gamma (Eq. 3) fitted at flow level"
for model in mixtral-8x7b deepseek-v2-lite; do
  printf '%s (nmp-4x8-5t50g, B = 64): ' "$model"
  "$BIN" place --fit-gamma flow --hw nmp-4x8-5t50g --model "$model" --batch 64 | grep 'R^2'
done > "$OUT/gamma.txt"
python3 "$here/reproduce/hdmoe_section.py" "$OUT" "$here/../docs/REPRODUCTION.md" $(( $(date +%s) - start ))
step "done: docs/REPRODUCTION.md, outputs in $OUT"
