#!/usr/bin/env bash
# MoEntwine balancing (docs/RESULTS.md "MoEntwine: balancing with drift"): a skewed synthetic trace whose
# popular experts drift between 4 scenarios, flow fidelity, weights at INT8. Five balancers through the
# one policy `moentwine-balancer`:
#   none          slots=0 (no replicas; the policy only measures the load)
#   greedy        greedy EPLB, inference paused while weights move, re-planned at most every 10 steps
#   invasive      Algorithm 1 (topology-aware), paused, at most every 10 steps
#   non-invasive  Algorithm 1, staged in the cold windows, whenever needed (beta = 0)
#   free          Algorithm 1 with weights that move for free (the reference for exposed overhead)
# Three systems: DeepSeek-V2 with ER-mapping on one 4x4 wafer (10 experts per die), DeepSeek-V3 with
# HER-mapping on four 8x8 wafers (one expert per die, the paper's EP = 256; 8 MoE layers instead of 58:
# the layers are alike, so shares and ratios carry over), both on the synthetic trace in two batch
# regimes, decode (256 tokens per TP group) and prefill-like (2048 per TP group); and Mixtral-8x7B with
# ER on a 4x2 wafer (one expert per die, TP 2) on the real MT-Bench traces of four categories one after
# the other (math, coding, writing, roleplay: the paper's mixed scenario), decode only, 44 steps.
# Prints a markdown table and draws the per-step peak / mean device load (decode) to
# docs/moentwine_balance.png (if gnuplot is installed; OUT_PNG overrides the path). Not a test. About 15
# minutes per slot count. SLOTS is the shadow slots per die and MoE layer of every balancer but `none`
# (default 1). The 4x4 system also runs a hybrid regime (`--phase mixed`: its decode tokens plus one
# 2048-token prompt chunk per step, the paper's hybrid scheduling). With BAL_CSV set, the rows are also
# written there as CSV (bench/reproduce/moentwine_section.py reads it).
# Usage: bench/moentwine_balance.sh [path/to/nmpsim] [steps] [SLOTS]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
STEPS=${2:-32}
SLOTS=${3:-1}
[[ "$STEPS" =~ ^[1-9][0-9]*$ ]] || { echo "error: steps: '$STEPS' is not a positive integer" >&2; exit 2; }
[[ "$SLOTS" =~ ^[1-9][0-9]*$ ]] || { echo "error: SLOTS: '$SLOTS' is not a positive integer" >&2; exit 2; }
[ -f "$BIN" ] && [ -x "$BIN" ] || { echo "error: $BIN is not an executable (build first, or pass it)" >&2; exit 2; }
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
# The 4x2 wafer: wsc-4x4's dies and links on a 4 x 2 mesh. The mixed trace: the four categories' tokens
# in a row, every layer.
"$BIN" hw --preset wsc-4x4 --print-json | python3 -c '
import json, sys
h = json.load(sys.stdin)
h.update(name="wsc-4x2", mesh={"width": 4, "height": 2}, wafer={"width": 4, "height": 2})
json.dump(h, open(sys.argv[1], "w"))' "$tmp/wsc-4x2.json"
python3 - "$here/../data/traces/mixtral" "$tmp/mixed.json" <<'EOF'
import gzip, json, sys
out = {}
for c in ("math", "coding", "writing", "roleplay"):
    with gzip.open("%s/experts_%s_mixtral.json.gz" % (sys.argv[1], c), "rt") as f:
        for layer, tokens in json.load(f).items():
            out.setdefault(layer, []).extend(tokens)
