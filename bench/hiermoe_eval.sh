#!/usr/bin/env bash
# HierMoE evaluation (docs/RESULTS.md "HierMoE"): MoE all-to-all time (dispatch + combine, all stages)
# and TBT of the flat all-to-all (ep), the two-level all-to-all without deduplication (hiermoe-2dh)
# and HierMoE's deduplicated all-to-all with d* per layer (hiermoe: d* by the paper's Eq. 6 on the
# fitted costs; hiermoe/flow: d* by replaying the layer at every d on the flow model), flow fidelity, one decode step,
# weights at INT8. Systems: four 8x8 wafers (a real wafer level plus one virtual quadrant level), one
# 8x8 wafer and the nmp-8x8 NMP chip (two virtual quadrant levels each). Prints a markdown table
# with HierMoE's d* and the duplication rate at every level. Not a test. About 5 minutes.
# Usage: bench/hiermoe_eval.sh [path/to/nmpsim]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
echo "| hardware | model | batch | all-to-all us: ep / 2dh / hiermoe / hiermoe-flow | hiermoe over ep, 2dh | TBT us: ep / 2dh / hiermoe / hiermoe-flow | d* Eq. 6 (layers) | d* flow (layers) | duplication rate per level |"
echo "|---|---|---|---|---|---|---|---|---|"
# hardware:attn-tp:virtual levels:models
for setup in wsc-4wafer-8x8:16:1:deepseek-v3,qwen3-235b-a22b wsc-8x8:16:2:deepseek-v3,qwen3-235b-a22b \
  nmp-8x8-5t50g:16:2:deepseek-v2-lite,qwen2-57b-a14b; do
  IFS=: read -r hw tp vl models <<< "$setup"
  for model in ${models//,/ }; do
    for batch in 64 256 1024; do
      "$BIN" run --hw "$hw" --attn-tp "$tp" --model "$model" --weight-bytes 1 --batch "$batch" --steps 1 \
        --fidelity flow --strategy ep,hiermoe-2dh,hiermoe --strategy-opt "hiermoe.virtual_levels=$vl" \
        --strategy-opt "hiermoe-2dh.virtual_levels=$vl" --no-plots --quiet --out "$tmp/r"
      "$BIN" run --hw "$hw" --attn-tp "$tp" --model "$model" --weight-bytes 1 --batch "$batch" --steps 1 \
        --fidelity flow --strategy hiermoe --strategy-opt "hiermoe.virtual_levels=$vl" \
        --strategy-opt hiermoe.select=flow --no-plots --quiet --out "$tmp/f"
      python3 - "$tmp/r/summary.json" "$tmp/f/summary.json" "$hw" "$model" "$batch" <<'EOF'
import collections, json, sys
s = json.load(open(sys.argv[1]))["strategies"]
s["flow"] = json.load(open(sys.argv[2]))["strategies"]["hiermoe"]
keys = ("ep", "hiermoe-2dh", "hiermoe", "flow")
a2a = [s[k]["moe_comm_us"] for k in keys]
tbt = [s[k]["mean_tbt_us"] for k in keys]
h = s["hiermoe"]["policies"]["hiermoe"]
hist = lambda k: ", ".join("%d: %d" % kv for kv in sorted(collections.Counter(
    s[k]["policies"]["hiermoe"]["d_star_per_layer"]).items()))
print("| %s | %s | %s | %.0f / %.0f / %.0f / %.0f | %.2fx, %.2fx | %.0f / %.0f / %.0f / %.0f | %s | %s | %s |" % (
    sys.argv[3], sys.argv[4], sys.argv[5], *a2a, a2a[0] / a2a[2], a2a[1] / a2a[2], *tbt, hist("hiermoe"),
    hist("flow"), ", ".join("%s %.0f%%" % (l["name"], 100 * l["duplication_rate"]) for l in h["levels"])))
EOF
    done
  done
done
