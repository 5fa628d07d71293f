#!/usr/bin/env python3
"""Writes docs/REPRODUCTION.md's MoEntwine section from the outputs of bench/reproduce/moentwine.sh (claim,
where in the paper, the paper's number, ours, regime, command, verdict), then the tables behind the rows.
Replaces only the text between the section's markers.

Usage: moentwine_section.py OUTDIR REPRODUCTION.md SECONDS
"""
import os

from section_lib import parse_args, read_csv, replace_section

BEGIN, END = "<!-- moentwine:begin -->", "<!-- moentwine:end -->"
BASE, ER, HER = "moentwine-baseline", "moentwine-er", "moentwine-her"
REPRO = "`python3 bench/moentwine_repro.py --sections %s`"
BAL = "`bash bench/moentwine_balance.sh build/apps/nmpsim 32 SLOTS`"
COMM_REGIME = "decode step, 256 tokens per TP group, balanced gating, INT8 weights, flow fidelity"


def by(rows, *keys):
    """{(values of keys..., strategy): row}."""
    return {tuple(r[k] for k in keys) + (r["strategy"],): r for r in rows}


def ratios(rows, keys, new, base, field, where=lambda r: True):
    """[(key tuple, new/base of field)] for every key tuple that has both strategies."""
    idx, out = by(rows, *keys), []
    for r in rows:
        if r["strategy"] != base or not where(r):
            continue
        k = tuple(r[x] for x in keys)
        if k + (new,) in idx and float(r[field]) > 0:
            out.append((k, float(idx[k + (new,)][field]) / float(r[field])))
    return out


def cut(values):
    """'a-b%' reduction (1 - ratio) over ratios; negative means new is slower."""
    if not values:
        return "-"
    c = sorted(100 * (1 - v) for v in values)
    return "%.0f%% to %.0f%%" % (c[0], c[-1]) if len(c) > 1 else "%.0f%%" % c[0]


def best(pairs):
    """The pair with the lowest ratio (the best case of 'up to')."""
    return min(pairs, key=lambda p: p[1]) if pairs else None


