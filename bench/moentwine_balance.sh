#!/usr/bin/env bash
# MoEntwine balancing (docs/RESULTS.md "MoEntwine: balancing with drift"): a skewed synthetic trace whose
# popular experts drift between 4 scenarios, flow fidelity, weights at INT8. Five balancers through the
# one policy `moentwine-balancer`:
#   none          slots=0 (no replicas; the policy only measures the load)
#   greedy        greedy EPLB, inference paused while weights move, re-planned at most every 10 steps
#   invasive      Algorithm 1 (topology-aware), paused, at most every 10 steps
#   non-invasive  Algorithm 1, staged in the cold windows, whenever needed (beta = 0)
#   free          Algorithm 1 with weights that move for free (the reference for exposed overhead)
# Two systems: DeepSeek-V2 with ER-mapping on one 4x4 wafer (10 experts per die), and DeepSeek-V3 with
# HER-mapping on four 8x8 wafers (one expert per die, the paper's EP = 256; 8 MoE layers instead of 58:
# the layers are alike, so shares and ratios carry over). Two batch regimes each: decode (256 tokens
# per TP group) and prefill-like (2048 per TP group).
# Prints a markdown table and draws the per-step peak / mean device load (decode) to
# docs/moentwine_balance.png (if gnuplot is installed). Not a test. About 15 minutes.
# Usage: bench/moentwine_balance.sh [path/to/nmpsim] [steps]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
STEPS=${2:-32}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
P=moentwine-balancer
declare -A opts=(
  [none]="slots=0"
  [greedy]="planner=greedy migrate=paused beta=10"
  [invasive]="planner=topology migrate=paused beta=10"
  [non-invasive]="planner=topology migrate=staged beta=0"
  [free]="planner=topology migrate=free beta=0"
)
order="none greedy invasive non-invasive free"
"$BIN" model --model deepseek-v3 --print-json | python3 -c '
import json, sys
m = json.load(sys.stdin)
m.update(moe_layers=8, dense_layers=0, name="deepseek-v3-8-moe-layers")
json.dump(m, open(sys.argv[1], "w"))' "$tmp/v3.json"
setups="4x4:wsc-4x4:4:moentwine-er:deepseek-v2:16 4wafer:wsc-4wafer-8x8:16:moentwine-her:$tmp/v3.json:256"
for setup in $setups; do
  IFS=: read -r sys hw tp strategy model dies <<< "$setup"
  for regime in decode:256 prefill:2048; do
    IFS=: read -r name per_group <<< "$regime"
    batch=$((per_group * dies / tp))
    for b in $order; do
      args=()
      for o in ${opts[$b]}; do args+=(--policy-opt "$P.$o"); done
      "$BIN" run --hw "$hw" --attn-tp "$tp" --model "$model" --weight-bytes 1 --batch "$batch" --steps "$STEPS" \
        --synthetic-tokens $((batch * STEPS)) --scenarios 4 --drift 0.5 --skew 1.0 --fidelity flow \
        --strategy "$strategy" --policy "$P" "${args[@]}" --no-plots --quiet --out "$tmp/$sys-$name-$b"
    done
  done
done
python3 - "$tmp" "$STEPS" "$(echo $setups | sed 's/:[^ ]*//g')" $order <<'EOF'
import json, sys
tmp, steps, systems, order = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
print("| system | regime | balancer | peak/mean load | MoE compute us | MoE comm us | all-reduce us | TBT us | "
      "exposed migration us | replicas landed (GB) | migration GB x hops: staged local + global / paused |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for system in systems:
    for regime in ("decode", "prefill"):
        runs = {}
        for b in order:
            s = json.load(open("%s/%s-%s-%s/summary.json" % (tmp, system, regime, b)))
            r = list(s["strategies"].values())[0]
            runs[b] = (r, r["policies"]["moentwine-balancer"])
            with open("%s/%s-%s-%s.dat" % (tmp, system, regime, b), "w") as f:
                for i, v in enumerate(runs[b][1]["peak_to_mean_load_per_step"]):
                    f.write("%d %g\n" % (i, v))
        free = runs["free"][0]
        for b in order:
            r, p = runs[b]
            # Exposed: the pause (paused); staged: the all-reduce slowed against the free reference (its
            # time does not depend on the expert balance) plus the migration still running after a
            # step's last layer, per step; in brackets also the MoE communication's change, which mixes
            # migration traffic with the (worse) balance of replicas that land later.
            exposed = "%.0f" % r.get("other_us", 0)
            if p["options"]["migrate"] == "staged" and p["segments"] > 0:
                low = r["allreduce_us"] - free["allreduce_us"] + p["drain_tail_us"] / max(1, steps - 1)
                exposed = "%.0f (%.0f)" % (low, low + r["moe_comm_us"] - free["moe_comm_us"])
            print("| %s | %s | %s | %.2f | %.0f | %.0f | %.0f | %.0f | %s | %d (%.1f) | %.0f + %.0f / %.0f |" % (
                system, regime, b, p["mean_peak_to_mean_load"], r["moe_compute_us"], r["moe_comm_us"],
                r["allreduce_us"], r["mean_tbt_us"], exposed, p["replicas_landed"], p["replica_bytes"] / 1e9,
                p["migration_link_bytes_local"] / 1e9, p["migration_link_bytes_global"] / 1e9,
                p["migration_link_bytes_paused"] / 1e9))
EOF
if command -v gnuplot > /dev/null; then
  out=${OUT_PNG:-docs/moentwine_balance.png}
  plot() {  # the decode runs of one system
    local p=""
    for b in none greedy invasive non-invasive; do p+="'$tmp/$1-decode-$b.dat' with linespoints title '$b',"; done
    echo "${p%,}"
  }
  gnuplot -e "set terminal pngcairo size 1000,760 font 'sans,10' noenhanced; set output '$out';
    set multiplot layout 2,1; set xlabel 'decode step'; set ylabel 'peak / mean device load'; set grid;
    set key top right; set logscale y;
    set title 'DeepSeek-V2 on a 4x4 wafer (ER, 10 experts per die), drifting skewed trace, 256 tokens per TP group';
    plot $(plot 4x4);
    set title 'DeepSeek-V3 on four 8x8 wafers (HER, one expert per die), same trace settings';
    plot $(plot 4wafer); unset multiplot"
  echo "wrote $out"
fi
