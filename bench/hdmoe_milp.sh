#!/usr/bin/env bash
# HD-MoE node balance at full size (docs/RESULTS.md "HD-MoE node balance at full size"): the MILP of
# every MoE layer of Mixtral-8x7B (real MT-Bench trace), DeepSeek-V2-Lite and Qwen2-57B-A14B (synthetic,
# the skews of bench/hdmoe_eval.sh) on nmp-4x8-5t50g, batch 64, at the default 1 s per layer.
# Prints per model: whether branch and bound ran and on which model, time per layer, branch nodes,
# gap to the bound, CBC's own gap, and the modelled objective against EP; writes every layer's row to
# OUT/milp_layers.csv. Not a test (timings depend on the machine).
# Usage: bench/hdmoe_milp.sh [path/to/nmpsim] [OUT dir] [time limit s]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
OUT=${2:-.}
LIMIT=${3:-1}
source "$(dirname "$0")/lib.sh"
mkdir -p "$OUT"
echo "model,layer,branch_and_bound,full_model,variables,seconds,branch_nodes,gap,search_gap,objective_us,ep_objective_us,bound_us,answer_from" \
  > "$OUT/milp_layers.csv"
printf '%-18s %6s %5s %5s %9s %9s %7s %13s %11s %13s\n' model layers 'b&b' full "mean s" "max s" nodes "gap mean/max" "cbc gap" "objective/EP"
for model in mixtral-8x7b deepseek-v2-lite qwen2-57b-a14b; do
  trace=(--trace synthetic --skew 0.3)
  [ "$model" = mixtral-8x7b ] && trace=(--trace mtbench-math)  # --skew is refused with a trace file
  [ "$model" = qwen2-57b-a14b ] && trace=(--trace synthetic --skew 0.6)
  "$BIN" place --hw nmp-4x8-5t50g --model "$model" "${trace[@]}" --batch 64 \
    --strategy hdmoe-node --strategy-opt hdmoe-node.selection_batches=0 --time-limit "$LIMIT" --quiet --out "$tmp/p.json"
  python3 - "$model" "$tmp/p.json" "$OUT/milp_layers.csv" <<'PY'
import json, sys
model, path, csv = sys.argv[1:]
s = json.load(open(path))["solver"]
L = s["layers"]
with open(csv, "a") as f:
    for l in L:
        f.write(",".join(str(x) for x in [model, l["layer"], int(l["branch_and_bound"]), int(l["full_model"]),
                l["variables"], round(l["seconds"], 3), l["branch_nodes"], round(l["gap"], 4),
                round(l["search_gap"], 4), round(l["objective_us"], 2), round(l["ep_objective_us"], 2),
                round(l["bound_us"], 2), l["answer_from"]]) + "\n")
n = len(L)
sec = [l["seconds"] for l in L]
gap = [l["gap"] for l in L]
print("%-18s %6d %5d %5d %9.2f %9.2f %7.0f %6.1f%%/%4.1f%% %10.1f%% %13.3f" % (
    model, n, sum(l["branch_and_bound"] for l in L), sum(l["full_model"] for l in L), sum(sec) / n, max(sec),
    sum(l["branch_nodes"] for l in L) / n, 100 * sum(gap) / n, 100 * max(gap),
    100 * max(l["search_gap"] for l in L), s["objective_us_sum"] / s["ep_objective_us_sum"]))
PY
done
