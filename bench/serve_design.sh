#!/usr/bin/env bash
# Which bandwidth/compute ratio serves the most requests per second within the SLO (not a test):
# `nmpsim serve --rates` at every point of a peak-TFLOP/s x link-GB/s grid of an NMP preset, and the
# best goodput of each point (requests/s within a 50 ms TPOT and a 2 s TTFT), as a Markdown table.
# Usage: bench/serve_design.sh [path/to/nmpsim] [out dir] [hardware preset] [model]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
OUT=${2:-serve-design}
HW=${3:-nmp-4x8-5t50g}
MODEL=${4:-mixtral-8x7b}
TFLOPS=${TFLOPS:-2.5 5 10 20}
LINKS=${LINKS:-25 50 100 200}
RATES=${RATES:-1,2,3,4,5,6,8,10,12}
REQUESTS=${REQUESTS:-200}
mkdir -p "$OUT"
for tf in $TFLOPS; do
  for bw in $LINKS; do
    dir="$OUT/tf${tf}_bw${bw}"
    [ -f "$dir/summary.json" ] && continue  # resumable: a finished point is kept
    "$BIN" serve --hw "$HW" --model "$MODEL" --set "compute.peak_tflops=$tf" --set "links.on_die.gbytes_per_s=$bw" \
      --rates "$RATES" --requests "$REQUESTS" --prompt-tokens 512 --output-tokens 128 --prompt-spread 0.5 \
      --output-spread 0.5 --slo-tpot-ms 50 --slo-ttft-ms 2000 --no-plots --quiet --out "$dir"
    echo "done: $tf TFLOP/s, $bw GB/s" >&2
  done
done
python3 - "$OUT" "$TFLOPS" "$LINKS" <<'PY'
import json, os, sys
out, tfs, bws = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
print("| peak TFLOP/s per node \\\\ link GB/s | " + " | ".join(bws) + " |")
print("|---|" + "---|" * len(bws))
for tf in tfs:
    cells = []
    for bw in bws:
        s = json.load(open(os.path.join(out, "tf%s_bw%s" % (tf, bw), "summary.json")))
        best = max(s["rates"], key=lambda p: p["goodput_requests_per_s"])
        cells.append("%.2f (at %g/s)" % (best["goodput_requests_per_s"], best["offered_rate_per_s"]))
    print("| %s | %s |" % (tf, " | ".join(cells)))
PY
