#!/usr/bin/env bash
# Regenerates docs/REPRODUCTION.md's HierMoE section (issue 37) and docs/hiermoe_speedups.png: training steps on
# the paper's testbed (gpu-cluster-32) with Megatron-LM, Tutel-2DH, HD2-MoE, HD-MoE and HierMoE, the swap
# variants (cap, max, gamma), the sensitivity to each assumption, four wafers at the cluster's ratios, Table II,
# the Fig. 9 fit, Table IV's K / E / G sweep, HierD-ES every N steps, and cycle-fidelity checks. Not a test.
# Usage: bash bench/reproduce/hiermoe.sh [path/to/nmpsim] [OUTDIR]   (OUTDIR keeps every run; default a temp dir)
#        RESUME=1 bash bench/reproduce/hiermoe.sh BIN OUTDIR   reuses the runs an interrupted invocation finished
set -euo pipefail
source "$(dirname "$0")/common.sh"
docs="$here/../docs"
source "$here/lib.sh"
resume=()
[ "${RESUME:-0}" = 1 ] && resume=(--resume)
step "testbed, swaps, sensitivity, Table II, fit, Table IV, swap intervals, four wafers, cycle checks"
python3 "$here/hiermoe_repro.py" --bin "$BIN" --out "$OUT" \
  --sections testbed,swap,sens,table2,fit,table4,dims,interval,levels,cycle "${resume[@]}"
figure() {
  # The figure's data, drawn in the scratch directory from fixed file names (no path in gnuplot's program).
  python3 - "$OUT" "$tmp" "$here/reproduce" <<'PY'
import csv, sys
out, tmp = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from hiermoe_claims import PAPER_INTERVAL, PAPER_PER_MODEL, PAPER_TABLE4
rows = list(csv.DictReader(open(out + "/testbed.csv"))) + [dict(r, variant="swap") for r in csv.DictReader(open(out + "/swap.csv"))
                                                           if r["variant"] == "uncapped, smooth max"]
# (variant, strategy) -> the bar's name, its key in PAPER_PER_MODEL
pick = {("", "hiermoe-2dh"): ("Tutel-2DH", "hiermoe-2dh"), ("HD2-MoE (d = 2)", "hiermoe"): ("HD2-MoE", "hd2"),
        ("", "hiermoe"): ("HD-MoE", "hiermoe"), ("swap", "hiermoe-swap"): ("HierMoE", "hiermoe-swap")}
with open(tmp + "/testbed.dat", "w") as f:
    f.write("strategy DeepSeek-V3-half Qwen3-30B-A3B DeepSeek-V3(paper) Qwen3(paper)\n")
    for (variant, strategy), (name, key) in pick.items():
        vals = []
        for model in ("deepseek-v3-half-6l", "qwen3-30b-a3b-32l"):
            meg = [r for r in rows if r["model"] == model and r["strategy"] == "hiermoe-megatron"][0]
            new = [r for r in rows if r["model"] == model and r["strategy"] == strategy and r["variant"] == variant][0]
            vals.append(float(meg["moe_comm_us"]) / float(new["moe_comm_us"]))
        f.write("%s %.3f %.3f %.2f %.2f\n" % (name, *vals, *(PAPER_PER_MODEL[m][key] for m in (
            "deepseek-v3-half-6l", "qwen3-30b-a3b-32l"))))
t4 = {(int(r["top_k"]), int(r["experts"]), int(r["gpus"]), r["variant"], r["strategy"]): r
      for r in csv.DictReader(open(out + "/table4.csv"))}
with open(tmp + "/table4.dat", "w") as f:
    f.write("point ours paper\n")
    for k, p in ((k, v[2]) for k, v in PAPER_TABLE4.items()):
        v = float(t4[k + ("", "hiermoe-megatron")]["moe_comm_us"]) / float(t4[k + ("", "hiermoe-swap")]["moe_comm_us"])
        f.write("K%d/E%d/G%d %.3f %.2f\n" % (k + (v, p)))
iv = list(csv.DictReader(open(out + "/interval.csv")))
base = {r["trace"]: r for r in iv if r["swap_every"] == "0"}
with open(tmp + "/interval.dat", "w") as f:
    for n in (1, 2, 4, 8):
        vals = []
        for trace in sorted(base):  # "default", then "drifting ..."
            r = [x for x in iv if x["trace"] == trace and x["swap_every"] == str(n)][0]
            vals += [float(base[trace][k]) / float(r[k]) for k in ("steady_moe_comm_us", "steady_step_us")]
        f.write("%d %.4f %.4f %.4f %.4f %.2f\n" % (n, *vals, PAPER_INTERVAL[n]))
PY
  (cd "$tmp" && gnuplot -e "set terminal pngcairo size 1500,420 font 'sans,10' noenhanced; set output 'fig.png';
    set multiplot layout 1,3; set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8;
    set grid ytics; set yrange [0:*]; set key top left; set ylabel 'all-to-all speed-up over Megatron-LM';
    set title 'Fig. 11 on gpu-cluster-32: training step, 1024 tokens per GPU';
    plot 'testbed.dat' using 2:xtic(1) title columnhead, '' using 3 title columnhead,
         '' using 4 title columnhead fs pattern 4, '' using 5 title columnhead fs pattern 5, 1 with lines lc 'black' notitle;
    set title 'Table IV: HierMoE over Megatron-LM (Qwen3 layer)'; set xtics rotate by -30;
    plot 'table4.dat' using 2:xtic(1) title 'ours', '' using 3 title 'paper', 1 with lines lc 'black' notitle;
    set style data linespoints; set xtics norotate; set logscale x 2; set xrange [0.8:10]; set yrange [0.85:1.25];
    set xlabel 'HierD-ES every N steps'; set ylabel 'over HD-MoE (steps 9-32)'; set key top right;
    set title 'Swaps at run time (Qwen3 layer)';
    plot 'interval.dat' using 1:2 title 'all-to-all, default trace', '' using 1:3 title 'step, default trace',
         '' using 1:4 title 'all-to-all, drifting', '' using 1:5 title 'step, drifting', '' using 1:6 title 'paper',
         1 with lines lc 'black' notitle;
    unset multiplot")
  [ -f "$tmp/fig.png" ] && publish "$tmp/fig.png" "$docs/hiermoe_speedups.png"
}
# The figure is not needed for the section: a failure to draw it is a warning, not the end of the run.
if command -v gnuplot > /dev/null; then
  figure || echo "warning: docs/hiermoe_speedups.png not redrawn" >&2
fi
elapsed=$(( $(date +%s) - start ))
[ "${RESUME:-0}" = 1 ] && elapsed=0  # runs from several invocations: no end-to-end time to state
python3 "$here/reproduce/hiermoe_section.py" "$OUT" "$docs/REPRODUCTION.md" "$elapsed"
step "done: docs/REPRODUCTION.md, outputs in $OUT"
