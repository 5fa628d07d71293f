#!/usr/bin/env python3
"""HybridEP in its own regime (issue 38): the runs behind its reproduction, first sections.

Training steps across data centres (`xdc-4x8-a800`: HybridEP's Cluster-L, 4 DCs x 8 A800, PCIe 3.0 inside,
10 Gb/s per DC between; Cluster-M and -S by --set; docs/MODEL.md "Data centres on the mesh") of the paper's
Mistral-Small layer (E = 32, hidden 768, top-2, FP32, 12 MoE layers), D = B x L x K x H x 4 bytes per GPU.
Strategies: EP (`ep`), Tutel (`ep --moe-chunks C`, the fastest of C = 2, 4, 8), FasterMoE (`ep --policy
fastermoe-shadow`), HybridEP (`hybridep`, the paper's configuration below), our resident replication (never
reported as HybridEP). Sections (each writes OUT/<section>.csv; every row names its command):
  table5   Table V: Cluster-M and -L at D = 6 ... 192 MB
  table6   Table VI: Partition alone (no SR, the gather after the gate) against +Migration on S, M, L at
           24 MB & 8 MB experts and 48 MB & 2 MB experts, with the domain sizes each chose
  fig13    Fig. 13: expert sizes 32 ... 2 MB at D = 16 MB without SR, Cluster-L
  sens     the headline (Cluster-L, D = 96 MB) under one changed assumption at a time
  fig17    Fig. 17 (reconstruction): G one-GPU DCs (`xdc-1000` and smaller meshes), E = G experts, 2 MoE
           layers, at 1, 10 and 100 Gb/s per DC: EP against HybridEP at S_ED = 8 (a) and at S = G / 8 (b)
  fig16    Fig. 16: bytes over the DC-to-DC links per step against D, EP and HybridEP (from table5's runs,
           no run of its own)
  cycle    flow against cycle fidelity on Cluster-S and -M, a small layer (2 MiB experts, 2 MoE layers),
           128 tokens per GPU: EP, Tutel (C = 2), FasterMoE, HybridEP
Runs nmpsim by argv (no shell). Not a test.

Usage: hybridep_repro.py --bin build/apps/nmpsim --out DIR [--sections table5,...] [--resume]
"""
import json
import os
import subprocess
import sys

import repro_lib

FIELDS = ["step_us", "forward_us", "backward_us", "grad_sync_us", "optimizer_us", "moe_comm_us", "mfu"]
COMMON = ["--phase", "train", "--steps", "1", "--fidelity", "flow", "--no-plots", "--quiet", "--no-cache"]
MODEL = "mistral-small-e32"
# The paper's HybridEP: SR at 50x with the shared expert, the asynchronous communicator, p chosen once by
# Eq. 8 as written. The copies' gradients: compressed at the same ratio (the paper does not say; `full` and
# `none` are in the sensitivity table).
HYBRIDEP = ["--strategy", "hybridep"] + sum((["--strategy-opt", "hybridep." + o] for o in (
    "mode=stream", "sr_ratio=50", "prefetch=step", "choose=once", "model=paper", "grad_return=sr")), [])
PARTITION = ["--strategy", "hybridep"] + sum((["--strategy-opt", "hybridep." + o] for o in (
    "mode=stream", "prefetch=gate", "choose=once", "model=paper")), [])
FASTER = ["--policy", "fastermoe-shadow", "--policy-opt", "fastermoe-shadow.max_shadows=32"]
CLUSTERS = {"S": (["--hw", "xdc-4x8-a800", "--set", "mesh.width=4", "--set", "mesh.height=2"], 8),
            "M": (["--hw", "xdc-4x8-a800", "--set", "mesh.height=2", "--set", "levels.2.link.gbytes_per_s=0.625"], 16),
            "L": (["--hw", "xdc-4x8-a800"], 32)}
# Table V's D (MiB per GPU) as (B, L, K) of Table III at H = 768: D = B L K H 4.
TABLE5_D = {6: (8, 128, 2), 12: (8, 256, 2), 24: (8, 512, 2), 48: (16, 512, 2), 96: (32, 512, 2), 192: (32, 512, 4)}


def run(a, args, tag):
    return repro_lib.run(a.bin, args + COMMON, "%s/runs/%s" % (a.out, tag), FIELDS)


def model_file(a, name, base=MODEL, **fields):
    return repro_lib.model_file(a.bin, a.out, base, name, **fields)


def heads(n):
    """Multi-head attention of n heads of 64 (hidden = 64 n), as the paper's models (Table II)."""
    return {"kind": "gqa", "heads": n, "kv_heads": n, "head_dim": 64, "kv_lora_rank": 0, "q_lora_rank": 0,
            "rope_dim": 0, "v_head_dim": 0}


