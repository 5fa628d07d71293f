# Sourced by the bench/reproduce/*.sh scripts with their arguments [path/to/nmpsim] [OUTDIR]: sets BIN,
# OUT (made; default a temp dir that is kept), here (bench/) and step, which prints a line with the
# seconds since the start.
BIN=${1:-build/apps/nmpsim}
OUT=${2:-$(mktemp -d)}
[ -f "$BIN" ] && [ -x "$BIN" ] || { echo "error: $BIN is not an executable (build first, or pass it)" >&2; exit 2; }
[ -e "$OUT" ] && [ ! -d "$OUT" ] && { echo "error: OUTDIR: $OUT exists and is not a directory" >&2; exit 2; }
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)
step() { echo "[$(( $(date +%s) - start )) s] $*" >&2; }