def mapping_claims(comm, eq1):
    rows = []
    k = ["system", "model"]
    a2a_44 = [v for _, v in ratios(comm, k, ER, BASE, "moe_comm_us", lambda r: r["system"] == "4x4")]
    ar_44 = [v for _, v in ratios(comm, k, ER, BASE, "allreduce_us", lambda r: r["system"] == "4x4")]
    if a2a_44:
        x = 1 / max(a2a_44)
        rows.append(("ER cuts the all-to-all by more than 2x on 4x4", "Sec. IV-B2, Fig. 8(c)", "> 2x",
                     "%.2f-%.2fx (5 models)" % (1 / max(a2a_44), 1 / min(a2a_44)), COMM_REGIME, REPRO % "comm",
                     "reproduced within 5%%: %.2fx against > 2x (the FTD's hops halve: 8/3 -> 4/3)" % x
                     if x >= 1.9 else "short of it"))
    if ar_44:
        rows.append(("ER's entwined two-hop rings double the all-reduce (both ways, time-staggered: no link "
                     "conflict)", "Sec. IV-B3, Fig. 8(d)", "2x", "%.2f-%.2fx" % (min(ar_44), max(ar_44)),
                     COMM_REGIME, REPRO % "comm",
                     "direction; %.0f-%.0f%% above 2x: our entwined rings share their boundary links (no "
                     "staggering is modelled), and 4 ring collectives run per layer" %
                     (100 * (min(ar_44) / 2 - 1), 100 * (max(ar_44) / 2 - 1))))
    for system, claim, where, paper in (
            ("6x6", "ER up to 35% lower communication than the baseline mapping", "Sec. VI-B2, Fig. 13(b)", "35%"),
            ("8x8", "ER up to 46% lower communication (Qwen3, 8x8, TP 16: the peak)", "Sec. VI-B3, Fig. 13(c)",
             "46%")):
        pairs = ratios(comm, k, ER, BASE, "comm_us", lambda r, s=system: r["system"] == s)
        if not pairs:
            continue
        (_, model), r = best(pairs)
        a2a = [v for _, v in ratios(comm, k, ER, BASE, "moe_comm_us", lambda r, s=system: r["system"] == s)]
        q = [x for x in pairs if x[0][1] == "qwen3-235b-a22b"]
        rec = [x["eq1"] for x in eq1 if x["system"] == system]
        rows.append((claim, where, paper, "best %s (%s); Qwen3 %s; all five: %s; all-to-all alone %s" %
                     (cut([r]), model, cut([q[0][1]]) if q else "-", cut([v for _, v in pairs]), cut(a2a)),
                     COMM_REGIME, REPRO % "comm",
                     ("direction only" if (q[0][1] if q and system == "8x8" else r) < 0.97 else "contradicted") +
                     ": ER's all-reduce grows more than its "
                     "all-to-all shrinks; with the paper's Eq. 1 (hop-multiplied latency) reconstructed on our "
                     "times ER gains %s (the table 'What carries the gap')" % cut(rec)))
    pairs = ratios(comm, k, ER, BASE, "comm_us", lambda r: r["model"] == "mixtral-8x22b" and r["system"] == "6x6")
    if pairs:
        rows.append(("With two active experts (Mixtral) naive ER may fail to benefit", "Sec. VI-B2", "no gain",
                     "ER / baseline communication %.2f" % pairs[0][1], COMM_REGIME, REPRO % "comm",
                     "reproduced" if pairs[0][1] >= 0.97 else "contradicted (ER gains)"))
    her = ratios(comm, k, HER, BASE, "comm_us", lambda r: r["system"] == "4wafer")
    if her:
        worst = max(v for _, v in her)
        rows.append(("HER up to 62% lower communication than the baseline across wafers, better in all cases",
                     "abstract; Sec. I; Sec. VI-B4, Fig. 13(d)", "up to 62%; > 0 in all",
                     "%s (5 models, four 8x8 wafers, TP 16)" % cut([v for _, v in her]), COMM_REGIME,
                     REPRO % "comm", "reproduced in direction, larger: the baseline's groups and domains span "
                     "wafers, its all-to-all crosses the shared borders" if worst < 1 else "contradicted"))
    for new, claim, paper in ((ER, "ER cuts the all-to-all 30% against the baseline on four wafers", "30%"),
                              (HER, "HER cuts it 71%", "71%")):
        v = [x for _, x in ratios(comm, k, new, BASE, "moe_comm_us", lambda r: r["system"] == "4wafer")]
        if v:
            rows.append((claim, "Sec. VI-D, Fig. 17", paper, cut(v), COMM_REGIME, REPRO % "comm",
                         "direction; larger than the paper's (ours: whole-wafer domains keep the all-to-all off "
                         "the borders)" if max(v) < 1 else "contradicted"))
    return rows


def eq1_rows(comm, ftd):
    """Per one-wafer row: what carries the gap. s = the all-reduce's share of the baseline's communication;
    our multipliers (ER / baseline all-to-all and all-reduce); the ratio the paper's multipliers (0.5, 2)
    give at our s; ours at the s the paper's 35% implies (0.1); and the paper's Eq. 1 (latency = hops x
    (transfer + link latency)) reconstructed on our times: the baseline's measured all-to-all and all-reduce
    taken as one-hop times and multiplied by each layout's mean all-to-all hops and ring step hops."""
    hops = {(r["system"], r["strategy"]): (float(r["avg_hops"]), float(r["ring_step_hops"])) for r in ftd}
    idx, out = by(comm, "system", "model"), []
    for r in comm:
        e = idx.get((r["system"], r["model"], ER))
        if r["strategy"] != BASE or not e or (r["system"], BASE) not in hops:
            continue
        a, ar, ea, ear = (float(x) for x in (r["moe_comm_us"], r["allreduce_us"], e["moe_comm_us"], e["allreduce_us"]))
        (hb, rb), (he, re) = hops[(r["system"], BASE)], hops[(r["system"], ER)]
        sh = ar / (a + ar)
        out.append(dict(system=r["system"], model=r["model"], share=sh, m_a2a=ea / a, m_ar=ear / ar,
                        ours=(ea + ear) / (a + ar), paper_mult=0.5 * (1 - sh) + 2 * sh,
                        at_paper_share=0.9 * ea / a + 0.1 * ear / ar,
                        eq1=(a * he + ar * re) / (a * hb + ar * rb)))
    return out


