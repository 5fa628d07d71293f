#!/usr/bin/env python3
"""Writes docs/REPRODUCTION.md's HD-MoE section from the outputs of bench/reproduce/hdmoe.sh (claim,
where in the paper, the paper's number, ours, regime, command, verdict). Replaces only the text
between the section's markers; creates the file with a header if it does not exist.

Usage: hdmoe_section.py OUTDIR REPRODUCTION.md SECONDS
"""
import os

from section_lib import parse_args, read_csv, replace_section

BEGIN, END = "<!-- hdmoe:begin -->", "<!-- hdmoe:end -->"


def rng(values, fmt="%.2f"):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return (fmt + "-" + fmt) % (min(values), max(values)) + "x"


def verdict(ours, lo, hi, band=0.05):
    """Reproduced when our range lies within the paper's widened by `band`; direction when ours is above 1
    where theirs is; else contradicted."""
    if not ours:
        return "not measured"
    a, b = min(ours), max(ours)
    if a >= lo - band and b <= hi + band:
        return "reproduced within +-%.2f" % band if band else "reproduced (inside the paper's range)"
    if b > 1.0:
        return "direction only"
    return "contradicted"


def e2e_claims(e2e):
    flow = [r for r in e2e if r["fidelity"] == "flow"]
    if not flow:
        return []
    tp = [float(r["tp_tbt_us"]) / float(r["hdmoe_tbt_us"]) for r in flow]
    ep = [float(r["ep_tbt_us"]) / float(r["hdmoe_tbt_us"]) for r in flow]
    cb = [float(r["cb_tbt_us"]) / float(r["hdmoe_tbt_us"]) for r in flow]
    paper_tp = [float(r["paper_hdmoe"]) for r in flow if r["paper_hdmoe"] not in ("", "-")]
    regime = "decode, B = 8-128, 3 models x 5 hardware points, flow fidelity, placements built at B = 128"
    cmd = "`python3 bench/hdmoe_e2e.py`"
    why = "; what carries the gap: the sensitivity rows below"
    def behind(ratios):
        """Where HD-MoE is behind a baseline: how many rows, at which batches."""
        rows = [r for r, x in zip(flow, ratios) if x < 0.995]  # baseline TBT / HD-MoE TBT
        if not rows:
            return ""
        batches = sorted({int(r["batch"]) for r in rows})
        return ("; behind it on %d of %d rows (B = %s): placements built at B = 128 run at other batches"
                " (docs/RESULTS.md, 'HD-MoE in its own regime')" % (len(rows), len(flow),
                                                                     ", ".join(map(str, batches))))
    return [("HD-MoE 1.1-1.8x over TP", "abstract; Sec. V-B, Fig. 8-9", "1.1-1.8x (authors' table: %s)" % rng(paper_tp),
             rng(tp), regime, cmd, verdict(tp, 1.1, 1.8) + why),
            ("HD-MoE 1.1-1.5x over EP", "abstract; Sec. V-B", "1.1-1.5x", rng(ep), regime, cmd, verdict(ep, 1.1, 1.5) + behind(ep)),
            ("HD-MoE 1.0-1.4x over hybrid compute-balanced", "abstract; Sec. V-B", "1.0-1.4x", rng(cb), regime, cmd,
             verdict(cb, 1.0, 1.4) + behind(cb))]


def solver_claims(solver):
    rows = []
    for point in dict.fromkeys(r["point"] for r in solver):
        pr = [r for r in solver if r["point"] == point]
        best = max(dict.fromkeys(r["placement"] for r in pr),
                   key=lambda p: min(float(r["ours_speedup_tp"]) for r in pr if r["placement"] == p))
        ours = [float(r["ours_speedup_tp"]) for r in pr if r["placement"] == best]
        theirs = [float(r["theirs_speedup_tp"]) for r in pr if r["placement"] == best]
        share = [(o - 1) / (t - 1) for o, t in zip(ours, theirs) if t > 1]
        rows.append(("their HD-MoE rows under their accounting (Mixtral, %s)" % point, "authors' table (Fig. 8-9)",
                     rng(theirs), "%s with %s (%.0f-%.0f%% of their gain)" % (rng(ours), best, 100 * min(share),
                                                                             100 * max(share)),
                     "their accounting, B = 8-128, placed at B = 128", "`python3 bench/hdmoe_solver_study.py`",
                     "reproduced to 0.9 of the gain" if min(share) >= 0.9 else
                     "short: %.0f-%.0f%% of their gain; the gap is communication with the link search converged "
                     "(docs/RESULTS.md, 'HD-MoE in its own regime')" % (100 * min(share), 100 * max(share))))
    return rows


