#!/usr/bin/env bash
# HierMoE's expert swap (docs/RESULTS.md "HierMoE: expert swap"): MoE all-to-all time (dispatch +
# combine, all stages) and TBT of the deduplicated hierarchical all-to-all without swaps (hiermoe,
# the paper's "HD-MoE"), after offline HierD-ES swaps with the smooth-max of Eq. 11 at gamma = 10
# (the paper's "HierMoE") and at gamma = 1000 (nearly the plain max), and with online swaps every step
# (policy option swap_every = 1, the default amortisation horizon of 64 steps). Held out: the offline
# swaps are chosen on the trace's first 2048 tokens and the runs start at token 2048. Flow fidelity,
# weights at INT8. Models with at least one expert per node (a split expert has nothing to swap).
# Prints a markdown table. Not a test. About 40 minutes.
# Usage: bench/hiermoe_swap.sh [path/to/nmpsim] ["hardware:attn-tp:virtual levels:models ..."]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
echo "| hardware | model | batch | all-to-all us: no swap / swap g=10 / swap g=1000 / online | g=10, g=1000, online over no swap | TBT us: no swap / g=10 / online | online swaps taken / refused |"
echo "|---|---|---|---|---|---|---|"
# hardware:attn-tp:virtual levels:models
SETUPS=${2:-"wsc-4wafer-8x8:16:1:deepseek-v3 wsc-8x8:16:2:deepseek-v3,qwen3-235b-a22b
  nmp-8x8-5t50g:16:2:deepseek-v2-lite,qwen2-57b-a14b"}
for setup in $SETUPS; do
  IFS=: read -r hw tp vl models <<< "$setup"
  for model in ${models//,/ }; do
    for batch in 256 1024; do
      common=(--hw "$hw" --attn-tp "$tp" --model "$model" --weight-bytes 1 --batch "$batch" --fidelity flow
        --profile-tokens 2048 --first-token 2048 --no-plots --quiet)
      "$BIN" run "${common[@]}" --steps 2 --strategy hiermoe,hiermoe-swap \
        --strategy-opt "hiermoe.virtual_levels=$vl" --strategy-opt "hiermoe-swap.virtual_levels=$vl" --out "$tmp/a"
      "$BIN" run "${common[@]}" --steps 2 --strategy hiermoe-swap --strategy-opt "hiermoe-swap.virtual_levels=$vl" \
        --strategy-opt hiermoe-swap.gamma=1000 --out "$tmp/b"
      "$BIN" run "${common[@]}" --steps 4 --strategy hiermoe --strategy-opt "hiermoe.virtual_levels=$vl" \
        --strategy-opt hiermoe.swap_every=1 --out "$tmp/c"
      python3 - "$tmp" "$hw" "$model" "$batch" <<'EOF'
import json, sys
d = sys.argv[1]
a = json.load(open(d + "/a/summary.json"))["strategies"]
g1000 = json.load(open(d + "/b/summary.json"))["strategies"]["hiermoe-swap"]
online = json.load(open(d + "/c/summary.json"))["strategies"]["hiermoe"]
runs = [a["hiermoe"], a["hiermoe-swap"], g1000, online]
a2a = [r["moe_comm_us"] for r in runs]
o = online["hiermoe"]["online_swap"]
print("| %s | %s | %s | %.0f / %.0f / %.0f / %.0f | %.3fx, %.3fx, %.3fx | %.0f / %.0f / %.0f | %d / %d |" % (
    sys.argv[2], sys.argv[3], sys.argv[4], *a2a, a2a[0] / a2a[1], a2a[0] / a2a[2], a2a[0] / a2a[3],
    runs[0]["mean_tbt_us"], runs[1]["mean_tbt_us"], online["mean_tbt_us"],
    o["swaps"], o["rejected_by_amortisation"]))
EOF
    done
  done
done
