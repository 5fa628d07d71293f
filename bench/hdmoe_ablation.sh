#!/usr/bin/env bash
# HD-MoE ablations (docs/RESULTS.md), cycle fidelity where traffic matters. Not a test.
#  1. link balance: convergence of Bayesian optimisation vs annealing vs random search;
#  2. node only vs node + link: MoE communication time;
#  3. dynamic pre-broadcast of 2 and 5 experts per layer, with a placement built on one scenario
#     (synthetic seed 1, or the MT-Bench 'math' category) and evaluated on others: static against
#     the paper's admission (Eq. 17 window) and ours (what pays on the flow model of the layer);
#     then the same on an EP placement, where imbalance is large;
#  4. a Mixtral placement built on one MT-Bench category, evaluated on others;
#  5. dynamic pre-broadcast of 2 and 5 experts on a non-TP placement (the MILP's own answer), copies
#     to every node, the paper's setting (DeepSeek-V2-Lite, 2.5 TFLOP/s, 75 GB/s, batch 512);
#  6. the compute tail of EP and of node balance, DeepSeek-V2-Lite on the five hardware points (the
#     paper's Fig. 11), flow fidelity.
# Usage: bench/hdmoe_ablation.sh [path/to/nmpsim] [SECTIONS, e.g. 3 or 1,2,4; default all]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
SECTIONS=",${2:-1,2,3,4,5,6},"
want() { [[ "$SECTIONS" == *",$1,"* ]]; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
col() { awk -F, -v s="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == s { print $c[k] }' "$1/summary.csv"; }

if want 1; then
echo "== 1. link-balance convergence (deepseek-v2-lite, nmp-4x8-10t25g, best cost in us after N evaluations)"
"$BIN" place --hw nmp-4x8-10t25g --model deepseek-v2-lite --strategy hdmoe --batch 64 --evaluations 150 \
  --convergence "$tmp/conv.csv" --out "$tmp/ds.json" | tail -2
awk -F, 'NR == 1 || $1 == 1 || $1 == 10 || $1 == 25 || $1 == 50 || $1 == 100 || $1 == 150' "$tmp/conv.csv"
fi

if want 2; then
echo
echo "== 2. node balance only vs node + link balance, cycle fidelity, batch 64"
for hw in nmp-4x8-5t50g nmp-4x8-10t25g; do
  "$BIN" run --hw "$hw" --model deepseek-v2-lite --strategy hdmoe-node,hdmoe --batch 64 --steps 2 --no-plots --quiet \
    --out "$tmp/nl"
  printf '%-18s MoE comm: node %.1f us, node+link %.1f us (%.2fx); expert imbalance (node) %.1f us\n' "$hw" \
    "$(col "$tmp/nl" hdmoe-node moe_comm_us)" "$(col "$tmp/nl" hdmoe moe_comm_us)" \
    "$(awk -v a="$(col "$tmp/nl" hdmoe-node moe_comm_us)" -v b="$(col "$tmp/nl" hdmoe moe_comm_us)" 'BEGIN { print a / b }')" \
    "$(col "$tmp/nl" hdmoe-node expert_imbalance_us)"
done

fi

if want 3; then
# TBT of one run, and how many experts went out (issued/considered/cancelled).
pbrun() {  # pbrun HW SEED STRATEGY BATCH PB PREDICT ADMIT
  local extra=()
  [ "$5" != 0 ] && extra=(--prebroadcast "$5" --predict "$6" --prebroadcast-admit "$7")
  "$BIN" run --hw "$1" --model deepseek-v2-lite --seed "$2" --strategy "$3" --batch "$4" --steps 1 "${extra[@]}" \
    --no-plots --quiet --out "$tmp/d" > /dev/null
  col "$tmp/d" "$(awk -F, 'NR == 2 { print $1 }' "$tmp/d/summary.csv")" mean_tbt_us
}
# One table row: static, then pb=2 and 5 with each predictor under each admission, as TBT / static.
pbrow() {  # pbrow LABEL HW SEED STRATEGY BATCH
  local static line t
  static=$(pbrun "$2" "$3" "$4" "$5" 0 previous flow)
  line=$(printf '| %s | %.0f' "$1" "$static")
  for pred in previous trace; do
    for pb in 2 5; do
      for admit in window flow; do
        t=$(pbrun "$2" "$3" "$4" "$5" "$pb" "$pred" "$admit")
        line="$line $(awk -v t="$t" -v s="$static" 'BEGIN { printf "| %.3f", t / s }')"
      done
    done
  done
  echo "$line |"
}
echo
echo "== 3. dynamic pre-broadcast, deepseek-v2-lite, cycle fidelity, 1 step: TBT / static TBT"
echo "   (w = the paper's Eq. 17 window admission, f = ours: only what pays on the flow model of the layer)"
echo "| placement, hardware, eval seed | static TBT us | 2 prev w | 2 prev f | 5 prev w | 5 prev f | 2 trace w | 2 trace f | 5 trace w | 5 trace f |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for hw in nmp-4x8-2.5t75g nmp-4x8-5t50g; do
  "$BIN" place --hw "$hw" --model deepseek-v2-lite --strategy hdmoe --batch 512 --seed 1 --out "$tmp/p_$hw.json" > /dev/null
  for seed in 2 3; do pbrow "HD-MoE (seed 1), $hw, seed $seed" "$hw" "$seed" "$tmp/p_$hw.json" 512; done
done
pbrow "EP, nmp-4x8-2.5t75g, seed 1, batch 256" nmp-4x8-2.5t75g 1 ep 256
fi

if want 4; then
echo
echo "== 4. Mixtral, placement built on MT-Bench 'math', evaluated on 'coding' and 'writing' (cycle, batch 64)"
"$BIN" place --hw nmp-4x8-5t50g --model mixtral-8x7b --trace mtbench-math --strategy hdmoe \
  --batch 64 --out "$tmp/mx.json" > /dev/null
for cat in math coding writing; do
  "$BIN" run --hw nmp-4x8-5t50g --model mixtral-8x7b --trace "mtbench-${cat}" \
    --strategy "tp,ep,$tmp/mx.json" --batch 64 --steps 2 --prebroadcast 2 --no-plots --quiet --out "$tmp/m"
  printf '%-8s TBT us: tp %.0f  ep %.0f  hdmoe(math)+dynamic %.0f\n' "$cat" "$(col "$tmp/m" tp mean_tbt_us)" \
    "$(col "$tmp/m" ep mean_tbt_us)" "$(col "$tmp/m" hdmoe mean_tbt_us)"
done
fi

if want 5; then
echo
echo "== 5. dynamic pre-broadcast on the MILP's own placement (no held-out selection), copies to every node,"
echo "   deepseek-v2-lite, nmp-4x8-2.5t75g, batch 512, built on seed 1, evaluated on seed 2, cycle, 1 step"
echo "| experts | predictor | static TBT us | window admission / static | flow admission / static |"
echo "|---|---|---|---|---|"
"$BIN" place --hw nmp-4x8-2.5t75g --model deepseek-v2-lite --strategy hdmoe-node --batch 512 --seed 1 \
  --strategy-opt hdmoe-node.selection_batches=0 --quiet --out "$tmp/milp.json"
dyn() {  # dyn EXPERTS PREDICT ADMIT: TBT
  local extra=()
  [ "$1" != 0 ] && extra=(--prebroadcast "$1" --prebroadcast-targets 0 --predict "$2" --prebroadcast-admit "$3")
  "$BIN" run --hw nmp-4x8-2.5t75g --model deepseek-v2-lite --seed 2 --strategy "$tmp/milp.json" --batch 512 \
    --steps 1 "${extra[@]}" --no-plots --quiet --out "$tmp/dy" > /dev/null
  col "$tmp/dy" hdmoe-node mean_tbt_us
}
static=$(dyn 0 trace flow)
for pb in 2 5; do
  for pred in trace previous; do
    w=$(dyn "$pb" "$pred" window)
    f=$(dyn "$pb" "$pred" flow)
    awk -v pb="$pb" -v p="$pred" -v s="$static" -v w="$w" -v f="$f" \
      'BEGIN { printf "| %d | %s | %.0f | %.3f | %.3f |\n", pb, p, s, w / s, f / s }'
  done
done
fi

if want 6; then
echo
echo "== 6. compute tail (slowest node's expert time minus the mean over nodes with expert work, per step),"
echo "   deepseek-v2-lite, batch 64, 2 steps, flow fidelity (the paper's Fig. 11: node balance cuts EP's 2.0x)"
echo "| hardware | EP tail us | node balance tail us | EP / node | EP moe compute us | node moe compute us |"
echo "|---|---|---|---|---|---|"
for hw in nmp-4x8-2.5t75g nmp-4x8-5t50g nmp-4x8-10t25g nmp-4x4-5t50g nmp-8x8-5t50g; do
  "$BIN" run --hw "$hw" --model deepseek-v2-lite --strategy ep,hdmoe-node --batch 64 --steps 2 --fidelity flow \
    --no-plots --quiet --out "$tmp/ct"
  awk -v hw="$hw" -v et="$(col "$tmp/ct" ep expert_imbalance_us)" -v nt="$(col "$tmp/ct" hdmoe-node expert_imbalance_us)" \
    -v ec="$(col "$tmp/ct" ep moe_compute_us)" -v nc="$(col "$tmp/ct" hdmoe-node moe_compute_us)" \
    'BEGIN { r = (nt > 0) ? sprintf("%.2f", et / nt) : "inf"; printf "| %s | %.0f | %.0f | %s | %.0f | %.0f |\n", hw, et, nt, r, ec, nc }'
done
fi