def eq1_table(rows):
    lines = ["", "### What carries the gap: the all-reduce's share and the paper's latency model (Eq. 1)", "",
             "ER / baseline communication. `share`: the all-reduce's part of the baseline's communication. "
             "`paper's x at our share`: 0.5 x all-to-all + 2 x all-reduce (Sec. IV-B). `ours at share 0.1`: our "
             "multipliers where the all-reduce is a tenth of the communication, as the paper's 35% implies with "
             "its multipliers. `Eq. 1 on our times`: a **reconstruction**: the baseline's measured all-to-all and "
             "all-reduce taken as one-hop times, each multiplied by its layout's hops (mean all-to-all hops in "
             "the full token domain, hops per ring step; `nmpsim place`), as the paper's latency = hops x "
             "(transfer + link latency) does.", "",
             "| system | model | share | all-to-all x | all-reduce x | ours | paper's x at our share | "
             "ours at share 0.1 | Eq. 1 on our times |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
            r["system"], r["model"], r["share"], r["m_a2a"], r["m_ar"], r["ours"], r["paper_mult"],
            r["at_paper_share"], r["eq1"]))
    return lines


def sens_claims(sens):
    rows = []
    for system, new in (("6x6", ER), ("8x8", ER), ("4wafer", HER)):
        for regime in ("decode", "prefill"):
            pick = lambda r, s=system, g=regime: r["system"] == s and r["regime"] == g
            comm = dict((k[2], v) for k, v in ratios(sens, ["system", "regime", "setting"], new, BASE, "comm_us",
                                                     pick))
            tbt = dict((k[2], v) for k, v in ratios(sens, ["system", "regime", "setting"], new, BASE,
                                                    "mean_tbt_us", pick))
            if "paper's setting" not in comm:
                continue
            turns = [s for s in comm if (comm[s] < 1) != (comm.get("default", 1) < 1)]
            rows.append(("%s against the baseline, %s, %s: the verdict at the paper's setting" %
                         (new.split("-")[1].upper(), system, regime), "Sec. VI (its assumptions)",
                         "lower communication", "communication %.2fx, step %.3fx of the baseline's (default: %.2fx, "
                         "%.3fx)" % (comm["paper's setting"], tbt["paper's setting"], comm["default"], tbt["default"]),
                         "paper's setting: 4 NI ports, both-way rings, fused reductions, all-reduce pipelined with "
                         "attention (8 chunks), 2 micro-batches",
                         REPRO % "sens", ("ER/HER wins" if comm["paper's setting"] < 1 else "baseline wins") +
                         ("; settings that turn the communication verdict: " + ", ".join(turns) if turns
                          else "; no single setting turns the communication verdict")))
    return rows


