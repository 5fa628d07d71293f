#!/usr/bin/env python3
"""The claim rows of docs/REPRODUCTION.md's HybridEP section (hybridep_section.py writes them): each (claim,
where, paper, ours, regime, command, verdict) from the CSVs of bench/hybridep_repro.py. The paper's numbers
live here only. A row whose inputs are missing says so; every verdict is computed from the numbers the row
prints.

Verdicts on a speed-up x: "reproduced" when every gain of ours (x - 1) lies in the paper's range of gains
widened by 25% either way; "direction only" when ours and the paper's lie on the same side of 1x; else
"contradicted". Our `resident` replication never stands in for HybridEP: its rows are labelled and no
verdict uses them."""

from section_lib import verdict, xs

REPRO = "`python3 bench/hybridep_repro.py --sections %s`"
REGIME = "training step, %s, Mistral-Small (E 32, top-2, FP32, 12 MoE layers), flow fidelity"
CLUSTER_NAMES = {"S": "Cluster-S (1 DC x 8 A800)", "M": "Cluster-M (2 DCs)", "L": "Cluster-L (4 DCs, xdc-4x8-a800)"}
D_MIB = [6, 12, 24, 48, 96, 192]
# Table V: iteration seconds per D (MiB), and the average speed-up of HybridEP over the three baselines.
PAPER_TABLE5 = {
    "M": {"Tutel": [2.52, 4.26, 5.82, 7.62, 12.65, 20.35], "FasterMoE": [2.58, 4.37, 5.90, 7.81, 12.80, 20.82],
          "SmartMoE": [2.59, 4.34, 5.97, 7.80, 12.68, 20.91], "HybridEP": [2.48, 2.63, 2.74, 2.82, 3.01, 3.78],
          "speedup": [1.03, 1.64, 2.15, 2.75, 4.22, 5.47]},
    "L": {"Tutel": [3.74, 7.30, 10.69, 13.54, 18.59, 28.46], "FasterMoE": [3.86, 7.50, 11.09, 13.88, 19.32, 29.43],
          "SmartMoE": [3.82, 7.46, 10.94, 14.08, 19.25, 29.53], "HybridEP": [3.49, 3.53, 3.54, 3.85, 4.24, 5.20],
          "speedup": [1.09, 2.10, 3.08, 3.59, 4.49, 5.60]}}
# Table VI: (cluster, case) -> (Partition s, +Migration s), and the domain sizes the paper's model chose.
PAPER_TABLE6 = {("S", "24&8"): (0.76, 0.61), ("M", "24&8"): (3.41, 2.54), ("L", "24&8"): (6.12, 3.48),
                ("S", "48&2"): (1.06, 0.74), ("M", "48&2"): (6.21, 2.81), ("L", "48&2"): (10.89, 3.86)}
PAPER_PICKS = {("S", "24&8"): "4", ("M", "24&8"): "2,2", ("L", "24&8"): "4,1",
               ("S", "48&2"): "p = 0", ("M", "48&2"): "p = 0", ("L", "48&2"): "p = 0"}
PAPER_FIG13 = (1.18, 2.57)
PAPER_FIG17 = {"a": (1.05, 1.45), "b": (1.31, 3.76)}
HYB = "HybridEP"
GPUS = {"S": 8, "M": 16, "L": 32}


def f(v):
    return float(v)


def row(claim, where, paper, ours, regime, cmd, v):
    return [claim, where, paper, ours, regime, cmd, v]


def t5_index(t5):
    """{(cluster, d, name): step seconds}, name one of EP, Tutel, FasterMoE, HybridEP, resident."""
    names = {"EP": "EP", "Tutel": "Tutel", "FasterMoE": "FasterMoE", "HybridEP": HYB, "resident": "resident"}
    idx = {}
    for r in t5:
        name = next(n for k, n in names.items() if r["variant"].startswith(k))
        idx[(r["cluster"], int(r["d_mib"]), name)] = f(r["step_us"]) / 1e6
    return idx


