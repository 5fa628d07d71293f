#!/usr/bin/env bash
# Peak resident memory and wall time of nmpsim against each input size (docs/PERFORMANCE.md "Memory per
# input"; the memory model of docs/FORMATS.md "Limits and what they cost" is fitted to such runs). One
# run at a time, each measured by /usr/bin/time; prints TSV: case, peak RSS MiB, wall s, exit code.
# Usage: bench/memory_per_input.sh [NMPSIM]   (about 5 minutes on a 2-core machine)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/apps/nmpsim}
source bench/lib.sh
# A tiny model: 2 MoE layers, hidden 256, so that nodes, groups, batch and experts dominate.
tiny() {  # tiny EXPERTS TOP_K LAYERS -> path
  local f="$tmp/tiny-$1-$2-$3.json"
  printf '{"name": "tiny", "experts": %d, "top_k": %d, "moe_layers": %d, "hidden": 256, "intermediate": 512,
 "attention": {"kind": "gqa", "heads": 16, "kv_heads": 4, "head_dim": 16}}\n' "$1" "$2" "$3" > "$f"
  echo "$f"
}
measure() {  # measure NAME ARGS...
  local name=$1
  shift
  /usr/bin/time -f "%M %e" -o "$tmp/time" "$bin" "$@" > /dev/null 2> "$tmp/err"
  local code=$?
  local kb sec
  read -r kb sec < <(tail -1 "$tmp/time")
  printf '%s\t%.1f\t%s\t%s\n' "$name" "$(echo "$kb / 1024" | bc -l)" "$sec" "$code"
}
flow=(run --fidelity flow --no-plots --quiet --steps 1 --no-cache --hw nmp-4x8-5t50g --out "$tmp/o")
printf 'case\tpeak_rss_mib\twall_s\texit\n'
for strat in tp ep; do
  for m in 16 32 64; do
    measure "nodes $strat ${m}x$m attn16 b64" "${flow[@]}" --model "$(tiny 8 2 2)" --set mesh.width=$m \
      --set mesh.height=$m --attn-tp 16 --batch 64 --strategy $strat
  done
  for a in 64 256 1024; do
    measure "attn-group $strat 32x32 attn$a" "${flow[@]}" --model "$(tiny 8 2 2)" --set mesh.width=32 \
      --set mesh.height=32 --attn-tp $a --batch 64 --strategy $strat
  done
  for b in 8 512; do
    measure "batch $strat 32x32 b$b" "${flow[@]}" --model "$(tiny 8 2 2)" --set mesh.width=32 --set mesh.height=32 \
      --attn-tp 16 --batch $b --strategy $strat
  done
  for e in 64 4096; do
    measure "experts $strat 16x16 e$e" "${flow[@]}" --model "$(tiny $e 8 2)" --set mesh.width=16 --set mesh.height=16 \
      --attn-tp 16 --batch 64 --strategy $strat
  done
done
for t in 1048576 4194304; do
  measure "synthetic mixtral ${t} tokens" "${flow[@]}" --model mixtral-8x7b --synthetic-tokens $t --batch 8 --strategy tp
done
# A JSON trace: 32 layers x 400k tokens x top-2, gzip-compressed (~100 MB of text).
python3 - "$tmp/t.json.gz" <<'PY'
import gzip, random, sys
random.seed(1)
pairs = [(a, b) for a in range(8) for b in range(8) if a != b]
with gzip.open(sys.argv[1], "wt") as f:
    f.write("{")
    for l in range(32):
        f.write(('' if l == 0 else ', ') + '"%d": [' % l)
        f.write(", ".join("[%d, %d]" % random.choice(pairs) for _ in range(400000)))
        f.write("]")
    f.write("}")
PY
measure "trace file mixtral 400k tokens" "${flow[@]}" --model mixtral-8x7b --trace "$tmp/t.json.gz" --batch 8 --strategy tp
for m in 64 128 256; do
  measure "noc ${m}x$m 1100 cycles" noc --mesh ${m}x$m --cycles 1000 --warmup-cycles 100 --injection-rate 0.01 --quiet
done
for m in 16 32; do
  measure "hw exercise ${m}x$m" hw --hw nmp-4x8-5t50g --set mesh.width=$m --set mesh.height=$m --set die.width=$m \
    --set die.height=$m --exercise --exercise-weight-mib 1 --exercise-message-bytes 64
done