def balance_claims(bal):
    rows = []
    if not bal:
        return rows
    get = lambda s, g, b, n: next((r for r in bal if r["system"] == s and r["regime"] == g and r["balancer"] == b
                                   and r["slots_run"] == n), None)
    slot_runs = sorted({r["slots_run"] for r in bal}, key=int)
    dev_none = [float(r["peak_to_mean"]) - 1 for r in bal if r["balancer"] == "none" and r["slots_run"] == "1"]
    rows.append(("Without balancing the busiest device deviates 2x from the mean", "Sec. VI-C1, Fig. 15", "2x",
                 "%.2f-%.2fx (traces chosen for it)" % (min(dev_none), max(dev_none)), "see the balancing table",
                 BAL, "set up to match (Zipf skews chosen so), not a result"))
    for slots in slot_runs:
        dev = [float(r["peak_to_mean"]) - 1 for r in bal if r["balancer"] == "greedy" and r["slots_run"] == slots]
        rows.append(("Greedy balancing cuts the deviation to about 0.4x (%s shadow slot(s) per die and layer)" % slots,
                     "Sec. VI-C1, Fig. 15", "0.4x", "%.2f-%.2fx" % (min(dev), max(dev)), "synthetic drifting "
                     "traces and MT-Bench's mixed categories, decode/prefill/hybrid", BAL.replace("SLOTS", slots),
                     "reproduced within 0.1" if max(dev) <= 0.5 else "short: more slots close it" if slots != "4"
                     else "short"))
    for slots in slot_runs:
        ratio, cuts, a2a, nonexp = [], [], [], []
        for r in bal:
            if r["slots_run"] != slots or r["balancer"] != "greedy":
                continue
            inv = get(r["system"], r["regime"], "invasive", slots)
            none = get(r["system"], r["regime"], "none", slots)
            ni = get(r["system"], r["regime"], "non-invasive", slots)
            if inv and float(inv["exposed_us"]) > 0:
                ratio.append(float(r["exposed_us"]) / float(inv["exposed_us"]))
            if none and ni:
                cuts.append(1 - float(ni["moe_compute_us"]) / float(none["moe_compute_us"]))
                a2a.append(1 - float(ni["moe_comm_us"]) / float(none["moe_comm_us"]))
                nonexp.append(100 * float(ni["exposed_us"]) / float(ni["tbt_us"]))
        if ratio:
            rows.append(("Topology-aware migration costs 2.6x less than greedy (%s slot(s))" % slots,
                         "Sec. VI-C2, Fig. 16 (VI-D: 67%)", "2.6x", "%.1f-%.1fx less exposed time" %
                         (min(ratio), max(ratio)), "both invasive (paused), every 10 steps at most",
                         BAL.replace("SLOTS", slots), "reproduced in direction" if min(ratio) > 1 else "mixed"))
        if cuts:
            rows.append(("Non-invasive balancing: zero overhead, MoE computation up to -54%%, all-to-all -22/23%% "
                         "(%s slot(s))" % slots, "abstract; Sec. VI-C2", "0; 54%; 22-23%",
                         "exposed %.0f-%.0f%% of the step; compute up to %.0f%%; all-to-all %.0f%% to %.0f%%" %
                         (min(nonexp), max(nonexp), 100 * max(cuts), 100 * min(a2a), 100 * max(a2a)),
                         "non-invasive against none", BAL.replace("SLOTS", slots),
                         "overhead contradicted (never zero: migration shares links and NIs); compute gain short"
                         if min(nonexp) > 0.5 else "reproduced"))
    return rows


def not_modelled():
    return [("WSC against DGX and NVL72 (communication 54-56%, 73% with ER, 50% with ESP; per-device MoE 39% "
             "over NVL72; NVL72 balancing 26%)", "abstract; Sec. I; VI-B1, VI-B2, VI-B5, VI-D", "see claim",
             "not measured", "-", "-", "not reproducible here: nmpsim models NMP and wafer-scale chips, no GPU "
             "cluster"),
            ("ER with expert-sharded parallelism (DBRX, Mixtral): 9%", "Sec. VI-B5, Fig. 14(a)", "9%",
             "not measured", "-", "-", "not modelled: experts are whole on a die (no ESP)")]