def table5_rows(t5):
    if not t5:
        return [row("Table V", "Sec. V-C, Table V", "-", "not run", "-", REPRO % "table5", "not measured")]
    idx, out = t5_index(t5), []
    best = []
    for cl in ("M", "L"):
        ds = [d for d in D_MIB if (cl, d, HYB) in idx]
        sp = [(idx[(cl, d, "Tutel")] + idx[(cl, d, "FasterMoE")]) / 2 / idx[(cl, d, HYB)] for d in ds]
        paper = [PAPER_TABLE5[cl]["speedup"][D_MIB.index(d)] for d in ds]
        best += sp
        per_point = [verdict([o], p, p) for o, p in zip(sp, paper)]
        out.append(row("HybridEP over the baselines (mean of Tutel and FasterMoE; SmartMoE not built), %s, D = %s MB"
                       % (CLUSTER_NAMES[cl], ", ".join(map(str, ds))), "Sec. V-C, Table V",
                       " / ".join("%.2f" % p for p in paper) + "x",
                       " / ".join("%.2f" % s for s in sp) + "x", REGIME % CLUSTER_NAMES[cl], REPRO % "table5",
                       "%d of %d points reproduced; %s" % (per_point.count("reproduced"), len(sp),
                                                           verdict(sp, min(paper), max(paper)))))
        hyb = [idx[(cl, d, HYB)] for d in ds]
        tut = [idx[(cl, d, "Tutel")] for d in ds]
        out.append(row("(calibration) iteration times, %s: HybridEP; Tutel" % CLUSTER_NAMES[cl], "Table V",
                       "%.2f-%.2f s; %.2f-%.2f s" % (min(PAPER_TABLE5[cl]["HybridEP"]), max(PAPER_TABLE5[cl]["HybridEP"]),
                                                     min(PAPER_TABLE5[cl]["Tutel"]), max(PAPER_TABLE5[cl]["Tutel"])),
                       "%.2f-%.2f s; %.2f-%.2f s" % (min(hyb), max(hyb), min(tut), max(tut)),
                       REGIME % CLUSTER_NAMES[cl], REPRO % "table5", "no verdict: absolute times (the paper's non-MoE "
                       "time and its link rates are not ours; slope below)"))
        slope_p = (PAPER_TABLE5[cl]["Tutel"][-1] - PAPER_TABLE5[cl]["Tutel"][0]) / (D_MIB[-1] - D_MIB[0])
        if len(ds) >= 2:
            slope = (tut[-1] - tut[0]) / (ds[-1] - ds[0])
            out.append(row("(unit check) Tutel's seconds per MB of D, %s: the cross-DC rate the paper's 10 Gbps gives"
                           % CLUSTER_NAMES[cl], "Table V", "%.3f s/MB" % slope_p, "%.3f s/MB (%.1fx the paper's)" % (
                               slope, slope / slope_p), REGIME % CLUSTER_NAMES[cl], REPRO % "table5",
                           ("10 Gbps read as bits: within 3x of the paper's (at 10 GB/s ours would be 8x lower)"
                            if 1 / 3 <= slope / slope_p <= 3 else
                            "ours %.1fx the paper's: the mesh's split of a DC's 10 Gb/s (sensitivity table)"
                            % (slope / slope_p))))
        fm = [idx[(cl, d, "FasterMoE")] / idx[(cl, d, "Tutel")] for d in ds]
        out.append(row("FasterMoE's iteration time within +1..+4%% of Tutel's, %s" % CLUSTER_NAMES[cl], "Table V",
                       "1.01-1.04x of Tutel", "%s of Tutel" % xs(fm), REGIME % CLUSTER_NAMES[cl], REPRO % "table5",
                       # +1..+4%, the gains widened by 25% as every verdict here: 1.0075-1.05x
                       "reproduced" if all(1.0075 <= v <= 1.05 for v in fm) else
                       "contradicted: our shadowing %s Tutel's time" % ("cuts" if min(fm) < 1 else "adds to")))
    share = [f(r["moe_comm_us"]) / f(r["step_us"]) for r in t5 if r["variant"] == "EP"]
    out.append(row("EP's all-to-all takes most of the step at low bandwidth (>90% in Fig. 2(b))", "Sec. II-A, Fig. 2",
                   "> 90%", "%.0f-%.0f%% (EP, both clusters, D = 6-192 MB)" % (100 * min(share), 100 * max(share)),
                   "Table V's regime", REPRO % "table5", "reproduced" if min(share) >= 0.9 else "direction only"))
    model = [(f(r["predicted_us_per_layer"]), f(r["forward_us"]) / 12) for r in t5
             if r["strategy"] == "hybridep" and r["variant"].startswith(HYB) and f(r.get("predicted_us_per_layer") or 0)]
    if model:
        ratio = [p / m for p, m in model]
        out.append(row("The stream model's latency estimates are close to the measured ones", "Sec. V-B, Fig. 11",
                       "close (no number)", "Eq. 8's Lat_final / the measured forward per layer: %.2f-%.2f" % (
                           min(ratio), max(ratio)), "Table V's regime, HybridEP", REPRO % "table5",
                       "reproduced (within 25%)" if all(0.75 <= x <= 1.25 for x in ratio) else
                       "not reproduced: Eq. 8 leaves out what the forward also does (attention, gate, SR decode)"))
    out.insert(0, row("HybridEP up to 5.6x faster than Tutel, FasterMoE and SmartMoE under constrained bandwidth",
                      "abstract; Table V", "up to 5.60x", "up to %.2fx" % max(best), "Table V's clusters",
                      REPRO % "table5", verdict([max(best)], 5.60, 5.60)))
    return out


