#!/usr/bin/env python3
"""Which of the HD-MoE authors' assumptions carries their gain over TP (issue 35, deliverable 3).

For each case (model, hardware, batch): our HD-MoE placement built as theirs (the MILP with their
coefficients, gamma 0.5, link balance per layer with their store-and-forward cost; placed at B = 128)
and TP, charged by the authors' accounting (`--accounting hdmoe-authors`) with their assumptions, then
with one switched to nmpsim's model at a time (`--accounting-opt hdmoe-authors.KEY=VALUE`, docs/MODEL.md
"The authors' accounting"), then all switched, then simulated on nmpsim's hardware model (flow
fidelity). gamma is the placement's: the same placement solved with gamma 1 instead of 0.5.

Usage: bench/hdmoe_sensitivity.py [--bin PATH] [--out DIR] [--time-limit S]
Writes DIR/sensitivity.csv and a markdown table to stdout.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdmoe_authors as ha  # noqa: E402

# (model, trace args, hardware, batch): the rows of their table with the largest gains per model.
CASES = [("mixtral-8x7b", ["--trace", "mtbench-reasoning"], "nmp-4x8-10t25g", 128),
         ("mixtral-8x7b", ["--trace", "mtbench-reasoning"], "nmp-4x8-5t50g", 32),
         ("deepseek-v2-lite", ["--trace", "synthetic", "--skew", "0.3"], "nmp-4x8-10t25g", 128)]
TOGGLES = [("theirs (all assumptions as their code)", []),
           ("expert FLOPs: 3 matrices (SwiGLU), not 1", ["matrices=3"]),
           ("TP exchange: 2 bytes per element, not 4", ["tp_bytes=2"]),
           ("loads: 8 sampled batches, not the trace's expected loads", ["loads=sampled"]),
           ("shared experts charged, not ignored", ["shared_experts=true"]),
           ("DRAM streaming per node, not FLOPs only", ["dram=true"]),
           ("all five switched", ["matrices=3", "tp_bytes=2", "loads=sampled", "shared_experts=true", "dram=true"])]


def place(binary, out, model, trace, point, gamma, limit):
    path = os.path.join(out, "%s-%s-gamma%g.json" % (model, point, gamma))
    if not os.path.exists(path):
        subprocess.run([binary, "place", "--strategy", "hdmoe", "--hw", point, "--model", model, "--batch", "128",
                        "--strategy-opt", "hdmoe.objective=authors", "--strategy-opt", "hdmoe.selection_batches=0",
                        "--strategy-opt", "hdmoe.gamma=%g" % gamma, "--time-limit", str(limit), "--link-cost",
                        "authors", "--evaluations", "70", "--quiet", "--cache-dir", os.path.join(out, "cache"),
                        "--out", path + ".tmp"] + trace, check=True)
        os.replace(path + ".tmp", path)
    return path


def speedup(binary, out, tag, model, trace, point, batch, placement, extra, steps=1):
    d = os.path.join(out, "runs", tag)
    if not os.path.exists(os.path.join(d, "summary.csv")):
        subprocess.run([binary, "run", "--hw", point, "--model", model, "--batch", str(batch), "--steps", str(steps),
                        "--strategy", "tp," + placement, "--no-plots", "--quiet", "--out", d] + trace + extra,
                       check=True)
    with open(os.path.join(d, "summary.csv")) as f:
        t = {r["strategy"]: float(r["mean_tbt_us"]) for r in csv.DictReader(f)}
    return t["tp"] / t["hdmoe"]


def paper(ref, model, point, batch):
    for r in ref:
        c = r["config"]
        if ha.MODELS[c["model"]] == model and ha.preset(c) == point and c["batch"] == batch:
            return r["TP"]["latency_us"] / r["node_link_balancing"]["latency_us"]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/apps/nmpsim")
    ap.add_argument("--out", default="")
    ap.add_argument("--time-limit", type=float, default=1.0)
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        ha.die("%s is not an executable (build first, or pass --bin)" % a.bin)
    out = a.out or tempfile.mkdtemp(prefix="hdmoe-sensitivity-")
    os.makedirs(out, exist_ok=True)
    binary = os.path.join(out, "nmpsim")
    shutil.copy2(a.bin, binary)
    with open(ha.REF) as f:
        ref = json.load(f)
    rows = []
    for model, trace, point, batch in CASES:
        p05 = place(binary, out, model, trace, point, 0.5, a.time_limit)
        p1 = place(binary, out, model, trace, point, 1.0, a.time_limit)
        case = "%s %s B=%d" % (model, point, batch)
        acc = ["--accounting", "hdmoe-authors"]
        if model == "qwen2-57b-a14b":
            acc += ["--accounting-opt", "hdmoe-authors.eval_intermediate=18944"]
        for label, opts in TOGGLES:
            extra = acc + [x for o in opts for x in ("--accounting-opt", "hdmoe-authors." + o)]
            tag = "%s-%s-%d-%s" % (model, point, batch, "-".join(opts) or "theirs")
            rows.append((case, label, speedup(binary, out, tag, model, trace, point, batch, p05, extra)))
        rows.append((case, "gamma 1 in the MILP, not 0.5 (their accounting)",
                     speedup(binary, out, "%s-%s-%d-gamma1" % (model, point, batch), model, trace, point, batch, p1,
                             acc)))
        rows.append((case, "nmpsim's hardware model (flow fidelity), the same placement",
                     speedup(binary, out, "%s-%s-%d-flow" % (model, point, batch), model, trace, point, batch, p05,
                             ["--fidelity", "flow"], steps=2)))
        rows.append((case, "paper (their table)", paper(ref, model, point, batch)))
    with open(os.path.join(out, "sensitivity.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "assumption", "hdmoe_speedup_over_tp"])
        for r in rows:
            w.writerow([r[0], r[1], "%.4f" % r[2] if r[2] is not None else ""])
    cases = list(dict.fromkeys(r[0] for r in rows))
    labels = list(dict.fromkeys(r[1] for r in rows))
    val = {(r[0], r[1]): r[2] for r in rows}
    print("HD-MoE (ours, built as theirs) over TP, one assumption switched at a time\n")
    print("| assumption | " + " | ".join(cases) + " |")
    print("|---|" + "---|" * len(cases))
    for lab in labels:
        print("| %s | %s |" % (lab, " | ".join("%.3f" % val[(c, lab)] if val.get((c, lab)) else "-" for c in cases)))
    print("\nRows: %s" % os.path.join(out, "sensitivity.csv"))


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:  # nmpsim printed its one-line error above
        ha.die("%s exited with %d" % (" ".join(str(x) for x in e.cmd[:2]), e.returncode))
