#!/usr/bin/env bash
# Cost laws (docs/PERFORMANCE.md "Scale"): wall time and peak memory of one decode step against the
# nodes (8x8, 16x16, 32x32, 64x64) and against the batch (32x32), at both fidelities, one run at a time
# under /usr/bin/time; then the fitted exponents (least squares of log cost on log size) and, with
# gnuplot, a log-log plot. A benchmark, not a test.
# Usage: bench/scale.sh [NMPSIM] [OUT.png] [TIMEOUT_S]
#   prints TSV: sweep, fidelity, nodes, batch, wall_s, peak_rss_mib, link_gbytes (the bytes all links
#   carried: the network's work), exit (124: stopped at the timeout)
# About 5 minutes on a 2-core machine (the slowest run, cycle fidelity at 64x64, about a minute).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/apps/nmpsim}
png=${2:-}
limit=${3:-900}
source bench/lib.sh
# A small DeepSeek-like model: 64 experts, top-4, 2 MoE layers, hidden 512, so that nodes and batch,
# not the model's size, set the work.
model="$tmp/scale-tiny.json"
printf '{"name": "scale-tiny", "experts": 64, "top_k": 4, "moe_layers": 2, "hidden": 512, "intermediate": 1024,
 "attention": {"kind": "gqa", "heads": 16, "kv_heads": 4, "head_dim": 32}}\n' > "$model"
out="$tmp/runs.tsv"
measure() {  # measure SWEEP FIDELITY MESH BATCH
  local sweep=$1 fid=$2 m=$3 b=$4 jobs=()
  [ "$fid" = cycle ] && jobs=(--jobs 1)
  timeout "$limit" /usr/bin/time -f "%M %e" -o "$tmp/time" "$bin" run --fidelity "$fid" "${jobs[@]}" --no-plots \
    --quiet --steps 1 --no-cache --hw nmp-8x8-5t50g --set mesh.width="$m" --set mesh.height="$m" --model "$model" \
    --attn-tp 16 --batch "$b" --strategy ep --out "$tmp/o" > /dev/null 2> "$tmp/err"
  local code=$? kb=0 sec=$limit gb=0
  if [ "$code" -ne 124 ]; then read -r kb sec < <(tail -1 "$tmp/time"); fi
  if [ "$code" -eq 0 ]; then
    gb=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "bytes") c = i; next } { s += $c } END { print s / 1e9 }' \
      "$tmp/o/links.csv")
  fi
  printf '%s\t%s\t%d\t%d\t%s\t%.1f\t%.3f\t%d\n' "$sweep" "$fid" $((m * m)) "$b" "$sec" "$(echo "$kb / 1024" | bc -l)" \
    "$gb" "$code" | tee -a "$out"
}
printf 'sweep\tfidelity\tnodes\tbatch\twall_s\tpeak_rss_mib\tlink_gbytes\texit\n'
for fid in flow cycle; do
  for m in 8 16 32 64; do measure nodes "$fid" "$m" 256; done
  for b in 64 1024 4096; do measure batch "$fid" 32 "$b"; done
done
# The batch sweep shares the 32x32 batch-256 point of the nodes sweep.
awk -F'\t' -v OFS='\t' '$1 == "nodes" && $3 == 1024 { $1 = "batch"; print }' "$out" >> "$out"
python3 - "$out" "$tmp" <<'PY'
# The fitted exponents, and each sweep's points in order of size for the plot ($tmp/SWEEP_FID.dat).
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
for sweep, col in (("nodes", 2), ("batch", 3)):
    for fid in ("flow", "cycle"):
        done = sorted((r for r in rows if r[0] == sweep and r[1] == fid and r[7] == "0"), key=lambda r: int(r[col]))
        with open(f"{sys.argv[2]}/{sweep}_{fid}.dat", "w") as f:
            f.writelines("\t".join(r) + "\n" for r in done)
        pts = [(float(r[col]), float(r[4]), float(r[5]), float(r[6])) for r in done if min(map(float, r[4:7])) > 0]
        if len(pts) < 2:
            continue
        def slope(i):
            xs = [math.log(p[0]) for p in pts]; ys = [math.log(p[i]) for p in pts]
            mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
            return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        print(f"# {fid} against {sweep}: time ~ {sweep}^{slope(1):.2f}, peak memory ~ {sweep}^{slope(2):.2f}, "
              f"link bytes ~ {sweep}^{slope(3):.2f} ({len(pts)} points)")
PY
if [ -n "$png" ] && command -v gnuplot > /dev/null; then
  # gnuplot sees no user string: it reads and writes fixed names in the scratch directory.
  (cd "$tmp" && gnuplot) <<'GP'
set terminal pngcairo noenhanced size 1100,450 font ",11"
set output "scale.png"
set multiplot layout 1,2
set logscale xy
set grid
set key top left
set ylabel "wall time (s), peak memory (MiB)"
set title "one decode step against nodes (batch 256)"
set xlabel "nodes"
plot "nodes_flow.dat" u 3:5 w lp t "flow: time", "nodes_cycle.dat" u 3:5 w lp t "cycle: time", \
     "nodes_flow.dat" u 3:6 w lp dt 2 t "flow: memory", "nodes_cycle.dat" u 3:6 w lp dt 2 t "cycle: memory"
set title "against batch (32x32 = 1024 nodes)"
set xlabel "batch (tokens)"
plot "batch_flow.dat" u 4:5 w lp t "flow: time", "batch_cycle.dat" u 4:5 w lp t "cycle: time", \
     "batch_flow.dat" u 4:6 w lp dt 2 t "flow: memory", "batch_cycle.dat" u 4:6 w lp dt 2 t "cycle: memory"
unset multiplot
GP
  cp "$tmp/scale.png" "$png"
fi
if awk -F'\t' '$8 != 0 && $8 != 124 { bad = 1 } END { exit !bad }' "$out"; then
  echo "scale.sh: a run failed (exit column)" >&2
  exit 1
fi