def table6_rows(t6):
    if not t6:
        return [row("Table VI", "Sec. V-D", "-", "not run", "-", REPRO % "table6", "not measured")]
    idx = {(r["cluster"], r["case"], r["variant"]): r for r in t6}
    gains, papers, picks, matched = [], [], [], []
    for (cl, case), (part, mig) in PAPER_TABLE6.items():
        p, m = idx.get((cl, case, "Partition")), idx.get((cl, case, "+Migration (HybridEP)"))
        if not p or not m:
            continue
        gains.append(f(p["step_us"]) / f(m["step_us"]))
        papers.append(part / mig)
        picks.append("%s %s: %s (paper %s)" % (cl, case, m["sed"], PAPER_PICKS[(cl, case)]))
        box = 1
        for x in m["sed"].split(","):
            box *= int(x) if x.strip().isdigit() else 1
        want = PAPER_PICKS[(cl, case)]
        matched.append(want == m["sed"] or (want == "p = 0" and box == GPUS[cl]))
    return [row("+Migration over Partition alone 1.25-2.82x", "Sec. V-D, Table VI", "%s (per row %s)" % (
        xs(papers), " / ".join("%.2f" % g for g in papers)), "%s (per row %s)" % (xs(gains), " / ".join(
            "%.2f" % g for g in gains)), "training step, S / M / L, 24 MB & 8 MB and 48 MB & 2 MB experts",
                REPRO % "table6", verdict(gains, min(papers), max(papers))),
            row("The model's domain sizes for +Migration", "Sec. V-D", "S 4; M 2,2; L 4,1 (24&8); p = 0 (48&2)",
                "; ".join(picks), "as above", REPRO % "table6",
                "%d of %d picks as the paper's (p = 0: every GPU in the domain)" % (sum(matched), len(matched)))]


