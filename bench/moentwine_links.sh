#!/usr/bin/env bash
# MoEntwine link heatmaps (docs/RESULTS.md "MoEntwine on wafer-scale chips"): the payload every link
# carries per decode step in the all-reduce windows (TP all-gathers and reduce-scatters, the token
# all-gather, the partial reduce-scatter) and in the all-to-all windows (dispatch, combine), for the
# baseline mapping and ER-mapping. Qwen3-235B at INT8, uniform gating, 256 tokens per TP group, one step
# at flow fidelity; the payload per link comes from links.csv (`*_payload_bytes`, XY routes of the
# schedules' transfers). Draws docs/moentwine_links.png (needs gnuplot) and prints each window's
# busiest link. Not a test.
# Usage: bench/moentwine_links.sh [path/to/nmpsim] [hardware] [attn-tp]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
HW=${2:-wsc-4x4}
TP=${3:-4}
OUT_PNG=${OUT_PNG:-docs/moentwine_links.png}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
[[ "$HW" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "error: hardware: '$HW' is not a preset name" >&2; exit 2; }
[[ "$TP" =~ ^[1-9][0-9]*$ ]] || { echo "error: attn-tp: '$TP' is not a positive integer" >&2; exit 2; }
read -r width height < <("$BIN" hw --preset "$HW" --print-json |
  python3 -c 'import json, sys; m = json.load(sys.stdin)["mesh"]; print(m["width"], m["height"])')
nodes=$((width * height))
batch=$((256 * nodes / TP))
"$BIN" run --hw "$HW" --attn-tp "$TP" --model qwen3-235b-a22b --weight-bytes 1 --skew 0 --batch "$batch" --steps 1 \
  --fidelity flow --strategy moentwine-baseline,moentwine-er --no-plots --quiet --out "$tmp/r"
csv="$tmp/r/links.csv"
# One data file per mapping and window: arrow start x y, direction dx dy, GB (both directions side by side).
for s in moentwine-baseline moentwine-er; do
  for w in allreduce moe_comm; do
    awk -F, -v s="$s" -v w="${w}_payload_bytes" '
      NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      $1 == s { dx = $6 - $4; dy = $7 - $5; off = (dx > 0 || dy > 0) ? 0.09 : -0.09
                printf "%g %g %g %g %g\n", $4 + 0.15 * dx + (dy ? off : 0), $5 + 0.15 * dy + (dx ? off : 0),
                       0.7 * dx, 0.7 * dy, $c[w] / 1e9 }' "$csv" > "$tmp/$s-$w.dat"
    printf '%-20s %-10s busiest link %.3f GB, links idle %d of %d\n' "$s" "$w" \
      "$(sort -g -k5 "$tmp/$s-$w.dat" | tail -1 | awk '{print $5}')" \
      "$(awk '$5 == 0' "$tmp/$s-$w.dat" | wc -l)" "$(wc -l < "$tmp/$s-$w.dat")"
  done
done
command -v gnuplot > /dev/null || { echo "gnuplot not installed: no picture"; exit 0; }
max=$(cat "$tmp"/*.dat | sort -g -k5 | tail -1 | awk '{print $5}')
gnuplot <<EOF
set terminal pngcairo size 1100,1000 font 'sans,10' noenhanced
set output '$tmp/plot.png'
set palette defined (0 '#f7f7f7', 0.3 '#fdd49e', 0.6 '#fc8d59', 1 '#b30000')
set cbrange [0:$max]
set cblabel 'GB per decode step'
set size ratio -1
unset key
set multiplot layout 2,2 title "Link payload per window, Qwen3-235B on $HW, TP $TP, 256 tokens per TP group (arrows along the traffic)"
set xrange [-0.6:$width - 0.4]
set yrange [$height - 0.4:-0.6]
set title 'baseline mapping: all-reduce windows'
plot '$tmp/moentwine-baseline-allreduce.dat' using 1:2:3:4:5 with vectors head filled size 0.08,20 lw 4 lc palette
set title 'baseline mapping: all-to-all windows'
plot '$tmp/moentwine-baseline-moe_comm.dat' using 1:2:3:4:5 with vectors head filled size 0.08,20 lw 4 lc palette
set title 'ER-mapping: all-reduce windows'
plot '$tmp/moentwine-er-allreduce.dat' using 1:2:3:4:5 with vectors head filled size 0.08,20 lw 4 lc palette
set title 'ER-mapping: all-to-all windows'
plot '$tmp/moentwine-er-moe_comm.dat' using 1:2:3:4:5 with vectors head filled size 0.08,20 lw 4 lc palette
unset multiplot
EOF
publish "$tmp/plot.png" "$OUT_PNG"
echo "wrote $OUT_PNG"
