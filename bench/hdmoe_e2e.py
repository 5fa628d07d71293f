#!/usr/bin/env python3
"""HD-MoE in the paper's regime (issue 35, deliverable 2): decode TBT over TP at B = 8, 16, 32, 64, 128 for
the three models and five hardware points, at flow fidelity, with the authors' table beside each row
(data/reference/hdmoe/result3_e2e.json, their accounting; the paper's Fig. 10 plots it), and a check at
cycle fidelity (with the dynamic pre-broadcast) on a few rows; Mixtral's placements run on the other
MT-Bench categories; and one prefill step per model and point (TTFT, flow, the same placements).

Placements are built once per model and hardware at B = 128 and reused at every batch, as the authors do
(data/reference/hdmoe/ACCOUNTING.md): MILP-only (`hdmoe-node` with selection_batches=0: the MILP's answer
or TP, whichever its model rates better), node (`hdmoe-node`: then per layer TP unless that, EP or CB
is clearly faster on held-out batches) and node+link (`hdmoe`). Traces: Mixtral the MT-Bench `reasoning` trace
(the authors'), DeepSeek-V2-Lite and Qwen2 calibrated synthetic ones (skew 0.3 and 0.6, docs/RESULTS.md).

Usage: bench/hdmoe_e2e.py [--bin PATH] [--out DIR] [--jobs N] [--models M,...] [--points P,...]
                          [--batches B,...] [--cycle-rows N]
Writes DIR/e2e.csv and a markdown report to stdout.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from multiprocessing import Pool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdmoe_authors as ha  # noqa: E402

MODELS = ["mixtral-8x7b", "deepseek-v2-lite", "qwen2-57b-a14b"]
SHORT = {v: k for k, v in ha.MODELS.items()}
POINTS = ["nmp-4x8-2.5t75g", "nmp-4x8-5t50g", "nmp-4x8-10t25g", "nmp-4x4-5t50g", "nmp-8x8-5t50g"]
TRACE = {"mixtral-8x7b": ["--trace", "mtbench-reasoning"], "deepseek-v2-lite": ["--trace", "synthetic", "--skew", "0.3"],
         "qwen2-57b-a14b": ["--trace", "synthetic", "--skew", "0.6"]}
# Rows checked at cycle fidelity: a point per model where the methods differ, and two where TP wins.
CYCLE_ROWS = [("deepseek-v2-lite", "nmp-4x8-10t25g", 64), ("qwen2-57b-a14b", "nmp-4x8-10t25g", 64),
              ("mixtral-8x7b", "nmp-4x8-10t25g", 64), ("deepseek-v2-lite", "nmp-8x8-5t50g", 32),
              ("mixtral-8x7b", "nmp-4x8-5t50g", 16), ("qwen2-57b-a14b", "nmp-4x8-2.5t75g", 128)]
NAMES = ["tp", "ep", "cb", "hdmoe-milp", "hdmoe-node", "hdmoe"]
# MT-Bench categories other than the one Mixtral's placements are built on (reasoning).
# Prefill rows: one step of this many sequences of this many prompt tokens (4096 tokens).
PREFILL_SEQUENCES, PREFILL_PROMPT = 8, 512
CATEGORIES = ["math", "coding", "writing", "roleplay", "stem", "humanities", "extraction"]


def run(args):
    subprocess.run(args, check=True)


def place(job):
    """The three HD-MoE placements of one model and point (serially: node+link reuses node's solve)."""
    binary, out, model, point = job
    base = [binary, "place", "--hw", point, "--model", model, "--batch", "128", "--quiet",
            "--cache-dir", os.path.join(out, "cache")] + TRACE[model]
    files = {}
    for name, strategy, extra in (("hdmoe-milp", "hdmoe-node", ["--strategy-opt", "hdmoe-node.selection_batches=0"]),
                                  ("hdmoe-node", "hdmoe-node", []), ("hdmoe", "hdmoe", [])):
        path = os.path.join(out, "place", "%s-%s-%s.json" % (model, point, name))
        if not os.path.exists(path):
            run(base + ["--strategy", strategy, "--out", path + ".tmp"] + extra)
            with open(path + ".tmp") as f:
                p = json.load(f)
            p["strategy"] = name  # distinct names in one run
            with open(path + ".tmp", "w") as f:
                json.dump(p, f)
            os.replace(path + ".tmp", path)
        files[name] = path
    return files


def simulate(job):
    """{strategy: mean TBT us} of one row; `dynamic` adds the pre-broadcast of 2 experts to node+link."""
    binary, out, model, point, batch, fidelity, files, dynamic = job
    d = os.path.join(out, "runs", "%s-%s-%d-%s%s" % (model, point, batch, fidelity, "-dyn" if dynamic else ""))
    strategies = ["tp", "ep", "cb"] + [files[n] for n in NAMES[3:]]
    extra = []
    if dynamic:
        strategies, extra = [files["hdmoe"]], ["--prebroadcast", "2", "--predict", "previous"]
    if not os.path.exists(os.path.join(d, "summary.csv")):
        run([binary, "run", "--hw", point, "--model", model, "--batch", str(batch), "--steps", "2", "--fidelity",
             fidelity, "--strategy", ",".join(strategies), "--no-plots", "--quiet", "--out", d] + TRACE[model] + extra)
    with open(os.path.join(d, "summary.csv")) as f:
        return {r["strategy"]: float(r["mean_tbt_us"]) for r in csv.DictReader(f)}


def cross_category(job):
    """Mixtral's placements (built on reasoning) run on another category, B = 64, flow: {strategy: TBT us}."""
    binary, out, point, category, files = job
    d = os.path.join(out, "runs", "mixtral-8x7b-%s-64-%s" % (point, category))
    if not os.path.exists(os.path.join(d, "summary.csv")):
        run([binary, "run", "--hw", point, "--model", "mixtral-8x7b", "--batch", "64", "--steps", "2", "--fidelity",
             "flow", "--trace", "mtbench-" + category, "--strategy",
             ",".join(["tp", "ep", "cb"] + [files[n] for n in NAMES[3:]]), "--no-plots", "--quiet", "--out", d])
    with open(os.path.join(d, "summary.csv")) as f:
        return {r["strategy"]: float(r["mean_tbt_us"]) for r in csv.DictReader(f)}


def prefill(job):
    """{strategy: TTFT us} of one prefill step (PREFILL_SEQUENCES x PREFILL_PROMPT tokens), flow, with the
    decode-built placements."""
    binary, out, model, point, files = job
    d = os.path.join(out, "runs", "%s-%s-prefill" % (model, point))
    if not os.path.exists(os.path.join(d, "summary.csv")):
        run([binary, "run", "--hw", point, "--model", model, "--phase", "prefill", "--batch", str(PREFILL_SEQUENCES),
             "--prompt-tokens", str(PREFILL_PROMPT), "--steps", "1", "--fidelity", "flow", "--strategy",
             ",".join(["tp", "ep", "cb"] + [files[n] for n in NAMES[3:]]), "--no-plots", "--quiet", "--out", d]
            + TRACE[model])
    with open(os.path.join(d, "summary.csv")) as f:
        return {r["strategy"]: float(r["ttft_us"]) for r in csv.DictReader(f)}


def report_prefill(pre):
    if not pre:
        return
    print("\nPrefill: TTFT over TP (higher is better), %d sequences x %d prompt tokens, one step, flow fidelity,"
          " the decode placements built at B = 128 (the paper has no prefill numbers)\n" % (PREFILL_SEQUENCES,
                                                                                           PREFILL_PROMPT))
    print("| model | hardware | EP | CB | MILP-only | node | node+link | node+link / best of TP, EP, CB |")
    print("|---|---|---|---|---|---|---|---|")
    for (m, p), t in pre.items():
        best = min(t["tp"], t["ep"], t["cb"])
        print("| %s | %s | %s | %.3f |" % (m, p, " | ".join("%.2f" % (t["tp"] / t[n]) for n in NAMES[1:]),
                                          best / t["hdmoe"]))


def paper_row(ref, model, point, batch):
    for r in ref:
        c = r["config"]
        if SHORT[model] == c["model"] and ha.preset(c) == point and c["batch"] == batch:
            tp = r["TP"]["latency_us"]
            return {k: tp / r[v]["latency_us"] for k, v in (("ep", "EP"), ("cb", "compute_balancing"),
                                                              ("hdmoe", "node_link_balancing"))}
    return None


def fmt(x):
    return "%.2f" % x if x is not None else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/apps/nmpsim")
    ap.add_argument("--out", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--points", default=",".join(POINTS))
    ap.add_argument("--batches", default="8,16,32,64,128")
    ap.add_argument("--cycle-rows", type=int, default=len(CYCLE_ROWS))
    a = ap.parse_args()
    if a.jobs < 1:
        ha.die("--jobs: expected a positive number, got %d" % a.jobs)
    if not os.access(a.bin, os.X_OK):
        ha.die("%s is not an executable (build first, or pass --bin)" % a.bin)
    batches = ha.number_list(a.batches, int, "--batches")
    models, points = a.models.split(","), a.points.split(",")
    for m in models:
        if m not in TRACE:
            ha.die("--models: '%s' is not one of %s" % (m, ", ".join(MODELS)))
    out = a.out or tempfile.mkdtemp(prefix="hdmoe-e2e-")
    os.makedirs(os.path.join(out, "place"), exist_ok=True)
    binary = os.path.join(out, "nmpsim")  # the cache is keyed by the binary: a private copy
    shutil.copy2(a.bin, binary)
    with open(ha.REF) as f:
        ref = json.load(f)
    pairs = [(m, p) for m in models for p in points]
    with Pool(a.jobs) as pool:
        placed = dict(zip(pairs, pool.map(place, [(binary, out, m, p) for m, p in pairs])))
        rows = [(m, p, b) for m, p in pairs for b in batches]
        flow = dict(zip(rows, pool.map(simulate, [(binary, out, m, p, b, "flow", placed[(m, p)], False)
                                                  for m, p, b in rows])))
        checks = [r for r in CYCLE_ROWS if r[0] in models and r[1] in points][:a.cycle_rows]
        cycle = dict(zip(checks, pool.map(simulate, [(binary, out, m, p, b, "cycle", placed[(m, p)], False)
                                                     for m, p, b in checks])))
        dyn = dict(zip(checks, pool.map(simulate, [(binary, out, m, p, b, "cycle", placed[(m, p)], True)
                                                   for m, p, b in checks])))
        cats = [(p, c) for p in points for c in CATEGORIES] if "mixtral-8x7b" in models else []
        cross = dict(zip(cats, pool.map(cross_category, [(binary, out, p, c, placed[("mixtral-8x7b", p)])
                                                         for p, c in cats])))
        pre = dict(zip(pairs, pool.map(prefill, [(binary, out, m, p, placed[(m, p)]) for m, p in pairs])))
    report(out, rows, flow, checks, cycle, dyn, ref)
    report_cross(cross)
    report_prefill(pre)


def report_cross(cross):
    if not cross:
        return
    print("\nMixtral's placements built on MT-Bench reasoning, run on the other categories (B = 64, flow): HD-MoE"
          " against the best of TP, EP and CB (CB built on the category itself)\n")
    print("| hardware | category | best of TP/EP/CB | node / best | node+link / best |")
    print("|---|---|---|---|---|")
    worst = []
    for (p, c), t in cross.items():
        best = min(t["tp"], t["ep"], t["cb"])
        name = min(("tp", "ep", "cb"), key=lambda k: t[k])
        worst.append(min(best / t["hdmoe-node"], best / t["hdmoe"]))
        print("| %s | %s | %s | %.3f | %.3f |" % (p, c, name, best / t["hdmoe-node"], best / t["hdmoe"]))
    print("\nHD-MoE against the best of TP, EP and CB across these %d runs: worst %.3f" % (len(worst), min(worst)))


def report(out, rows, flow, checks, cycle, dyn, ref):
    print("Decode TBT over TP (higher is better), flow fidelity, 2 steps, context 1024; placements built at B = 128."
          "\nPaper: the authors' table (their accounting), TP / strategy latency.\n")
    print("| model | hardware | B | EP | CB | MILP-only | node | node+link | paper EP | paper CB | paper HD-MoE |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with open(os.path.join(out, "e2e.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "hardware", "batch", "fidelity"] + ["%s_tbt_us" % n for n in NAMES] +
                   ["paper_ep", "paper_cb", "paper_hdmoe", "dynamic_tbt_us"])
        for m, p, b in rows:
            t = flow[(m, p, b)]
            pr = paper_row(ref, m, p, b) or {}
            print("| %s | %s | %d | %s |" % (m, p, b, " | ".join(
                [fmt(t["tp"] / t[n]) for n in NAMES[1:]] + [fmt(pr.get(k)) for k in ("ep", "cb", "hdmoe")])))
            w.writerow([m, p, b, "flow"] + ["%.2f" % t[n] for n in NAMES] +
                       [fmt(pr.get(k)) for k in ("ep", "cb", "hdmoe")] + [""])
        if checks:
            print("\nCycle-fidelity check (same placements; dynamic = node+link with `--prebroadcast 2 --predict"
                  " previous`):\n")
            print("| model | hardware | B | node+link over TP, flow | cycle | TP cycle / flow | node+link + dynamic"
                  " over TP, cycle |")
            print("|---|---|---|---|---|---|---|")
            for r in checks:
                fl, cy, dy = flow[r], cycle[r], dyn[r]
                print("| %s | %s | %d | %.3f | %.3f | %.3f | %.3f |" % (r + (fl["tp"] / fl["hdmoe"], cy["tp"] / cy["hdmoe"],
                                                                           cy["tp"] / fl["tp"],
                                                                           cy["tp"] / dy["hdmoe"])))
                w.writerow(list(r) + ["cycle"] + ["%.2f" % cy[n] for n in NAMES] + ["", "", "", "%.2f" % dy["hdmoe"]])
    print("\nRows: %s" % os.path.join(out, "e2e.csv"))


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:  # nmpsim printed its one-line error above
        ha.die("%s exited with %d" % (" ".join(str(x) for x in e.cmd[:2]), e.returncode))