json.dump(out, open(sys.argv[2], "w"))
EOF
# system:hardware:TP:strategy:model:dies:trace:steps:regimes. Zipf skews chosen so that without
# balancing the busiest die has 2.3-2.8x the mean load (the paper's Fig. 15 shows about 3x).
setups="4x4:wsc-4x4:4:moentwine-er:deepseek-v2:16:skew=1.0:$STEPS:decode,prefill,hybrid
4wafer:wsc-4wafer-8x8:16:moentwine-her:$tmp/v3.json:256:skew=0.3:$STEPS:decode,prefill
mixtral:$tmp/wsc-4x2.json:2:moentwine-er:mixtral-8x7b:8:$tmp/mixed.json:44:decode"
while IFS=: read -r sys hw tp strategy model dies trace steps regimes; do
  for name in ${regimes//,/ }; do
    per_group=256
    [ "$name" = prefill ] && per_group=2048
    batch=$((per_group * dies / tp))
    phase=() chunk=0
    [ "$name" = hybrid ] && phase=(--phase mixed --prompt-tokens 2048 --prefill-chunk 2048) chunk=2048
    targs=(--trace "$trace")
    [ "${trace#skew=}" != "$trace" ] &&
      targs=(--synthetic-tokens $(((batch + chunk) * steps)) --scenarios 4 --drift 0.5 --skew "${trace#skew=}")
    for b in $order; do
      args=()
      [ "$b" != none ] && args+=(--policy-opt "$P.slots=$SLOTS")
      for o in ${opts[$b]}; do args+=(--policy-opt "$P.$o"); done
      "$BIN" run --hw "$hw" --attn-tp "$tp" --model "$model" --weight-bytes 1 --batch "$batch" --steps "$steps" \
        "${phase[@]}" "${targs[@]}" --fidelity flow --strategy "$strategy" --policy "$P" "${args[@]}" --no-plots --quiet \
        --out "$tmp/$sys-$name-$b" < /dev/null
    done
  done
done <<< "$setups"
python3 - "$tmp" "$(sed 's/:.*//' <<< "$setups" | tr '\n' ' ')" "$SLOTS" $order <<'EOF'
import csv, json, os, sys
tmp, systems, slots, order = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4:]
rows = []
print("| system | regime | balancer | peak/mean load | MoE compute us | MoE comm us | all-reduce us | TBT us | "
      "exposed migration us | replicas landed (GB) | migration GB x hops: staged local + global / paused |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for system in systems:
    for regime in ("decode", "prefill", "hybrid"):
        if not os.path.exists("%s/%s-%s-none/summary.json" % (tmp, system, regime)):
            continue
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
            low = high = r.get("other_us", 0)
            if p["options"]["migrate"] == "staged" and p["segments"] > 0:
                steps = len(p["peak_to_mean_load_per_step"])
                low = r["allreduce_us"] - free["allreduce_us"] + p["drain_tail_us"] / max(1, steps - 1)
                high = low + r["moe_comm_us"] - free["moe_comm_us"]
                exposed = "%.0f (%.0f)" % (low, high)
            rows.append(dict(system=system, regime=regime, balancer=b, slots=0 if b == "none" else slots,
                             peak_to_mean=p["mean_peak_to_mean_load"], moe_compute_us=r["moe_compute_us"],
                             moe_comm_us=r["moe_comm_us"], allreduce_us=r["allreduce_us"], tbt_us=r["mean_tbt_us"],
                             exposed_us=low, exposed_with_comm_us=high, replicas=p["replicas_landed"],
                             migration_gb_hops=(p["migration_link_bytes_local"] + p["migration_link_bytes_global"] +
                                                p["migration_link_bytes_paused"]) / 1e9))
            print("| %s | %s | %s | %.2f | %.0f | %.0f | %.0f | %.0f | %s | %d (%.1f) | %.0f + %.0f / %.0f |" % (
                system, regime, b, p["mean_peak_to_mean_load"], r["moe_compute_us"], r["moe_comm_us"],
                r["allreduce_us"], r["mean_tbt_us"], exposed, p["replicas_landed"], p["replica_bytes"] / 1e9,
                p["migration_link_bytes_local"] / 1e9, p["migration_link_bytes_global"] / 1e9,
                p["migration_link_bytes_paused"] / 1e9))
if rows:
    with open(os.path.join(tmp, "rows.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
EOF
if [ -n "${BAL_CSV:-}" ]; then
  [ -f "$tmp/rows.csv" ] || { echo "error: no balancer rows to write to $BAL_CSV" >&2; exit 2; }
  publish "$tmp/rows.csv" "$BAL_CSV"
fi
if command -v gnuplot > /dev/null; then
  out=${OUT_PNG:-docs/moentwine_balance.png}
  plot() {  # the decode runs of one system
    local p=""
    for b in none greedy invasive non-invasive; do p+="'$tmp/$1-decode-$b.dat' with linespoints title '$b',"; done
    echo "${p%,}"
  }
  gnuplot -e "set terminal pngcairo size 1000,1100 font 'sans,10' noenhanced; set output '$tmp/plot.png';
    set multiplot layout 3,1; set xlabel 'decode step'; set ylabel 'peak / mean device load'; set grid;
    set key top right; set logscale y;
    set title 'DeepSeek-V2 on a 4x4 wafer (ER, 10 experts per die), Zipf 1.0 drifting over 4 scenarios, 256 tokens per TP group';
    plot $(plot 4x4);
    set title 'DeepSeek-V3 (8 MoE layers) on four 8x8 wafers (HER, one expert per die), Zipf 0.3, 256 tokens per TP group';
    plot $(plot 4wafer);
    set title 'Mixtral-8x7B on a 4x2 wafer (ER, one expert per die), MT-Bench math, coding, writing, roleplay in a row';
    unset logscale y; plot $(plot mixtral); unset multiplot"
  publish "$tmp/plot.png" "$out"
  echo "wrote $out"
fi