def ablation_tables(text):
    """{section number: rows as lists of cells} from bench/hdmoe_ablation.sh's output: the markdown
    tables' rows (headers left out) and section 1's CSV lines."""
    tables, section = {}, None
    for line in text.splitlines():
        if line.startswith("== "):
            section = line[3:].split(".")[0]
        elif section and line.startswith("| ") and not line.startswith(("| experts", "| hardware", "| placement")):
            tables.setdefault(section, []).append([c.strip() for c in line.strip().strip("|").split("|")])
        elif section and line[:1].isdigit() and "," in line:
            tables.setdefault(section, []).append(line.strip().split(","))
    return tables


def floats(values):
    out = []
    for v in values:
        try:
            out.append(float(v))
        except ValueError:
            pass
    return out


def node_claims(e2e):
    """Fig. 10: node balance alone against TP, EP and CB on DeepSeek (flow rows)."""
    ds = [r for r in e2e if r["fidelity"] == "flow" and r["model"] == "deepseek-v2-lite"]
    if not ds:
        return []
    node = lambda r: float(r["hdmoe-node_tbt_us"])  # noqa: E731
    over = {k: [float(r[k + "_tbt_us"]) / node(r) for r in ds] for k in ("tp", "ep", "cb")}
    regime = "decode, DeepSeek-V2-Lite, B = 8-128, 5 hardware points, flow"
    cmd = "`python3 bench/hdmoe_e2e.py`"
    return [("node balance 1.0-3.0x over TP and EP (DeepSeek)", "Sec. V-C1, Fig. 10", "1.0-3.0x",
             "%s over TP, %s over EP" % (rng(over["tp"]), rng(over["ep"])), regime, cmd,
             verdict(over["tp"] + over["ep"], 1.0, 3.0)),
            ("node balance 1.5x over hybrid compute-balanced (DeepSeek)", "Sec. V-C1, Fig. 10", "1.5x",
             rng(over["cb"]), regime, cmd, verdict(over["cb"], 1.45, 1.55))]


def mesh_claim(e2e):
    """Fig. 9: on Mixtral's 8x8 mesh the compute-balanced hybrid is slightly better than HD-MoE."""
    rows = [r for r in e2e if r["fidelity"] == "flow" and r["model"] == "mixtral-8x7b"
            and r["hardware"] == "nmp-8x8-5t50g"]
    if not rows:
        return []
    cb = [float(r["cb_tbt_us"]) / float(r["hdmoe_tbt_us"]) for r in rows]  # HD-MoE over CB
    seen = any(x < 0.995 for x in cb)
    return [("Mixtral 8x8: CB slightly better than HD-MoE", "Sec. V-B, Fig. 9", "CB ahead (their table: CB 1.10-1.17x, "
             "HD-MoE 1.05-1.09x over TP)", "HD-MoE over CB %s" % rng(cb), "decode, B = 8-128, flow",
             "`python3 bench/hdmoe_e2e.py`", "reproduced" if seen else
             "contradicted: every layer may take CB's split (the per-layer choice), so HD-MoE is not behind CB")]


def ablation_claims(tables, gamma):
    cmd = "`bash bench/hdmoe_ablation.sh build/apps/nmpsim 1,5,6`"
    rows = []
    tail = [r for r in tables.get("6", []) if len(r) >= 6]
    comp = [float(r[4]) / float(r[5]) for r in tail if len(floats(r[4:6])) == 2 and float(r[5]) > 0]
    if comp:
        mean = sum(comp) / len(comp)
        ep_tail, node_tail = sum(floats(r[1] for r in tail)), sum(floats(r[2] for r in tail))
        rows.append(("node balance cuts EP's compute latency 2.0x on average (DeepSeek)", "Sec. V-C1, Fig. 11", "2.0x",
                     "%.2fx on average over %d hardware points (%s); the tail itself %.0f -> %.0f us summed" %
                     (mean, len(comp), rng(comp), ep_tail, node_tail),
                     "decode, DeepSeek-V2-Lite, B = 64, flow", cmd, verdict([mean], 2.0, 2.0, 0.15)))
    conv = [r for r in tables.get("1", []) if len(r) >= 2]
    if len(conv) >= 2:
        first, last = floats(conv[0][1:2]), floats(conv[-1][1:2])
        if first and last and last[0] > 0:
            red = first[0] / last[0]
            rows.append(("link balance: 1.2x lower communication than node balance alone", "Sec. V-C2, Fig. 13",
                         "1.2x (average)", "%.2fx (flow-level link-load cost, DeepSeek 4x8 10/25, 150 calls)" % red,
                         "decode, B = 64, the mapper's cost", cmd, verdict([red], 1.15, 1.25, 0)))
    dyn = [r for r in tables.get("5", []) if len(r) >= 5]
    for experts, paper in (("2", 1.15), ("5", 1.25)):
        for pred, note in (("trace", "an exact predictor"), ("previous", "the previous layer's routing")):
            speed = [1 / x for r in dyn if r[0] == experts and r[1] == pred for x in floats(r[3:5]) if x > 0]
            if not speed:
                continue
            why = "" if pred == "trace" else ": synthetic layers are independent, so the previous layer predicts nothing"
            rows.append(("dynamic pre-broadcast of %s experts: %.2fx over static" % (experts, paper),
                         "Sec. V-C3, Fig. 15", "%.2fx" % paper,
                         "%s with %s (window and flow admission), mean %.2fx" % (rng(speed, "%.3f"), note,
                                                                                  sum(speed) / len(speed)),
                         "decode, DeepSeek-V2-Lite, 2.5/75, B = 512, cycle, non-TP placement", cmd,
                         "reproduced on average (mean above the paper's, or within 0.05 below it)" if sum(speed) / len(speed) >= paper - 0.05
                         else verdict(speed, paper - 0.05, paper + 0.05, 0) + why))
    if gamma:
        r2 = [float(x) for x in gamma]
        rows.append(("Eq. 2-3 estimate fits the dispatch time, R^2 >= 0.9", "Sec. IV-B (gamma)", "R^2 >= 0.9",
                     "R^2 %s (flow level, Mixtral and DeepSeek, nmp-4x8-5t50g, B = 64)" % rng(r2, "%.2f").rstrip("x"),
                     "dispatch of 8 placements x 3 batches", "`nmpsim place --fit-gamma flow`",
                     "reproduced" if min(r2) >= 0.9 else "contradicted: Eq. 2 sees only each node's receive volume "
                     "(docs/RESULTS.md \"The analytical model: gamma\")"))
    return rows