def fig13_rows(f13):
    if not f13:
        return [row("Fig. 13", "Sec. V-C", "-", "not run", "-", REPRO % "fig13", "not measured")]
    idx = {(int(r["expert_mib"]), r["variant"]): f(r["step_us"]) for r in f13}
    sizes = sorted({k[0] for k in idx if (k[0], "EP") in idx and (k[0], "HybridEP without SR") in idx}, reverse=True)
    if not sizes:
        return [row("Fig. 13", "Sec. V-C", "-", "not run", "-", REPRO % "fig13", "not measured")]
    sp = [idx[(s, "EP")] / idx[(s, "HybridEP without SR")] for s in sizes]
    ep = [idx[(s, "EP")] for s in sizes]
    return [row("Without SR, expert size 32 -> 2 MB at D = 16 MB: HybridEP 1.18-2.57x", "Sec. V-C, Fig. 13",
                "1.18-2.57x", "%s over EP (%s MB: %s)" % (xs(sp), "/".join(map(str, sizes)), " / ".join(
                    "%.2f" % s for s in sp)), REGIME % CLUSTER_NAMES["L"] + ", 2048 tokens per GPU, hidden 1024",
                REPRO % "fig13", "%s; the growth as experts shrink (paper 2.57 / 1.18 = 2.2x): %s" % (
                    verdict(sp, *PAPER_FIG13), "%s (ours %.2fx)" % (
                        verdict([sp[-1] / sp[0]], PAPER_FIG13[1] / PAPER_FIG13[0], PAPER_FIG13[1] / PAPER_FIG13[0]),
                        sp[-1] / sp[0]))),
            row("The baselines' times barely change with the expert size", "Fig. 13", "nearly unchanged",
                "EP %.2f-%.2f s (%.0f%% spread)" % (min(ep) / 1e6, max(ep) / 1e6, 100 * (max(ep) / min(ep) - 1)),
                "as above", REPRO % "fig13", "reproduced" if max(ep) / min(ep) < 1.25 else "contradicted")]


def fig17_rows(f17):
    if not f17:
        return [row("Fig. 17: 1.05-1.45x over EP with 1000 DCs", "abstract; Sec. V-G", "1.05-1.45x", "not run",
                    "-", REPRO % "fig17", "not measured")]
    def kind(v):
        return "a" if v.endswith("(a)") else "b" if v.endswith("(b)") else "ep"
    idx = {(int(r["dcs"]), int(r["gbit_per_s"]), kind(r["variant"])): f(r["step_us"]) for r in f17}
    out = []
    for key in ("a", "b"):
        pts = sorted({(g, b) for (g, b, v) in idx if v == key and (g, b, "ep") in idx})
        if not pts:
            continue
        sp = [idx[(g, b, "ep")] / idx[(g, b, key)] for g, b in pts]
        lo, hi = PAPER_FIG17[key]
        out.append(row("Fig. 17(%s): HybridEP over EP, %s" % (key, "S_ED fixed at 8" if key == "a" else "S = G / 8"),
                       "Sec. V-G, Fig. 17", "%.2f-%.2fx" % (lo, hi), "%s (DCs/Gb/s: %s)" % (xs(sp), ", ".join(
                           "%d/%d %.2f" % (g, b, s) for (g, b), s in zip(pts, sp))),
                       "training step, G one-GPU DCs on a mesh WAN (reconstruction), 2 MoE layers, E = G",
                       REPRO % "fig17", verdict(sp, lo, hi)))
    return out


