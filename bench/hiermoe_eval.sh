#!/usr/bin/env bash
# HierMoE evaluation (docs/RESULTS.md "HierMoE"): MoE all-to-all time (dispatch + combine, all stages)
# and TBT of the flat all-to-all (ep), the two-level all-to-all without deduplication (hiermoe-2dh)
# and HierMoE's deduplicated all-to-all with d* per layer (hiermoe), flow fidelity, one decode step,
# weights at INT8. Systems: four 8x8 wafers (a real wafer level plus one virtual quadrant level), one
# 8x8 wafer and the hdmoe-8x8 NMP chip (two virtual quadrant levels each). Prints a markdown table
# with HierMoE's d* and the duplication rate at every level. Not a test. About 10 minutes.
# Usage: bench/hiermoe_eval.sh [path/to/nmpsim]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
echo "| hardware | model | batch | all-to-all us: ep / 2dh / hiermoe | hiermoe speed-up over ep, 2dh | TBT us: ep / 2dh / hiermoe | d* (layers) | duplication rate per level |"
echo "|---|---|---|---|---|---|---|---|"
# hardware:attn-tp:virtual levels:models
for setup in wsc-4wafer-8x8:16:1:deepseek-v3,qwen3-235b-a22b wsc-8x8:16:2:deepseek-v3,qwen3-235b-a22b \
  hdmoe-8x8-5t50g:16:2:deepseek-v2-lite,qwen2-57b-a14b; do
  IFS=: read -r hw tp vl models <<< "$setup"
  for model in ${models//,/ }; do
    for batch in 256 1024; do
      "$BIN" run --hw "$hw" --attn-tp "$tp" --model "$model" --weight-bytes 1 --batch "$batch" --steps 1 \
        --fidelity flow --strategy ep,hiermoe-2dh,hiermoe --strategy-opt "hiermoe.virtual_levels=$vl" \
        --strategy-opt "hiermoe-2dh.virtual_levels=$vl" --no-plots --quiet --out "$tmp/r"
      python3 - "$tmp/r/summary.json" "$hw" "$model" "$batch" <<'EOF'
import collections, json, sys
s = json.load(open(sys.argv[1]))["strategies"]
a2a = [s[k]["moe_comm_us"] for k in ("ep", "hiermoe-2dh", "hiermoe")]
tbt = [s[k]["mean_tbt_us"] for k in ("ep", "hiermoe-2dh", "hiermoe")]
h = s["hiermoe"]["policies"]["hiermoe"]
d = collections.Counter(h["d_star_per_layer"])
print("| %s | %s | %s | %.0f / %.0f / %.0f | %.2fx, %.2fx | %.0f / %.0f / %.0f | %s | %s |" % (
    sys.argv[2], sys.argv[3], sys.argv[4], *a2a, a2a[0] / a2a[2], a2a[1] / a2a[2], *tbt,
    ", ".join("%d: %d" % kv for kv in sorted(d.items())),
    ", ".join("%s %.0f%%" % (l["name"], 100 * l["duplication_rate"]) for l in h["levels"])))
EOF
    done
  done
done
