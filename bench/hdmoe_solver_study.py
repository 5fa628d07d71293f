#!/usr/bin/env python3
"""HD-MoE under the authors' accounting: how much of their gain over TP our placements reach, against
the node-balance MILP's time per layer and the link-balance cost (issue 35, deliverable 1).

For each hardware point: the node-balance MILP with the authors' coefficients (objective=authors, no
held-out selection, gamma 0.5; placed at B = 128 on the Mixtral MT-Bench reasoning trace, as theirs) at
each time limit per layer, alone and with link balance as theirs (a map per layer, their store-and-forward
simulation, 70 calls as their skopt run; and 300 calls on the shortest limit); then, on the longest
limit's node balance, link balance with our cost (one map, flow-level link load). Every placement is accounted with `nmpsim run --accounting hdmoe-authors` at the
batches of their table (data/reference/hdmoe/result3_e2e.json) beside their HD-MoE row.

Usage: bench/hdmoe_solver_study.py [--bin PATH] [--out DIR] [--points P,...] [--limits S,...] [--jobs N]
  --points  nmp-4x8-10t25g,nmp-8x8-5t50g (default: the two points where the gap is largest)
  --limits  seconds per layer (default 1,4,30; the issue's 120 costs 64 min per point, pass it to add it)
Writes DIR/solver_study.csv (one row per point, placement and batch) and a report to stdout. The time
limit is wall-clock: the points run in parallel (--jobs, default 2), each on its own core; run it on an
otherwise idle machine, or the long limits reach less. Limits 1,4,30: about 17 minutes on two cores.
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

AUTHORS = ["--strategy-opt", "hdmoe-node.objective=authors", "--strategy-opt", "hdmoe-node.selection_batches=0",
           "--strategy-opt", "hdmoe-node.gamma=0.5"]


def place(binary, out, point, strategy, limit, extra=()):
    """Places Mixtral at B = 128 with the authors' MILP coefficients; returns (path, solver JSON, seconds)."""
    path = os.path.join(out, "%s-%s-%gs.json" % (point, strategy, limit))
    name = strategy.split(":")[0]
    opts = [a.replace("hdmoe-node.", name + ".") for a in AUTHORS]
    if not os.path.exists(path):
        subprocess.run([binary, "place", "--strategy", name, "--hw", point, "--model", "mixtral-8x7b",
                        "--trace", "mtbench-reasoning", "--batch", "128", "--time-limit", str(limit), "--quiet",
                        "--out", path + ".tmp", "--cache-dir", os.path.join(out, "cache")] + opts + list(extra),
                       check=True)
        os.replace(path + ".tmp", path)
    with open(path) as f:
        solver = json.load(f)["solver"]
    # The solve's own seconds (a placement reused from an earlier run took none now).
    return path, solver, solver.get("solve_seconds", 0) + solver.get("link_balance", {}).get("seconds", 0)


def rows_of(ref, point):
    return sorted((r for r in ref if r["config"]["model"] == "mixtral" and ha.preset(r["config"]) == point),
                  key=lambda r: r["config"]["batch"])


def account_all(binary, out, ref, point, label, path):
    """[(batch, ours/TP, theirs/TP, ours comp, ours comm, theirs comp, theirs comm, TP)] over the table's rows."""
    res = []
    for row in rows_of(ref, point):
        cfg = row["config"]
        r = ha.account(binary, os.path.join(out, "acc-%s-%s-%d" % (point, label, cfg["batch"])), cfg, "tp," + path)
        ours = [v for k, v in r.items() if k != "tp"][0]
        tp = r["tp"][3]
        nlb = row["node_link_balancing"]
        res.append((cfg["batch"], tp / ours[3], row["TP"]["latency_us"] / nlb["latency_us"], ours[1], ours[0],
                    nlb["computation_us"], nlb["communication_us"], tp))
    return res


def solver_stats(s):
    layers = s["layers"]
    return {"objective_us": s["objective_us_sum"], "bound_us": sum(x["bound_us"] for x in layers),
            "ep_objective_us": s["ep_objective_us_sum"], "optimal": sum(x["optimal"] for x in layers),
            "cbc_answers": sum(x["answer_from"] == "cbc" for x in layers), "layers": len(layers),
            "tp_layers": sum(x["chose_tp"] for x in layers)}


