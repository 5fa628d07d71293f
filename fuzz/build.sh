#!/usr/bin/env bash
# Configures and builds the fuzz targets with clang (ctest's fuzz_build step; quiet unless it fails).
# Usage: fuzz/build.sh BUILD_DIR CLANG++
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S "$here" -B "$1" -DCMAKE_CXX_COMPILER="$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build "$1" -j2; } > "$log" 2>&1; then
  tail -n 40 "$log"
  exit 1
fi
echo "fuzz targets built in $1"
