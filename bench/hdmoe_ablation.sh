#!/usr/bin/env bash
# HD-MoE ablations (docs/RESULTS.md), cycle fidelity where traffic matters. Not a test.
#  1. link balance: convergence of Bayesian optimisation vs annealing vs random search;
#  2. node only vs node + link: MoE communication time;
#  3. dynamic pre-broadcast of 2 and 5 experts per layer, with a placement built on one scenario
#     (synthetic seed 1, or the MT-Bench 'math' category) and evaluated on others.
# Usage: bench/hdmoe_ablation.sh [path/to/nmpsim]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
col() { awk -F, -v s="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == s { print $c[k] }' "$1/summary.csv"; }

echo "== 1. link-balance convergence (deepseek-v2-lite, hdmoe-4x8-10t25g, best cost in us after N evaluations)"
"$BIN" place --hw hdmoe-4x8-10t25g --model deepseek-v2-lite --strategy hdmoe --batch 64 --evaluations 150 \
  --convergence "$tmp/conv.csv" --out "$tmp/ds.json" | tail -2
awk -F, 'NR == 1 || $1 == 1 || $1 == 10 || $1 == 25 || $1 == 50 || $1 == 100 || $1 == 150' "$tmp/conv.csv"

echo
echo "== 2. node balance only vs node + link balance, cycle fidelity, batch 64"
for hw in hdmoe-4x8-5t50g hdmoe-4x8-10t25g; do
  "$BIN" run --hw "$hw" --model deepseek-v2-lite --strategy hdmoe-node,hdmoe --batch 64 --steps 2 --no-plots --quiet \
    --out "$tmp/nl"
  printf '%-18s MoE comm: node %.1f us, node+link %.1f us (%.2fx); expert imbalance (node) %.1f us\n' "$hw" \
    "$(col "$tmp/nl" hdmoe-node moe_comm_us)" "$(col "$tmp/nl" hdmoe moe_comm_us)" \
    "$(awk -v a="$(col "$tmp/nl" hdmoe-node moe_comm_us)" -v b="$(col "$tmp/nl" hdmoe moe_comm_us)" 'BEGIN { print a / b }')" \
    "$(col "$tmp/nl" hdmoe-node expert_imbalance_us)"
done

echo
echo "== 3. dynamic pre-broadcast, deepseek-v2-lite, batch 512, placement built on synthetic seed 1"
for hw in hdmoe-4x8-2.5t75g hdmoe-4x8-5t50g; do
  "$BIN" place --hw "$hw" --model deepseek-v2-lite --strategy hdmoe --batch 512 --seed 1 --out "$tmp/p_$hw.json" > /dev/null
  for seed in 2 3; do
    line="$hw seed $seed:"
    for pb in 0 2 5; do
      for pred in previous trace; do
        [ "$pb" = 0 ] && [ "$pred" = trace ] && continue
        "$BIN" run --hw "$hw" --model deepseek-v2-lite --seed "$seed" --strategy "$tmp/p_$hw.json" --batch 512 --steps 1 \
          --prebroadcast "$pb" --predict "$pred" --no-plots --quiet --out "$tmp/d"
        line="$line  pb=$pb/$pred $(col "$tmp/d" hdmoe mean_tbt_us)"
      done
    done
    echo "$line"
  done
done

echo
echo "== 4. Mixtral, placement built on MT-Bench 'math', evaluated on 'coding' and 'writing' (cycle, batch 64)"
"$BIN" place --hw hdmoe-4x8-5t50g --model mixtral-8x7b --trace mtbench-math --strategy hdmoe \
  --batch 64 --out "$tmp/mx.json" > /dev/null
for cat in math coding writing; do
  "$BIN" run --hw hdmoe-4x8-5t50g --model mixtral-8x7b --trace "mtbench-${cat}" \
    --strategy "tp,ep,$tmp/mx.json" --batch 64 --steps 2 --prebroadcast 2 --no-plots --quiet --out "$tmp/m"
  printf '%-8s TBT us: tp %.0f  ep %.0f  hdmoe(math)+dynamic %.0f\n' "$cat" "$(col "$tmp/m" tp mean_tbt_us)" \
    "$(col "$tmp/m" ep mean_tbt_us)" "$(col "$tmp/m" hdmoe mean_tbt_us)"
done