def sensitivity_claims(sens):
    rows = []
    for case in dict.fromkeys(r["case"] for r in sens):
        cr = {r["assumption"]: x for r in sens if r["case"] == case
              for x in floats([r.get("hdmoe_speedup_over_tp", "")])}
        base = cr.get("theirs (all assumptions as their code)")
        single = {k: v for k, v in cr.items() if not k.startswith(("theirs", "all five", "gamma", "nmpsim", "paper"))}
        if base is None or not single:
            continue
        worst = min(single, key=single.get)
        rows.append(("HD-MoE over TP, %s, under their accounting" % case, "authors' table",
                     "%.2fx" % cr.get("paper (their table)", float("nan")),
                     "%.2fx built as theirs; %.2fx with all five of their assumptions switched to ours" %
                     (base, cr.get("all five switched", float("nan"))), "their accounting",
                     "`python3 bench/hdmoe_sensitivity.py`",
                     "the single assumption that moves it most: '%s' (%.2fx alone)" % (worst, single[worst])))
    return rows


def read_gamma(path):
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            if "R^2 =" in line:
                out.append(line.split("R^2 =")[1].split()[0])
    return out


def main():
    out, target, seconds = parse_args("hdmoe_section.py OUTDIR REPRODUCTION.md SECONDS")
    e2e = read_csv(os.path.join(out, "e2e", "e2e.csv"))
    solver = read_csv(os.path.join(out, "solver", "solver_study.csv"))
    sens = read_csv(os.path.join(out, "sensitivity", "sensitivity.csv"))
    abl_path = os.path.join(out, "ablation.txt")
    tables = ablation_tables(open(abl_path).read()) if os.path.exists(abl_path) else {}
    gamma = read_gamma(os.path.join(out, "gamma.txt"))
    lines = [BEGIN, "## HD-MoE (Huang et al., 2025): NMP inference", "",
             "Regenerated by `bash bench/reproduce/hdmoe.sh` in %.0f minutes on this project's 2-core machine."
             % (seconds / 60), "",
             "| claim | where | paper | ours | regime | command | verdict |", "|---|---|---|---|---|---|---|"]
    claims = (e2e_claims(e2e) + mesh_claim(e2e) + node_claims(e2e) + ablation_claims(tables, gamma)
              + solver_claims(solver) + sensitivity_claims(sens))
    for row in claims:
        lines.append("| " + " | ".join(row) + " |")
    for name, title in (("solver.txt", "The authors' gain under their accounting: solver time and link cost"),
                        ("sensitivity.txt", "Which assumption carries the gain"),
                        ("e2e.txt", "The paper's regime: decode at B = 8-128"),
                        ("ablation.txt", "Ablations: link balance, dynamic pre-broadcast, compute tail"),
                        ("gamma.txt", "gamma (Eq. 3) fitted at flow level"),
                        ("authors.txt", "The authors' accounting reproduced")):
        path = os.path.join(out, name)
        if os.path.exists(path):
            with open(path) as f:
                body = f.read().rstrip()
            if name == "authors.txt":  # its summary lines; the rows are in the output directory
                body = "\n".join(x for x in body.splitlines() if x.startswith("  ") or x.startswith("TP,")
                                  or x.startswith("Mixtral EP"))
            fence = "" if body.lstrip().startswith("|") or "\n|" in body else "```"
            lines += ["", "### " + title, ""] + ([fence] if fence else []) + [body] + ([fence] if fence else [])
    lines.append(END)
    replace_section(target, BEGIN, END, lines)

if __name__ == "__main__":
    main()
