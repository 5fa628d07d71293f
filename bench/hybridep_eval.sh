#!/usr/bin/env bash
# HybridEP evaluation (docs/RESULTS.md "HybridEP"): TBT and MoE communication (dispatch + combine)
# of EP against HybridEP with resident domain copies (sizes chosen offline by enumeration) and
# HybridEP streaming (domain experts all-gathered every layer on a background stream, sizes chosen
# per layer by the stream model). EP is hybridep with domain size 1 at every level: the same
# rank-order layout, so only the domains differ. Flow fidelity, one decode step, weights at INT8,
# attention TP 16 (4 on the NMP chip). Prints a markdown table. Not a test. About 30 minutes.
# Usage: bench/hybridep_eval.sh [path/to/nmpsim]
set -euo pipefail
BIN=${1:-build/apps/nmpsim}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
echo "| hardware | model | batch | TBT us: EP / resident / stream | MoE comm us: EP / resident / stream | resident over EP, stream over EP (TBT) | resident S_ED | stream S_ED (layers) | stream p* (case) | stream all-gather GB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
# hardware:attn-tp:EP sizes:models
for setup in wsc-4wafer-8x8:16:1,1:deepseek-v3,qwen3-235b-a22b,mixtral-8x22b wsc-8x8:16:1:deepseek-v3,qwen3-235b-a22b,mixtral-8x22b \
  nmp-8x8-5t50g:4:1:deepseek-v2-lite,qwen2-57b-a14b; do
  IFS=: read -r hw tp ep models <<< "$setup"
  for model in ${models//,/ }; do
    for batch in 64 256 1024 4096; do
      common=(--hw "$hw" --attn-tp "$tp" --model "$model" --weight-bytes 1 --batch "$batch" --steps 1 --fidelity flow
        --no-plots --quiet)
      "$BIN" run "${common[@]}" --strategy hybridep --strategy-opt "hybridep.sed=$ep" --out "$tmp/ep"
      "$BIN" run "${common[@]}" --strategy hybridep --out "$tmp/res"
      "$BIN" run "${common[@]}" --strategy hybridep --strategy-opt hybridep.mode=stream --out "$tmp/str"
      python3 - "$tmp" "$hw" "$model" "$batch" <<'EOF'
import json, sys
d = sys.argv[1]
r = [json.load(open("%s/%s/summary.json" % (d, k)))["strategies"]["hybridep"] for k in ("ep", "res", "str")]
tbt = [x["mean_tbt_us"] for x in r]
comm = [x["moe_comm_us"] for x in r]
res = r[1]["policies"]["hybridep"]
st = r[2]["policies"]["hybridep"]
m = st.get("model", {})
print("| %s | %s | %s | %.0f / %.0f / %.0f | %.0f / %.0f / %.0f | %.2fx, %.2fx | %s | %s | %.3f (%s) | %.1f |" % (
    sys.argv[2], sys.argv[3], sys.argv[4], *tbt, *comm, tbt[0] / tbt[1], tbt[0] / tbt[2],
    ", ".join(res["sed_chosen"].keys()),
    ", ".join("%s: %d" % kv for kv in sorted(st["sed_chosen"].items())),
    m.get("p_star", 1.0), m.get("case", "-"), st["allgather_bytes"] / 1e9))
EOF
    done
  done
done
