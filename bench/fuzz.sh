#!/usr/bin/env bash
# Long fuzzing of every parser (not a test; ctest runs each target briefly, label "fuzz"). Builds the
# clang targets of fuzz/ under build/fuzz, runs each for SECONDS (default 600), and prints per target
# the executions, the coverage reached (libFuzzer's cov: edges, ft: features) and the corpus size.
# A crash stops with its input in build/fuzz/artifacts/<target>/: fix it, then commit the input under
# fuzz/regressions/<target>/ so every later run replays it.
# Usage: bench/fuzz.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(hw_json model_json placement_json trace_json run_spec cli sweep_spec router_description cache_entry gzip_trace)
bash fuzz/build.sh build/fuzz "$(command -v clang++)" || exit 1
printf '%-16s %12s %10s %10s %8s %s\n' target executions cov ft corpus verdict
for t in "${targets[@]}"; do
  log=$(mktemp)
  bash fuzz/run_fuzzer.sh build/fuzz "$t" "$seconds" > "$log" 2>&1
  status=$?
  done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1)
  execs=$(grep -E "stat::number_of_executed_units" "$log" | head -1 | awk '{print $2}')
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$done_line")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<< "$done_line")
  verdict=ok
  [ "$status" -ne 0 ] && verdict="FAILED (see build/fuzz/artifacts/$t/)"
  printf '%-16s %12s %10s %10s %8s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$verdict"
  [ "$status" -ne 0 ] && tail -n 30 "$log"
  rm -f "$log"
done