def policy(a, tag, strategy, name):
    with open("%s/runs/%s/summary.json" % (a.out, tag)) as f:
        return json.load(f)["strategies"][strategy].get("policies", {}).get(name, {})


def shape(gpus, b, l, tokens_per_layer=None):
    """--batch (sequences over all GPUs), --prompt-tokens, and a synthetic trace no step repeats."""
    step = gpus * b * l
    return ["--batch", str(gpus * b), "--prompt-tokens", str(l),
            "--synthetic-tokens", str(tokens_per_layer or max(65536, 2 * step))]


def baselines(a, w, keys, base, tag):
    """EP, Tutel (fastest C), FasterMoE, HybridEP and resident on `base`; rows into writer `w`."""
    res, text = run(a, base + ["--strategy", "ep"], tag + "-ep")
    w.add(dict(keys, variant="EP"), res, text)
    best = (res, text, 1)  # Tutel's adaptive degree: the fastest of 1 (EP), 2, 4, 8
    for c in (2, 4, 8):
        r, t = run(a, base + ["--strategy", "ep", "--moe-chunks", str(c)], "%s-tutel%d" % (tag, c))
        if r["ep"]["step_us"] < best[0]["ep"]["step_us"]:
            best = (r, t, c)
    w.add(dict(keys, variant="Tutel (C = %d, the fastest of 1, 2, 4, 8)" % best[2]), best[0], best[1])
    res, text = run(a, base + ["--strategy", "ep"] + FASTER, tag + "-faster")
    w.add(dict(keys, variant="FasterMoE (shadowing)"), res, text)
    res, text = run(a, base + HYBRIDEP, tag + "-hybridep")
    stats = policy(a, tag + "-hybridep", "hybridep", "hybridep")
    # The stream model's Lat_final per layer (Eq. 8, the forward), beside the measured forward per layer.
    res["hybridep"]["predicted_us_per_layer"] = stats.get("model", {}).get("predicted_us_per_layer", 0.0)
    w.add(dict(keys, variant="HybridEP (SR 50x, step prefetch, p once; gradients at 50x) sed %s" % list(
        stats.get("sed_chosen", {}))), res, text)
    res, text = run(a, base + ["--strategy", "hybridep"], tag + "-resident")
    w.add(dict(keys, variant="resident copies (ours, not HybridEP)"), res, text)


def table5(a):
    w = repro_lib.Writer(a.out, "table5", ["cluster", "d_mib", "variant"], FIELDS + ["predicted_us_per_layer"])
    k4 = model_file(a, "mistral-small-e32-top4", top_k=4)
    for cl in ("M", "L"):
        hw, gpus = CLUSTERS[cl]
        for d, (b, l, k) in TABLE5_D.items():
            base = hw + ["--model", MODEL if k == 2 else k4] + shape(gpus, b, l)
            baselines(a, w, dict(cluster=cl, d_mib=d), base, "t5-%s-%d" % (cl, d))
            repro_lib.progress("table5", cl, str(d))
    w.close()


