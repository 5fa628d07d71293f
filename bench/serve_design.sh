#!/usr/bin/env bash
# Which bandwidth/compute ratio serves the most requests per second within the SLO (not a test): one
# serving sweep (`nmpsim sweep --spec`, every design at several offered rates, the step times shared
# by a design's rates), then, from its results.csv, a Markdown table of each design's best goodput
# (requests within the SLO over the run, first arrival to last finish), the highest offered rate at which
# 90% of requests keep the SLO (DistServe's goodput), and goodput per watt and per cm^2 of logic at the
# best rate. Resumable: a rerun runs only missing points.
# Usage: bench/serve_design.sh [path/to/nmpsim] [out dir] [sweep spec] [more nmpsim sweep options...]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
OUT=${2:-serve-design}
SPEC=${3:-examples/sweeps/serve_bandwidth_compute.json}
shift $(( $# < 3 ? $# : 3 ))
[ -x "$BIN" ] || { echo "serve_design.sh: $BIN is not an executable nmpsim" >&2; exit 2; }
[ -f "$SPEC" ] || { echo "serve_design.sh: $SPEC: no such sweep spec" >&2; exit 2; }
status=0
"$BIN" sweep --spec "$SPEC" --out "$OUT" --jobs "${JOBS:-2}" "$@" || status=$?  # a failed point: table of the rest
[ "$status" -le 1 ] || exit "$status"
python3 - "$OUT/results.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
if not rows:
    sys.exit("serve_design.sh: no complete point in " + sys.argv[1])
header = list(rows[0])
axes = header[1:header.index("strategy")]  # the columns between point and strategy
design = [a for a in axes if a != "serve.rate"]
best, sustained = {}, {}
for r in rows:
    key = (r["strategy"],) + tuple(r[a] for a in design)
    if key not in best or float(r["goodput_requests_per_s"]) > float(best[key]["goodput_requests_per_s"]):
        best[key] = r
    # DistServe's goodput: the highest offered rate at which at least 90% of requests keep the SLO.
    if "serve.rate" in r and float(r["slo_attained"]) >= 0.9:
        sustained[key] = max(sustained.get(key, 0.0), float(r["serve.rate"]))
print("| strategy | " + " | ".join(design) + " | best goodput (req/s) | at rate | highest rate with 90% in SLO | TPOT p99 ms | mean power W | req/J | req/s per cm^2 of logic |")
print("|---" * (len(design) + 8) + "|")
for key, r in sorted(best.items(), key=lambda kv: [kv[0][0]] + [float(x) for x in kv[0][1:]]):
    print("| %s | %s | %.2f | %s | %g | %.1f | %.1f | %.4f | %.4f |" % (
        key[0], " | ".join(key[1:]), float(r["goodput_requests_per_s"]), r.get("serve.rate", "-"),
        sustained.get(key, 0), float(r["tpot_p99_ms"]), float(r["mean_power_w"]), float(r["goodput_requests_per_j"]),
        100 * float(r["goodput_requests_per_s_per_logic_mm2"])))
PY
exit "$status"