def study_point(job):
    """The report lines and CSV rows of one hardware point."""
    binary, out, ref, point, limits = job
    lines = ["\n## %s (Mixtral, reasoning trace, placed at B = 128, authors' MILP coefficients, gamma 0.5)" % point,
             "%-28s %9s %9s %9s %5s %5s %7s  %s" % ("placement", "objective", "bound", "gap", "opt", "cbc", "place s",
                                                    "speed-up over TP at B = 8..128: ours / theirs (share of gain)")]
    rows = []
    authors_link = ("--strategy-opt", "hdmoe.link_cost=authors", "--evaluations")
    variants = []
    for L in limits:
        variants += [("node %gs" % L, "hdmoe-node", L, ()),
                     ("node+link authors %gs" % L, "hdmoe:authors", L, authors_link + ("70",))]
    variants += [("node+link authors %gs x300" % limits[0], "hdmoe:authors300", limits[0], authors_link + ("300",)),
                 ("node+link flow %gs" % limits[-1], "hdmoe", limits[-1], ("--strategy-opt", "hdmoe.link_cost=flow"))]
    for label, strategy, limit, extra in variants:
        path, solver, secs = place(binary, out, point, strategy, limit, extra)
        st = solver_stats(solver)
        acc = account_all(binary, out, ref, point, label.replace(" ", "_"), path)
        gap = 1 - st["bound_us"] / st["objective_us"]
        cells = " ".join("%.2f/%.2f(%.0f%%)" % (o, t, 100 * (o - 1) / (t - 1) if t > 1 else 0) for _, o, t, *_ in acc)
        lines.append("%-28s %9.1f %9.1f %8.1f%% %5d %5d %7.0f  %s" % (label, st["objective_us"], st["bound_us"],
                                                                    100 * gap, st["optimal"], st["cbc_answers"], secs,
                                                                    cells))
        for b, o, t, oc, om, tc, tm, tp in acc:
            rows.append([point, label, limit, b, "%.2f" % st["objective_us"], "%.2f" % st["bound_us"], st["optimal"],
                         st["cbc_answers"], "%.4f" % o, "%.4f" % t, "%.2f" % oc, "%.2f" % om, "%.2f" % tc,
                         "%.2f" % tm, "%.2f" % tp])
    return lines, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/apps/nmpsim")
    ap.add_argument("--out", default="")
    ap.add_argument("--points", default="nmp-4x8-10t25g,nmp-8x8-5t50g")
    ap.add_argument("--limits", default="1,4,30")
    ap.add_argument("--jobs", type=int, default=2, help="points solved at once (one per idle core)")
    a = ap.parse_args()
    if a.jobs < 1:
        ha.die("--jobs: expected a positive number, got %d" % a.jobs)
    if not os.access(a.bin, os.X_OK):
        ha.die("%s is not an executable (build first, or pass --bin)" % a.bin)
    limits = ha.number_list(a.limits, float, "--limits")
    with open(ha.REF) as f:
        ref = json.load(f)
    out = a.out or tempfile.mkdtemp(prefix="hdmoe-solver-")
    os.makedirs(out, exist_ok=True)
    # A private copy: the placement cache is keyed by the binary, so a rebuild during the hour this
    # takes must not make the link-balance runs solve the node balance again.
    binary = os.path.join(out, "nmpsim")
    shutil.copy2(a.bin, binary)
    with open(os.path.join(out, "solver_study.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["point", "placement", "limit_s", "batch", "objective_us_sum", "bound_us_sum", "layers_optimal",
                    "layers_cbc_answer", "ours_speedup_tp", "theirs_speedup_tp", "ours_comp_us", "ours_comm_us",
                    "theirs_comp_us", "theirs_comm_us", "tp_latency_us"])
        # One point per core: the time limits are wall-clock, so run no more points at once than idle cores.
        points = a.points.split(",")
        with Pool(min(a.jobs, len(points))) as pool:
            for lines, rows in pool.map(study_point, [(binary, out, ref, p, limits) for p in points]):
                print("\n".join(lines))
                w.writerows(rows)
    print("\nshare of gain = (ours - 1) / (theirs - 1); objective and bound: the MILP's, summed over layers (us);"
          "\nbound: the best of the closed-form relaxation, the LP and CBC's proven bound; opt: layers proven"
          " optimal;\ncbc: layers whose answer came from branch and bound (the others: EP, the wrap-around split or"
          " the LP point). Rows: %s" % os.path.join(out, "solver_study.csv"))


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:  # nmpsim printed its one-line error above
        ha.die("%s exited with %d" % (" ".join(str(x) for x in e.cmd[:2]), e.returncode))
