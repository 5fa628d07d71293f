#!/usr/bin/env python3
"""Writes docs/REPRODUCTION.md's MoEntwine section from the outputs of bench/reproduce/moentwine.sh (claim,
where in the paper, the paper's number, ours, regime, command, verdict; moentwine_claims.py), then the
tables behind the rows. Replaces only the text between the section's markers.

Usage: moentwine_section.py OUTDIR REPRODUCTION.md SECONDS
"""
import os

import moentwine_claims as mc
from moentwine_claims import BASE, ER, HER, by, div
from section_lib import parse_args, read_csv, replace_section

BEGIN, END = "<!-- moentwine:begin -->", "<!-- moentwine:end -->"
NEEDED = ["system", "model", "strategy", "moe_comm_us", "allreduce_us", "comm_us", "mean_tbt_us"]


def eq1_table(rows, fidelity):
    lines = ["", "### What carries the gap: the all-reduce's share and the paper's latency model (Eq. 1)", "",
             "ER / baseline communication at " + fidelity + " fidelity. `share`: the all-reduce's part of the baseline's communication. "
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


def fmt(v, f="%.2f"):
    return f % v if v is not None else "-"


def comm_table(flow_comm, cycle_comm, vc8_comm):
    lines = ["", "### Communication as the paper reports it (Fig. 13(b)-(d))", "",
             "`ep`: the same experts with every token sent from its home node (the all-gather dropped, Sec. VI-B6; "
             "flow fidelity only).", "",
             "| system | model | strategy | fidelity | all-to-all us | all-reduce us | communication us | step us |",
             "|---|---|---|---|---|---|---|---|"]
    for fidelity, rows in (("cycle", cycle_comm), ("cycle, 8 VCs", vc8_comm), ("flow", flow_comm)):
        for r in rows:
            lines.append("| %s | %s | %s | %s | %.0f | %.0f | %.0f | %.0f |" % (
                r["system"], r["model"], r["strategy"].replace("moentwine-", ""), fidelity, float(r["moe_comm_us"]),
                float(r["allreduce_us"]), float(r["comm_us"]), float(r["mean_tbt_us"])))
    return lines


def ratio_table(rows, keys, title, note, head):
    """One row per baseline row: new / baseline of communication and step for ER and HER."""
    lines = ["", "### " + title, "", note, "", "| " + " | ".join(head) + " | comm ER | step ER | comm HER | step HER |"
             " baseline step us |", "|" + "---|" * (len(head) + 5)]
    idx = by(rows, *keys)
    for r in rows:
        if r["strategy"] != BASE:
            continue
        k = tuple(r[x] for x in keys)
        cell = lambda s, f, p: fmt(div(idx[k + (s,)][f], r[f]), p) if k + (s,) in idx else "-"
        lines.append("| %s | %s | %s | %s | %s | %.0f |" % (" | ".join(k), cell(ER, "comm_us", "%.2f"),
                                                          cell(ER, "mean_tbt_us", "%.3f"), cell(HER, "comm_us", "%.2f"),
                                                          cell(HER, "mean_tbt_us", "%.3f"), float(r["mean_tbt_us"])))
    return lines


def cycle_table(cyc):
    lines = ["", "### Cycle-fidelity checks (validated band: step within 5%, communication within 15%)", "",
             "| system | model | regime | strategy | step flow / cycle us | communication flow / cycle us | "
             "step diff | comm diff | in band |", "|---|---|---|---|---|---|---|---|---|"]
    idx = by(cyc, "system", "model", "regime", "fidelity")
    for r in cyc:
        f = idx.get((r["system"], r["model"], r["regime"], "flow", r["strategy"]))
        dt = div(f["mean_tbt_us"], r["mean_tbt_us"]) if f and r["fidelity"] == "cycle" else None
        dc = div(f["comm_us"], r["comm_us"]) if dt is not None else None
        if dt is None or dc is None:
            continue
        lines.append("| %s | %s | %s | %s | %.0f / %.0f | %.0f / %.0f | %+.1f%% | %+.1f%% | %s |" % (
            r["system"], r["model"], r["regime"], r["strategy"].replace("moentwine-", ""), float(f["mean_tbt_us"]),
            float(r["mean_tbt_us"]), float(f["comm_us"]), float(r["comm_us"]), 100 * (dt - 1), 100 * (dc - 1),
            "yes" if abs(dt - 1) <= 0.05 and abs(dc - 1) <= 0.15 else "no"))
    return lines


def included(path, title, fenced=False):
    """The table rows of a markdown file another script wrote (or, fenced, its lines), under a heading;
    nothing if it is missing."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        text = f.read().splitlines()
    body = ["```"] + [x for x in text if not x.startswith("wrote ")] + ["```"] if fenced else \
        [x for x in text if x.startswith("|")]
    return ["", "### " + title, ""] + body


def took(seconds):
    """How long the regeneration took; 0 for a RESUME=1 run, whose runs come from several invocations."""
    if seconds <= 0:
        return ("Regenerated by `RESUME=1 bash bench/reproduce/moentwine.sh BIN OUTDIR` from the runs of interrupted "
                "invocations, so no end-to-end time is stated here; each section's measured time is in "
                "docs/PERFORMANCE.md \"Reproduction scripts\".")
    return ("Regenerated by `bash bench/reproduce/moentwine.sh` in %.0f minutes on this project's 2-core machine."
            % (seconds / 60))


def main():
    out, target, seconds = parse_args("moentwine_section.py OUTDIR REPRODUCTION.md SECONDS")
    csv_of = lambda name, need=None: read_csv(os.path.join(out, name + ".csv"), need)
    flow_comm = csv_of("comm", NEEDED)
    comm_cycle = csv_of("comm_cycle")
    if comm_cycle:
        read_csv(os.path.join(out, "comm_cycle.csv"), NEEDED)  # the same fields, checked
        mc.set_fidelity("cycle")
    comm = comm_cycle or flow_comm
    eq1 = mc.eq1_rows(comm, csv_of("ftd", ["system", "strategy", "avg_hops", "ring_step_hops"]))
    sens, cyc, e2e, sweep = (csv_of(n) for n in ("sens", "cycle", "e2e", "sweep"))
    bal = []
    for slots in ("1", "2", "4"):
        for r in csv_of("balance_slots" + slots):
            r["slots_run"] = slots
            bal.append(r)
    lines = [BEGIN, "## MoEntwine (Luo et al., 2025): wafer-scale inference", "",
             took(seconds) + " The paper's mapping numbers are communication latency (all-to-all plus all-reduce, Fig. 13), not "
             "step time; its simulator is ASTRA-sim's analytical back end with a hop-multiplied latency (its Eq. 1) "
             "and no stated NI ports, ring staggering or kernel start-up. docs/RESULTS.md \"MoEntwine in its own "
             "regime\" discusses the verdicts.", "",
             "| claim | where | paper | ours | regime | command | verdict |", "|---|---|---|---|---|---|---|"]
    rows = (mc.a2a_ar_rows(comm, flow_comm) + mc.one_wafer_rows(comm, eq1, flow_comm) + mc.wafer_rows(comm) + mc.sweep_rows(sweep)
            + mc.vc_rows(comm_cycle, csv_of("comm_vc8")) + mc.sens_rows(sens) + mc.e2e_rows(e2e) + mc.balance_rows(bal) + mc.not_modelled())
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += eq1_table(eq1, mc.COMM["fidelity"]) + comm_table(flow_comm, comm_cycle, csv_of("comm_vc8"))
    lines += ratio_table(sens, ["system", "regime", "setting"], "Which assumption decides (new / baseline)",
                         "One setting changed from the presets' defaults at a time, then all at the paper's setting.",
                         ["system", "regime", "setting"])
    lines += ratio_table(e2e, ["system", "model", "regime", "overlap"],
                         "Step time, new / baseline (the paper reports no end-to-end time)",
                         "Decode: 256 tokens per TP group; prefill: one 2048-token prompt per TP group; hybrid: the "
                         "decode tokens and one 2048-token prompt chunk. Overlap: the all-reduce pipelined with the "
                         "attention (8 chunks) and 2 micro-batches.", ["system", "model", "regime", "overlap"])
    lines += cycle_table(cyc)
    for slots in ("1", "2", "4"):
        lines += included(os.path.join(out, "balance_slots%s.md" % slots),
                          "Balancing with drift, %s shadow slot(s) per die and MoE layer (Fig. 15-16)" % slots)
    lines += included(os.path.join(out, "links.md"), "Link heatmaps (Fig. 9): `docs/moentwine_links.png`", True)
    lines.append(END)
    replace_section(target, BEGIN, END, lines)


if __name__ == "__main__":
    main()