def tables(out):
    """The detail tables, markdown."""
    comm, sens, cyc, e2e = (read_csv(os.path.join(out, n + ".csv")) for n in ("comm", "sens", "cycle", "e2e"))
    lines = ["", "### Communication as the paper reports it (Fig. 13(b)-(d))", "",
             "| system | model | strategy | all-to-all us | all-reduce us | communication us | step us |",
             "|---|---|---|---|---|---|---|"]
    for r in comm:
        lines.append("| %s | %s | %s | %.0f | %.0f | %.0f | %.0f |" % (
            r["system"], r["model"], r["strategy"].replace("moentwine-", ""), float(r["moe_comm_us"]),
            float(r["allreduce_us"]), float(r["comm_us"]), float(r["mean_tbt_us"])))
    lines += ["", "### Which assumption decides (new / baseline: communication, step)", "",
              "| system | regime | setting | comm ER | step ER | comm HER | step HER |", "|---|---|---|---|---|---|---|"]
    idx = by(sens, "system", "regime", "setting")
    for r in sens:
        if r["strategy"] != BASE:
            continue
        k = (r["system"], r["regime"], r["setting"])
        cell = lambda s, f: ("%.2f" if f == "comm_us" else "%.3f") % (float(idx[k + (s,)][f]) / float(r[f])) \
            if k + (s,) in idx else "-"
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (k + (cell(ER, "comm_us"), cell(ER, "mean_tbt_us"),
                                                                  cell(HER, "comm_us"), cell(HER, "mean_tbt_us"))))
    lines += ["", "### End to end: step time new / baseline (the paper reports no end-to-end time)", "",
              "| system | model | regime | overlap | ER | HER | baseline step us |", "|---|---|---|---|---|---|---|"]
    idx = by(e2e, "system", "model", "regime", "overlap")
    for r in e2e:
        if r["strategy"] != BASE:
            continue
        k = (r["system"], r["model"], r["regime"], r["overlap"])
        cell = lambda s: "%.3f" % (float(idx[k + (s,)]["mean_tbt_us"]) / float(r["mean_tbt_us"])) \
            if k + (s,) in idx else "-"
        lines.append("| %s | %s | %s | %s | %s | %s | %.0f |" % (k + (cell(ER), cell(HER), float(r["mean_tbt_us"]))))
    lines += ["", "### Cycle-fidelity checks (validated band: step within 5%, communication within 15%)", "",
              "| system | model | regime | strategy | step flow / cycle us | communication flow / cycle us | "
              "step diff | comm diff | in band |", "|---|---|---|---|---|---|---|---|---|"]
    idx = by(cyc, "system", "model", "regime", "fidelity")
    for r in cyc:
        if r["fidelity"] != "cycle":
            continue
        f = idx.get((r["system"], r["model"], r["regime"], "flow", r["strategy"]))
        if not f:
            continue
        dt = float(f["mean_tbt_us"]) / float(r["mean_tbt_us"]) - 1
        dc = float(f["comm_us"]) / float(r["comm_us"]) - 1
        lines.append("| %s | %s | %s | %s | %.0f / %.0f | %.0f / %.0f | %+.1f%% | %+.1f%% | %s |" % (
            r["system"], r["model"], r["regime"], r["strategy"].replace("moentwine-", ""), float(f["mean_tbt_us"]),
            float(r["mean_tbt_us"]), float(f["comm_us"]), float(r["comm_us"]), 100 * dt, 100 * dc,
            "yes" if abs(dt) <= 0.05 and abs(dc) <= 0.15 else "no"))
    return lines


def main():
    out, target, seconds = parse_args("moentwine_section.py OUTDIR REPRODUCTION.md SECONDS")
    comm = read_csv(os.path.join(out, "comm.csv"))
    eq1 = eq1_rows(comm, read_csv(os.path.join(out, "ftd.csv")))
    sens = read_csv(os.path.join(out, "sens.csv"))
    bal = []
    for slots in ("1", "2", "4"):
        for r in read_csv(os.path.join(out, "balance_slots%s.csv" % slots)):
            r["slots_run"] = slots
            bal.append(r)
    lines = [BEGIN, "## MoEntwine (Luo et al., 2025): wafer-scale inference", "",
             "Regenerated by `bash bench/reproduce/moentwine.sh` in %.0f minutes on this project's 2-core machine. "
             "The paper's mapping numbers are communication latency (all-to-all plus all-reduce, Fig. 13), not "
             "step time; its simulator is ASTRA-sim's analytical back end with a hop-multiplied latency (its Eq. 1) "
             "and no stated NI ports, ring staggering or kernel start-up. docs/RESULTS.md \"MoEntwine in its own "
             "regime\" discusses the verdicts." % (seconds / 60), "",
             "| claim | where | paper | ours | regime | command | verdict |", "|---|---|---|---|---|---|---|"]
    for row in mapping_claims(comm, eq1) + sens_claims(sens) + balance_claims(bal) + not_modelled():
        lines.append("| " + " | ".join(row) + " |")
    lines += eq1_table(eq1) + tables(out)
    for slots in ("1", "2", "4"):
        path = os.path.join(out, "balance_slots%s.md" % slots)
        if os.path.exists(path):
            lines += ["", "### Balancing with drift, %s shadow slot(s) per die and MoE layer (Fig. 15-16)" % slots, ""]
            lines += [x for x in open(path).read().splitlines() if x.startswith("|")]
    path = os.path.join(out, "links.md")
    if os.path.exists(path):
        lines += ["", "### Link heatmaps (Fig. 9): `docs/moentwine_links.png`", ""]
        lines += [x for x in open(path).read().splitlines() if x.startswith("|")]
    lines.append(END)
    replace_section(target, BEGIN, END, lines)


if __name__ == "__main__":
    main()