def static_rows():
    test = "`ctest -R %s`"
    return [row("The stream model picks Table IV's p (Mix-1 0.75, Mix-2 0.5, AG-only 0)", "Sec. V-B, Table IV",
                "0.75, 0.5, 0, 0 at \"128 Gbps\"", "0.75, 0.5, 0, 0 with B = 128 GB/s; 1, 0.75, 0, 0 with 128 Gbit/s "
                "(16 GB/s)", "the model alone (Eq. 3-8)", test % "HybridStreamModel",
                "reproduced with B read as 128 GB/s; contradicted at the testbed's PCIe 3.0 x16 (16 GB/s)"),
            row("All-to-all and all-gather pair counts per EP size and S_ED", "Table VII", "e.g. EP 8: 56/24/8/0, "
                "0/8/24/56", "G (G / S - 1) and G (S - 1) per level", "Algorithm 1", test % "HybridPartition",
                "reproduced exactly"),
            row("Eq. 3-4: the all-to-all's latency about constant in the workers G, the all-gather's linear in G",
                "Sec. III-B, Fig. 5",
                "closed forms", "Eq. 3-4 as written in the stream model", "the model alone", test % "HybridStreamModel",
                "not measured on the NoC"),
            row("The backward's all-reduce adds a constant, so the model holds in training", "Sec. VI", "-",
                "the sensitivity table's HybridEP rows (the gradient synchronisation per setting)", "-", "-",
                "not judged: our gradient synchronisation is not a constant (the copies' returns decide)"),
            row("SR at 50x keeps the baselines' loss; the shared expert matters", "Sec. V-E, Fig. 14", "loss curves",
                "-", "-", "-", "not testable (accuracy, not performance)"),
            row("Fusing SREncode / SRDecode cuts their overhead by 30% / 45%", "Fig. 15", "30%, 45%",
                "modelled fused only (encode 2 P_E + P_E / CR of DRAM, decode P_E / CR + 2 P_E per copy)", "-", "-",
                "not measured: no unfused variant"),
]


def fig16_rows(f16):
    """EP's bytes between DCs grow linearly with D (the bytes per MB of D from 6 to 12 MB and from 48 to 96 MB,
    both at top-2, agree within 10%); HybridEP's grow by at most 1.25x from 6 to 96 MB."""
    idx = {(r["cluster"], int(r["d_mib"]), r["variant"]): f(r["wan_bytes"]) for r in f16}
    out = []
    for cl in ("M", "L"):
        if (cl, 6, "EP") not in idx or (cl, 96, "HybridEP") not in idx:
            continue
        ep, hy = idx[(cl, 96, "EP")] / idx[(cl, 6, "EP")], idx[(cl, 96, "HybridEP")] / idx[(cl, 6, "HybridEP")]
        lo = (idx[(cl, 12, "EP")] - idx[(cl, 6, "EP")]) / 6
        hi = (idx[(cl, 96, "EP")] - idx[(cl, 48, "EP")]) / 48
        linear = abs(hi / lo - 1) <= 0.10
        out.append(row("EP's traffic between DCs grows with the tokens, HybridEP's is bounded, %s" % CLUSTER_NAMES[cl],
                       "Sec. V-F, Fig. 16", "EP linear, HybridEP flat",
                       "D 6 -> 96 MB: EP %.1fx (%.3f GB per MB of D from 6 to 12 MB, %.3f from 48 to 96), HybridEP "
                       "%.2fx (%.1f GB per step)" % (ep, lo / 1e9, hi / 1e9, hy, idx[(cl, 96, "HybridEP")] / 1e9),
                       REGIME % CLUSTER_NAMES[cl], REPRO % "table5,fig16",
                       "reproduced" if linear and hy <= 1.25 else "not reproduced"))
    return out or [row("EP's traffic grows with tokens, HybridEP's is bounded", "Sec. V-F, Fig. 16", "shape",
                       "not run", "-", REPRO % "table5,fig16", "not measured")]


def cycle_rows(cyc):
    """Flow against cycle fidelity: the MoE communication within 15%, the step within 5% (HierMoE's bands)."""
    out = []
    for r in cyc:
        comm, step = f(r["moe_comm_flow_over_cycle"]) - 1, f(r["step_flow_over_cycle"]) - 1
        out.append(row("(check) flow against cycle fidelity: %s, %s" % (CLUSTER_NAMES[r["cluster"]], r["variant"]),
                       "-", "-", "MoE communication %+.1f%%, step %+.1f%% (flow over cycle)" % (100 * comm, 100 * step),
                       "training step, a small layer (hidden 512, 2 MiB experts, 2 MoE layers), 128 tokens per GPU",
                       REPRO % "cycle",
                       "MoE communication %s (15%%); step %s (5%%)" % (
                           "in band" if abs(comm) <= 0.15 else "outside the band",
                           "in band" if abs(step) <= 0.05 else "outside the band")))
    return out
