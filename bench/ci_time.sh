#!/usr/bin/env bash
# Times the README's test command (.ci/run) stage by stage on a clean clone of one commit, as CI runs
# it: clones REPO at COMMIT into a new directory, then runs each `&&`-separated stage of .ci/run's
# command (the command's words, no shell) and prints "seconds rc stage" per stage and the total.
# Usage: bench/ci_time.sh [--repo DIR] [--commit REV] [--dir DIR]   (defaults: this repository, HEAD,
# a new temporary directory that is removed at the end). Takes 10-25 minutes on 2 cores (21 on 2026-11-30).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd) COMMIT=HEAD DIR=""
while [ $# -gt 0 ]; do
  case "$1" in
    --repo) REPO=$2; shift 2 ;;
    --commit) COMMIT=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    *) echo "usage: $0 [--repo DIR] [--commit REV] [--dir DIR]" >&2; exit 2 ;;
  esac
done
if [ -z "$DIR" ]; then
  DIR=$(mktemp -d)
  trap 'rm -rf "$DIR"' EXIT
elif [ -e "$DIR" ]; then
  echo "error: --dir $DIR exists (give a new directory)" >&2
  exit 2
fi
git clone -q "$REPO" "$DIR/src" && git -C "$DIR/src" checkout -q "$COMMIT" || exit 2
cd "$DIR/src" || exit 2
line=$(grep -m1 -E '^bash \.ci/install-deps\.sh && ' .ci/run) || { echo "error: no command in .ci/run" >&2; exit 2; }
export CI=true
total=0 n=0 rc=0
while [ -n "$line" ]; do
  stage=${line%% && *}
  [ "$stage" = "$line" ] && line="" || line=${line#* && }
  read -r -a argv <<< "$stage"
  n=$((n + 1))
  start=$(date +%s)
  "${argv[@]}" > "$DIR/stage-$n.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  total=$((total + secs))
  printf '%5d s  rc=%d  %s\n' "$secs" "$rc" "$stage"
  if [ $rc -ne 0 ]; then
    echo "stage $n failed; its output:" >&2
    tail -20 "$DIR/stage-$n.log" >&2
    break
  fi
done
printf '%5d s  total (%s at %s)\n' "$total" "$(git rev-parse --short HEAD)" "$(date -u +%Y-%m-%d)"
exit $rc