def table6(a):
    """Partition alone against +Migration. Experts: 8 MiB = H 1024 x M 1024, 2 MiB = H 512 x M 512 (FP32)."""
    w = repro_lib.Writer(a.out, "table6", ["cluster", "case", "variant", "sed"], FIELDS)
    cases = {"24&8": (model_file(a, "h1024-m1024", hidden=1024, intermediate=1024, attention=heads(16)), 1024, 24),
             "48&2": (model_file(a, "h512-m512", hidden=512, intermediate=512, attention=heads(8)), 512, 48)}
    for cl in ("S", "M", "L"):
        hw, gpus = CLUSTERS[cl]
        for case, (path, hidden, d) in cases.items():
            tokens = d * 2 ** 20 // (2 * hidden * 4)  # tokens per GPU at K = 2
            base = hw + ["--model", path] + shape(gpus, tokens // 512, 512)
            for variant, extra in (("Partition", PARTITION), ("+Migration (HybridEP)", HYBRIDEP),
                                   ("EP", ["--strategy", "ep"])):
                tag = "t6-%s-%s-%s" % (cl, case.replace("&", "_"), variant[:4].strip("+").lower())
                res, text = run(a, base + extra, tag)
                sed = list(policy(a, tag, "hybridep", "hybridep").get("sed_chosen", {})) if "hybridep" in res else []
                w.add(dict(cluster=cl, case=case, variant=variant, sed=" ".join(sed)), res, text)
            repro_lib.progress("table6", cl, case)
    w.close()


def fig13(a):
    w = repro_lib.Writer(a.out, "fig13", ["expert_mib", "variant"], FIELDS)
    hw, gpus = CLUSTERS["L"]
    for mib in (32, 16, 8, 4, 2):
        path = model_file(a, "h1024-e%d" % mib, hidden=1024, intermediate=mib * 2 ** 20 // (2 * 1024 * 4),
                          attention=heads(16))
        base = hw + ["--model", path] + shape(gpus, 4, 512)  # 2048 tokens per GPU: D = 16 MiB
        for variant, extra in (("EP", ["--strategy", "ep"]),
                               ("HybridEP without SR", with_setting(HYBRIDEP, ["--strategy-opt", "hybridep.sr_ratio=0",
                                                                              "--strategy-opt",
                                                                              "hybridep.grad_return=full"]))):
            res, text = run(a, base + extra, "f13-%d-%s" % (mib, variant[:2].lower()))
            w.add(dict(expert_mib=mib, variant=variant), res, text)
        repro_lib.progress("fig13", str(mib))
    w.close()


def with_setting(args, extra):
    """`args` with the --set, --strategy-opt or flag pairs of `extra` replacing the ones they name."""
    out = list(args)
    for i in range(0, len(extra), 2):
        flag, value = extra[i], extra[i + 1]
        key = value.split("=")[0] if flag in ("--set", "--strategy-opt") else None
        for j in range(0, len(out) - 1):
            if out[j] == flag and (key is None or out[j + 1].split("=")[0] == key):
                del out[j:j + 2]
                break
        out += [flag, value]
    return out


SENS = [
    ("default", []),
    ("10 Gb/s on every border link (not the DC's split over 6)", ["--set", "levels.2.link.gbytes_per_s=1.25"]),
    ("5 Gb/s per DC", ["--set", "levels.2.link.gbytes_per_s=0.104167"]),
    ("25 Gb/s per DC", ["--set", "levels.2.link.gbytes_per_s=0.520833"]),
    ("100 Gb/s per DC", ["--set", "levels.2.link.gbytes_per_s=2.083333"]),
    ("TF32 compute (156 TFLOP/s)", ["--set", "compute.peak_tflops=156"]),
    ("gradient collectives: one-way rings", ["--set", "collectives.gradients=ring"]),
    ("gradient collectives: 2D", ["--set", "collectives.gradients=2d"]),
]
HYB_SENS = [
    ("HybridEP: copies' gradients full", ["--strategy-opt", "hybridep.grad_return=full"]),
    ("HybridEP: copies' gradients none (Eq. 5 as written)", ["--strategy-opt", "hybridep.grad_return=none"]),
    ("HybridEP: SR 10x", ["--strategy-opt", "hybridep.sr_ratio=10"]),
    ("HybridEP: SR 100x", ["--strategy-opt", "hybridep.sr_ratio=100"]),
    ("HybridEP: gather from each layer's start", ["--strategy-opt", "hybridep.prefetch=layer"]),
    ("HybridEP: p per layer and batch", ["--strategy-opt", "hybridep.choose=per_layer",
                                         "--strategy-opt", "hybridep.prefetch=layer"]),
]


def sens(a):
    w = repro_lib.Writer(a.out, "sens", ["setting", "variant"], FIELDS)
    hw, gpus = CLUSTERS["L"]
    base = hw + ["--model", MODEL] + shape(gpus, 32, 512)
    for i, (setting, extra) in enumerate(SENS):
        for variant, strat in (("EP", ["--strategy", "ep"]), ("Tutel C = 8", ["--strategy", "ep", "--moe-chunks", "8"]),
                               ("HybridEP", HYBRIDEP)):
            res, text = run(a, with_setting(base + strat, extra), "sens-%d-%s" % (i, variant[:2].lower()))
            w.add(dict(setting=setting, variant=variant), res, text)
        repro_lib.progress("sens", setting)
    for i, (setting, extra) in enumerate(HYB_SENS):
        res, text = run(a, with_setting(base + HYBRIDEP, extra), "sens-h%d" % i)
        w.add(dict(setting=setting, variant="HybridEP"), res, text)
    w.close()


def fig17(a):
    """G one-GPU DCs; the Mistral-Small expert, E = G, top-2, 2 MoE layers, 256 tokens per DC."""
    w = repro_lib.Writer(a.out, "fig17", ["dcs", "gbit_per_s", "variant", "sed"], FIELDS)
    for g, mesh in ((16, (4, 4)), (64, (8, 8)), (256, (16, 16)), (1000, (40, 25))):
        path = model_file(a, "mistral-small-e%d-2l" % g, experts=g, moe_layers=2)
        for gbit in ((1, 10, 100) if g < 1000 else (10,)):
            hw = ["--hw", "xdc-1000", "--set", "mesh.width=%d" % mesh[0], "--set", "mesh.height=%d" % mesh[1],
                  "--set", "levels.1.link.gbytes_per_s=%g" % (gbit / 8 / 4)]
            base = hw + ["--model", path] + shape(g, 2, 128, tokens_per_layer=max(65536, 2 * g * 256))
            for short, variant, extra in (("ep", "EP", ["--strategy", "ep"]),
                                   ("a", "HybridEP, S_ED = 8 (a)", with_setting(HYBRIDEP, ["--strategy-opt",
                                                                                      "hybridep.choose=per_layer"])
                                    + ["--sed", "8"]),
                                   ("b", "HybridEP, S = G / 8 (b)", with_setting(HYBRIDEP, ["--strategy-opt",
                                                                                       "hybridep.choose=per_layer"])
                                    + ["--sed", str(g // 8)])):
                tag = "f17-%d-%d-%s" % (g, gbit, short)
                res, text = run(a, base + extra, tag)
                w.add(dict(dcs=g, gbit_per_s=gbit, variant=variant, sed=" ".join(
                    policy(a, tag, "hybridep", "hybridep").get("sed_chosen", {})) if "hybridep" in res else ""),
                      res, text)
            repro_lib.progress("fig17", str(g), str(gbit))
    w.close()


def wan_bytes(path):
    """Bytes over the links between data centres (links.csv level `dc-to-dc`) of one run."""
    import csv
    with open(path) as f:
        return sum(float(r["bytes"]) for r in csv.DictReader(f) if r["level"] == "dc-to-dc")


def fig16(a):
    rows = []
    for cl in ("M", "L"):
        for d in TABLE5_D:
            for variant, suffix in (("EP", "ep"), ("HybridEP", "hybridep")):
                path = "%s/runs/t5-%s-%d-%s/links.csv" % (a.out, cl, d, suffix)
                if not os.path.exists(path):
                    sys.stderr.write("error: fig16: %s is missing (run --sections table5 first)\n" % path)
                    sys.exit(2)
                rows.append(dict(cluster=cl, d_mib=d, variant=variant, wan_bytes=wan_bytes(path),
                                 command="links.csv of table5's run t5-%s-%d-%s" % (cl, d, suffix)))
    repro_lib.write_csv(os.path.join(a.out, "fig16.csv"), list(rows[0]), rows)
    repro_lib.progress("fig16")


def cycle(a):
    """Each strategy at both fidelities; the flow run's step and MoE communication over the cycle run's."""
    rows = []
    # Small enough for the cycle-level NoC (a 2 MiB expert: hidden 512 x intermediate 512 at FP32, 8 heads).
    path = model_file(a, "small-e32-2l", moe_layers=2, hidden=512, intermediate=512, attention=heads(8))
    for cl in ("S", "M"):
        hw, gpus = CLUSTERS[cl]
        base = hw + ["--model", path] + shape(gpus, 1, 128)
        for variant, extra in (("EP", ["--strategy", "ep"]), ("Tutel C = 2", ["--strategy", "ep", "--moe-chunks", "2"]),
                               ("FasterMoE", ["--strategy", "ep"] + FASTER),
                               ("HybridEP", HYBRIDEP)):
            res = {}
            for fid in ("flow", "cycle"):
                tag = "cyc-%s-%s-%s" % (cl, variant[:5].replace(" ", "").lower(), fid)
                common = with_setting(COMMON, ["--fidelity", fid])
                r, text = repro_lib.run(a.bin, base + extra + common, "%s/runs/%s" % (a.out, tag), FIELDS)
                res[fid] = (list(r.values())[0], text)
            flow, cyc = res["flow"][0], res["cycle"][0]
            rows.append(dict(cluster=cl, variant=variant, flow_step_us=flow["step_us"], cycle_step_us=cyc["step_us"],
                             step_flow_over_cycle=flow["step_us"] / cyc["step_us"],
                             moe_comm_flow_over_cycle=(flow["moe_comm_us"] / cyc["moe_comm_us"]
                                                       if cyc["moe_comm_us"] > 0 else 1.0),
                             command=res["cycle"][1]))
        repro_lib.progress("cycle", cl)
    repro_lib.write_csv(os.path.join(a.out, "cycle.csv"), list(rows[0]), rows)


def main():
    repro_lib.main(__doc__, {"table5": table5, "table6": table6, "fig13": fig13, "sens": sens, "fig17": fig17,
                             "fig16": fig16, "cycle": cycle})


if __name__ == "__main__":
    main()
