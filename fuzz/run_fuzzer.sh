#!/usr/bin/env bash
# Runs one fuzz target for a time budget on a scratch copy of its seed corpus plus every committed
# regression input. A crash, memory error, UB report, hang (> 10 s on one input) or memory blow-up (> 4 GiB)
# fails it; libFuzzer then writes the input to <build>/artifacts/<target>/ (commit it under
# fuzz/regressions/<target>/ once fixed). Prints executions and coverage.
# Usage: fuzz/run_fuzzer.sh BUILD_DIR TARGET SECONDS
set -uo pipefail
build=$1 target=$2 seconds=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$here/corpus/$target/." "$work/" 2>/dev/null || true
dirs=("$work")
[ -d "$here/regressions/$target" ] && dirs+=("$here/regressions/$target")
mkdir -p "$build/artifacts/$target"
max_len=65536
[ "$target" = cli ] && max_len=4096
# LeakSanitizer stays off: its stop-the-world step needs ptrace, which sandboxed CI machines refuse at random.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$build/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len="$max_len" \
  -detect_leaks=0 -print_final_stats=1 -artifact_prefix="$build/artifacts/$target/" "${dirs[@]}" > "$work.log" 2>&1
status=$?
# The verdict, coverage and throughput (and, on a failure, the report).
if [ "$status" -ne 0 ]; then tail -n 40 "$work.log"; fi
grep -E "^#[0-9]+[[:space:]]+DONE|^Done |stat::number_of_executed_units|stat::peak_rss_mb" "$work.log" || true
rm -f "$work.log"
exit "$status"
