#!/usr/bin/env bash
# Regenerates docs/REPRODUCTION.md's HybridEP section (issue 38): training steps across data centres
# (xdc-4x8-a800 and its smaller meshes, xdc-1000) with EP, Tutel's chunks, FasterMoE's shadowing, HybridEP and
# our resident replication: Table V, Table VI, Fig. 13, the sensitivity of the headline, Fig. 17, and flow
# against cycle fidelity on small clusters. Not a test.
# Usage: bash bench/reproduce/hybridep.sh [path/to/nmpsim] [OUTDIR]   (OUTDIR keeps every run; default a temp dir)
#        RESUME=1 bash bench/reproduce/hybridep.sh BIN OUTDIR   reuses the runs an interrupted invocation finished
set -euo pipefail
source "$(dirname "$0")/common.sh"
docs="$here/../docs"
resume=()
[ "${RESUME:-0}" = 1 ] && resume=(--resume)
step "Table VI, Table V, Fig. 13, sensitivity, Fig. 17, Fig. 16, cycle checks"
python3 "$here/hybridep_repro.py" --bin "$BIN" --out "$OUT" --sections table6,table5,fig13,sens,fig17,fig16,cycle \
  "${resume[@]}"
elapsed=$(( $(date +%s) - start ))
[ "${RESUME:-0}" = 1 ] && elapsed=0  # runs from several invocations: no end-to-end time to state
python3 "$here/reproduce/hybridep_section.py" "$OUT" "$docs/REPRODUCTION.md" "$elapsed"
step "done: docs/REPRODUCTION.md, outputs in $OUT"
