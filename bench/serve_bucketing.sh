#!/usr/bin/env bash
# The error the step-shape grid costs `nmpsim serve` (not a test): the same requests served with the
# grid (interpolated between simulated grid shapes, the default) and with every distinct step shape
# simulated (--no-bucketing), and the ratio of each summary metric; also the wall time of each.
# A two-layer Mixtral on the 4x4 NMP chip keeps the exact run short.
# Usage: bench/serve_bucketing.sh [path/to/nmpsim] [requests] [rate]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
REQUESTS=${2:-1000}
RATE=${3:-40}
source "$(dirname "$0")/lib.sh"
"$BIN" model --model mixtral-8x7b --print-json > "$tmp/mixtral.json"
python3 - "$tmp" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/mixtral.json"))
m["moe_layers"], m["dense_layers"] = 2, 0
json.dump(m, open(sys.argv[1] + "/model.json", "w"))
PY
args=(serve --hw nmp-4x4-5t50g --model "$tmp/model.json" --rate "$RATE" --requests "$REQUESTS" --prompt-tokens 256
      --output-tokens 64 --prompt-spread 0.5 --output-spread 0.5 --quiet)
for mode in grid exact; do
  extra=()
  [ "$mode" = exact ] && extra=(--no-bucketing)
  start=$(date +%s.%N)
  "$BIN" "${args[@]}" "${extra[@]}" --out "$tmp/$mode"
  end=$(date +%s.%N)
  python3 -c 'import sys; print("%s: %.1f s wall" % (sys.argv[1], float(sys.argv[3]) - float(sys.argv[2])))' "$mode" "$start" "$end"
done
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
g, e = json.load(open(d + "/grid/summary.json")), json.load(open(d + "/exact/summary.json"))
print("shapes simulated: grid %d, exact %d" % (g["simulated_step_shapes"], e["simulated_step_shapes"]))
print("metric                     grid        exact    grid/exact")
for key in ("ttft_ms", "tpot_ms", "latency_ms"):
    for p in ("p50", "p90", "p99"):
        print("%-12s %-5s %12.4f %12.4f %9.4f" % (key, p, g[key][p], e[key][p], g[key][p] / e[key][p]))
for key in ("throughput_requests_per_s", "energy_per_output_token_j", "mean_requests_in_system"):
    print("%-18s %12.4f %12.4f %9.4f" % (key[:18], g[key], e[key], g[key] / e[key] if e[key] else 0))
PY
