#!/usr/bin/env python3
"""Reproduces the HD-MoE authors' result table (data/reference/hdmoe/result3_e2e.json) with
`nmpsim run --accounting hdmoe-authors` (their released code's accounting, ACCOUNTING.md), and runs
our own HD-MoE placements under it. Not a test (tests/sc_tests/test_hdmoe_authors.cpp pins the
hand-checked rows). Writes a report to stdout; docs/RESULTS.md quotes it.

Usage: bench/hdmoe_authors.py [--bin PATH] [--out DIR] [--seeds N] [--hdmoe]
  --seeds N   random draws of their EP (aggregators and mesh per layer) per Mixtral row (default 10)
  --hdmoe     also place our HD-MoE (node + link balance, optimised at batch 128 like theirs) on the
              real Mixtral reasoning trace, per hardware point, with our objective and with their MILP
              coefficients, and account both (minutes per point)
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

REF = os.path.join(os.path.dirname(__file__), "..", "data", "reference", "hdmoe", "result3_e2e.json")
MODELS = {"mixtral": "mixtral-8x7b", "ds": "deepseek-v2-lite", "qwen": "qwen2-57b-a14b"}


def die(message):
    """A one-line error and exit code 2, as every nmpsim command."""
    print("error: " + message, file=sys.stderr)
    sys.exit(2)


def number_list(text, cast, flag):
    """`1,4,30` as numbers, or a one-line error naming the flag."""
    try:
        return [cast(x) for x in text.split(",")]
    except ValueError:
        die("%s: expected numbers separated by commas, got '%s'" % (flag, text))


def preset(cfg):
    def num(x):
        return ("%g" % x)
    x, y = cfg["mesh_shape"]
    return "nmp-%dx%d-%st%sg" % (x, y, num(cfg["comp_TFLOPS"]), num(cfg["BW_GBPS"]))


def account(binary, out, cfg, strategies, seed=1, extra=()):
    """Runs nmpsim under the authors' accounting; {strategy: (comm, comp, other, latency)} in us."""
    model = cfg["model"]
    args = [binary, "run", "--accounting", "hdmoe-authors", "--hw", preset(cfg), "--model", MODELS[model],
            "--batch", str(cfg["batch"]), "--steps", "1", "--strategy", strategies, "--seed", str(seed),
            "--no-plots", "--quiet", "--out", out]
    args += ["--trace", "mtbench-reasoning"] if model == "mixtral" else ["--skew", "0.3"]
    if model == "qwen":
        args += ["--accounting-opt", "hdmoe-authors.eval_intermediate=18944"]
    subprocess.run(args + list(extra), check=True)
    rows = {}
    with open(os.path.join(out, "summary.csv")) as f:
        for r in csv.DictReader(f):
            rows[r["strategy"]] = tuple(float(r[k]) for k in ("moe_comm_us", "moe_compute_us", "other_us", "mean_tbt_us"))
    return rows


def tp_check(binary, tmp, ref):
    print("TP, computation and C against the table (every row; match = all within 0.01 us)")
    print("%-8s %-5s %-6s %4s %10s %10s %10s %10s  %s" % ("model", "mesh", "TF/GB", "B", "comm", "comp", "C", "latency",
                                                          "match"))
    matched = {}
    for i, row in enumerate(ref):
        cfg = row["config"]
        comm, comp, other, lat = account(binary, os.path.join(tmp, "tp%d" % i), cfg, "tp")["tp"]
        t = row["TP"]
        c_ref = t["latency_us"] - t["communication_us"] - t["computation_us"]
        ok = all(abs(a - b) <= 0.01 for a, b in ((comm, t["communication_us"]), (comp, t["computation_us"]),
                                                    (other, c_ref), (lat, t["latency_us"])))
        matched.setdefault(cfg["model"], [0, 0])
        matched[cfg["model"]][0] += ok
        matched[cfg["model"]][1] += 1
        mesh = "%dx%d" % tuple(cfg["mesh_shape"])
        hwp = "%g/%g" % (cfg["comp_TFLOPS"], cfg["BW_GBPS"])
        print("%-8s %-5s %-6s %4d %10.2f %10.2f %10.2f %10.2f  %s" % (cfg["model"], mesh, hwp, cfg["batch"], comm, comp,
                                                                        other, lat, "yes" if ok else
                                                                        "no (table: %.2f %.2f %.2f %.2f)" % (
                                                                            t["communication_us"], t["computation_us"],
                                                                            c_ref, t["latency_us"])))
    for m, (ok, n) in matched.items():
        print("  %s: %d of %d rows match" % (m, ok, n))
    print("  ACCOUNTING.md: the B = 8 rows of 4x4 and 8x8 follow no formula (residual constants 1235.75 and"
          " 310.86);\n  qwen rows with B < 128 are linear rescalings of B = 128, and its 4x4 / 8x8 rows labelled"
          " 5/50 are the 2.5/75 results")


