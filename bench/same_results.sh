#!/usr/bin/env bash
# Checks that two nmpsim binaries give the same results to the bit on the validation set of
# bench/flow_vs_cycle.configs (a refactoring must change no modelled result): every configuration at
# flow fidelity with tp, ep, cb and the HD-MoE placement (60 runs), and the quick subset (the first four
# configurations) at cycle fidelity with tp, ep, cb (12 runs). HD-MoE's placements are solved once, by
# the --before binary, and read from files by both (a time-limited MILP need not repeat itself).
# Compares summary.csv (less wall_seconds), layers.csv and links.csv byte for byte; prints one line per
# run and a verdict; exit 1 on any difference.
# --before-sed EXPR rewrites the configurations' arguments for the --before binary (a sed expression,
# e.g. 's/nmp-/hdmoe-/g' for a binary from before a preset was renamed).
# Usage: bench/same_results.sh --before BIN --after BIN [--out DIR] [--only LABEL,...] [--before-sed EXPR]
set -uo pipefail
cd "$(dirname "$0")/.."
BEFORE="" AFTER="" OUT="" ONLY="" BEFORE_SED=""
while [ $# -gt 0 ]; do
  case "$1" in
    --before) BEFORE=$2; shift 2 ;;
    --after) AFTER=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --only) ONLY=",$2,"; shift 2 ;;
    --before-sed) BEFORE_SED=$2; shift 2 ;;
    *) echo "usage: $0 --before BIN --after BIN [--out DIR] [--only LABEL,...] [--before-sed EXPR]" >&2; exit 2 ;;
  esac
done
for b in "$BEFORE" "$AFTER"; do
  [ -x "$b" ] || { echo "error: '$b' is not an executable (--before and --after)" >&2; exit 2; }
done
if [ -z "$OUT" ]; then
  OUT=$(mktemp -d)
  trap 'rm -rf "$OUT"' EXIT
fi
mkdir -p "$OUT/placements"
strip_wall() {  # summary.csv without its wall_seconds column
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall_seconds") w = i } { s = ""
    for (i = 1; i <= NF; i++) if (i != w) s = s (s == "" ? "" : ",") $i; print s }' "$1"
}
same() {  # same DIR_A DIR_B
  cmp -s <(strip_wall "$1/summary.csv") <(strip_wall "$2/summary.csv") && cmp -s "$1/layers.csv" "$2/layers.csv" &&
    cmp -s "$1/links.csv" "$2/links.csv"
}
runs=0 differ=0 n=0
while read -r label args; do
  case "$label" in ''|'#'*) continue ;; esac
  n=$((n + 1))
  [ -n "$ONLY" ] && [[ "$ONLY" != *",$label,"* ]] && continue
  placement="$OUT/placements/$label.json"
  before_args=$args
  [ -n "$BEFORE_SED" ] && before_args=$(sed -e "$BEFORE_SED" <<< "$args")
  if [ ! -f "$placement" ]; then
    # shellcheck disable=SC2086  # the configuration's arguments are words
    "$BEFORE" place --strategy hdmoe $before_args --quiet --out "$placement" || { echo "$label: place failed" >&2; exit 1; }
  fi
  for fid in flow cycle; do
    strategies="tp,ep,cb,$placement"
    if [ "$fid" = cycle ]; then
      [ "$n" -le 4 ] || continue
      strategies=tp,ep,cb
    fi
    for side in before after; do
      bin=$BEFORE side_args=$before_args
      [ "$side" = after ] && bin=$AFTER side_args=$args
      # shellcheck disable=SC2086
      "$bin" run $side_args --steps 1 --strategy "$strategies" --fidelity "$fid" --no-plots --quiet \
        --out "$OUT/$side/$fid/$label" || { echo "$label $fid $side: run failed" >&2; exit 1; }
    done
    count=$(($(wc -l < "$OUT/before/$fid/$label/summary.csv") - 1))
    runs=$((runs + count))
    if same "$OUT/before/$fid/$label" "$OUT/after/$fid/$label"; then
      printf '%-10s %-5s %d runs identical\n' "$label" "$fid" "$count"
    else
      printf '%-10s %-5s DIFFERENT\n' "$label" "$fid"
      differ=$((differ + 1))
    fi
  done
done < bench/flow_vs_cycle.configs
echo "same_results: $runs runs, $differ configuration(s) with a difference"
[ "$differ" -eq 0 ]