def ep_spread(binary, tmp, ref, seeds):
    print("\nMixtral EP: their random EP (a new random mesh per layer, random aggregators), %d draws per row,"
          " range over the draws of all rows of the hardware point (comm scales with B)" % seeds)
    print("%-5s %-6s %4s %10s %10s %21s %10s  %s" % ("mesh", "TF/GB", "B", "comp", "table", "comm min..max", "table",
                                                     "in range"))
    # Store-and-forward without latency scales with B, so every row of a hardware point samples the
    # same distribution of comm / B: pool the draws of all its batch sizes.
    draws, pooled = {}, {}
    for i, row in enumerate(ref):
        cfg = row["config"]
        if cfg["model"] != "mixtral":
            continue
        draws[i] = [account(binary, os.path.join(tmp, "ep%d-%d" % (i, s)), cfg, "ep", seed=1000 * i + s)["ep"]
                    for s in range(1, seeds + 1)]
        pooled.setdefault(preset(cfg), []).extend(d[0] / cfg["batch"] for d in draws[i])
    inside = total = 0
    for i, row in enumerate(ref):
        cfg = row["config"]
        if cfg["model"] != "mixtral":
            continue
        comms = [x * cfg["batch"] for x in pooled[preset(cfg)]]
        t = row["EP"]
        ok = min(comms) - 0.01 <= t["communication_us"] <= max(comms) + 0.01
        inside += ok
        total += 1
        print("%-5s %-6s %4d %10.2f %10.2f %10.2f..%-10.2f %10.2f  %s" % (
            "%dx%d" % tuple(cfg["mesh_shape"]), "%g/%g" % (cfg["comp_TFLOPS"], cfg["BW_GBPS"]), cfg["batch"],
            draws[i][0][1], t["computation_us"], min(comms), max(comms), t["communication_us"], "yes" if ok else "no"))
    print("  table's EP communication inside our range of draws: %d of %d rows" % (inside, total))


# 4 s per layer: the solver before the third pass took up to 3.7 s on these layers at its 1 s limit;
# the authors give Gurobi up to 1800 s (docs/RESULTS.md).
AUTHORS_OBJECTIVE = ["--strategy-opt", "hdmoe.objective=authors", "--strategy-opt", "hdmoe.selection_batches=0",
                     "--strategy-opt", "hdmoe.gamma=0.5", "--time-limit", "4"]


def ours_under_theirs(binary, tmp, ref, label, place_args):
    print("\nOur HD-MoE, %s (node + link balance, placed at B = 128 on the reasoning trace) under their" % label)
    print("accounting, against their HD-MoE (node_link_balancing) in the table; latency in us, speed-up over TP")
    print("%-5s %-6s %4s %10s %10s %8s %8s %8s %8s  %s" % ("mesh", "TF/GB", "B", "ours", "theirs", "EP/TP", "ours/TP",
                                                           "their/TP", "paper", "order"))
    placed = {}
    agree = total = 0
    for i, row in enumerate(ref):
        cfg = row["config"]
        if cfg["model"] != "mixtral":
            continue
        p = preset(cfg)
        tag = "%s-%s" % (p, "authors" if place_args else "nmpsim")
        if p not in placed:
            placed[p] = os.path.join(tmp, "hdmoe-%s.json" % tag)
            subprocess.run([binary, "place", "--strategy", "hdmoe", "--hw", p, "--model", "mixtral-8x7b", "--trace",
                            "mtbench-reasoning", "--batch", "128", "--quiet", "--out", placed[p]] + place_args,
                           check=True)
        r = account(binary, os.path.join(tmp, "ours-%s-%d" % (tag, i)), cfg, "tp,ep," + placed[p])
        ours = r["hdmoe"][3]
        tp, ep = r["tp"][3], r["ep"][3]
        t = row
        theirs = t["node_link_balancing"]["latency_us"]
        ref_order = sorted(("TP", "EP", "HD-MoE"), key=lambda k: {"TP": t["TP"]["latency_us"], "EP": t["EP"][
            "latency_us"], "HD-MoE": theirs}[k])
        our_order = sorted(("TP", "EP", "HD-MoE"), key=lambda k: {"TP": tp, "EP": ep, "HD-MoE": ours}[k])
        agree += ref_order == our_order
        total += 1
        print("%-5s %-6s %4d %10.2f %10.2f %8.2f %8.2f %8.2f %8.2f  %s" % (
            "%dx%d" % tuple(cfg["mesh_shape"]), "%g/%g" % (cfg["comp_TFLOPS"], cfg["BW_GBPS"]), cfg["batch"], ours,
            theirs, tp / ep, tp / ours, t["TP"]["latency_us"] / theirs, t["node_link_balancing"].get("speedup_TP", 0),
            "same" if ref_order == our_order else "ours %s, table %s" % (">".join(our_order), ">".join(ref_order))))
    print("  fastest-to-slowest order of TP, EP, HD-MoE the same as the table's: %d of %d rows" % (agree, total))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/apps/nmpsim")
    ap.add_argument("--out", default="")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--hdmoe", action="store_true")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        die("%s is not an executable (build first, or pass --bin)" % a.bin)
    with open(REF) as f:
        ref = json.load(f)
    tmp = a.out or tempfile.mkdtemp(prefix="hdmoe-authors-")
    os.makedirs(tmp, exist_ok=True)
    tp_check(a.bin, tmp, ref)
    ep_spread(a.bin, tmp, ref, a.seeds)
    if a.hdmoe:
        ours_under_theirs(a.bin, tmp, ref, "our objective", [])
        ours_under_theirs(a.bin, tmp, ref, "their MILP coefficients (objective=authors, no selection, gamma 0.5)",
                          AUTHORS_OBJECTIVE)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:  # nmpsim printed its one-line error above
        die("%s exited with %d" % (" ".join(str(x) for x in e.cmd[:2]), e.returncode))
