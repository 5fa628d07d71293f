#!/usr/bin/env python3
"""HierMoE in its own regime (issue 37): the runs behind its reproduction, first sections.

Training steps on the paper's testbed (`gpu-cluster-32`: 4 nodes x 8 GPUs, NVLink pairs, PCIe, QPI,
InfiniBand; docs/MODEL.md "A cluster on the mesh") at the paper's setting: micro-batch 1 x sequence 1024 per
GPU, EP over all 32 GPUs (Sec. V-A), its two models (DeepSeek-V3 at half width with 6 layers, Qwen3-30B-A3B
with 32 layers). Sections (each writes OUT/<section>.csv; every row names its command):
  testbed  Megatron-LM (`hiermoe-megatron`), flat EP deduplicated per node (`ep`), Tutel-2DH (`hiermoe-2dh`),
           HierMoE's all-to-all with d* by Eq. 6 (`hiermoe`, the paper's "HD-MoE"), by the flow model
           (select=flow) and at d = 2 ("HD2-MoE")
  swap     HierD-ES offline (`hiermoe-swap`): at most 8 swaps per layer (our default), uncapped, and uncapped
           with the plain max (gamma 1000) instead of the smooth max (gamma 10), and at gamma 5 and 19
  sens     Megatron against HierMoE under one changed assumption at a time (the mesh's InfiniBand split,
           the QPI path, compute efficiency, hop latency, tokens per GPU)
  levels   the same strategies on four wafers with the cluster's bandwidth ratios (`wsc-4wafer-8x8-levels`),
           128 tokens per die (the cluster's tokens per step)
  table2   Table II: duplication rates at K = 2, 4, 6, 8 and R = 32, 16, 8, 4 groups (DeepSeek-V3's 256
           experts), on a uniform and on the default synthetic trace, beside the closed form
  fit      Fig. 9: alpha, beta and r^2 of every kind of all-to-all fitted on the flow-level NoC
  table4   Table IV: HD2-MoE, HD-MoE and HierMoE (d by Eq. 6 and by the flow model) over Megatron at K = 6,
           8, 10, E = 64, 128, 256 and G = 8, 16, 32 (Qwen3-30B-A3B's layer, 4 layers)
  dims     Fig. 13: every d with and without deduplication (HD<d>-MoE, H<d>-MoE) and d* per layer, on 4 nodes
           and on 1 node
  cycle    cycle against flow fidelity: the testbed's strategies on one layer of each model, 64 tokens per GPU
  interval HierD-ES at run time every 1, 2, 4 and 8 steps (Sec. V-E; uncapped, each swap must pay back its
           migration with the optimizer state within 64 steps) against HD-MoE, steady state over steps 9-32, on
           the default and on a drifting trace
Runs nmpsim by argv (no shell). Not a test.

Usage: hiermoe_repro.py --bin build/apps/nmpsim --out DIR [--sections testbed,...] [--resume]
"""
import json
import os
import subprocess
import sys

import repro_lib

MODELS = ["deepseek-v3-half-6l", "qwen3-30b-a3b-32l"]
BASELINES = ["hiermoe-megatron", "ep", "hiermoe-2dh", "hiermoe"]
FIELDS = ["mean_tbt_us", "moe_comm_us", "allreduce_us", "attention_us", "moe_compute_us", "forward_us",
          "backward_us", "grad_sync_us", "optimizer_us", "mfu"]
# 65536 synthetic tokens per layer: a step's 32 x 1024 (up to 2048 in the sensitivity) tokens each route once
# (the default 4096 would repeat).
COMMON = ["--phase", "train", "--prompt-tokens", "1024", "--steps", "1", "--fidelity", "flow", "--no-plots",
          "--quiet", "--no-cache", "--synthetic-tokens", "65536"]
CLUSTER = ["--hw", "gpu-cluster-32", "--batch", "32"]
# name, arguments: HierD-ES's cap and its max (Eq. 11's gamma: 10 the paper's smooth max, 1000 about the plain max).
SWAPS = [("at most 8 swaps per layer, smooth max", ["--strategy-opt", "hiermoe-swap.swaps=8"]),
         ("uncapped, smooth max", ["--strategy-opt", "hiermoe-swap.swaps=65536"]),
         ("uncapped, plain max", ["--strategy-opt", "hiermoe-swap.swaps=65536",
                                  "--strategy-opt", "hiermoe-swap.gamma=1000"]),
         ("uncapped, gamma 5", ["--strategy-opt", "hiermoe-swap.swaps=65536", "--strategy-opt", "hiermoe-swap.gamma=5"]),
         ("uncapped, gamma 19", ["--strategy-opt", "hiermoe-swap.swaps=65536",
                                 "--strategy-opt", "hiermoe-swap.gamma=19"]),
         # The swaps chosen on the step's whole routing (32768 tokens; the step's own: an upper bound) instead
         # of the default profile of the trace's first 1024 tokens.
         ("uncapped, profile of the step's 32768 tokens", ["--strategy-opt", "hiermoe-swap.swaps=65536",
                                                           "--strategy-opt", "hiermoe-swap.tokens=32768"])]
UNIFORM = ["--skew", "0", "--coactivation", "0", "--layer-correlation", "0"]
LATENCY = lambda ns: sum((["--set", "levels.%d.link.latency_ns=%d" % (i, ns)] for i in range(1, 5)), [])
# The sensitivity's settings: name, arguments replacing or adding to the cluster's.
SETTINGS = [
    ("default", []),
    ("InfiniBand: one 25 GB/s link per node border (not the NIC split over 6)", ["--set", "levels.4.link.gbytes_per_s=25"]),
    ("QPI path at PCIe's 31.5 GB/s", ["--set", "levels.3.link.gbytes_per_s=31.5"]),
    ("compute at 30% of peak (46.4 TFLOP/s)", ["--set", "compute.peak_tflops=46.44"]),
    ("hop latency 0", LATENCY(0)),
    ("hop latency 2 us", LATENCY(2000)),
    ("512 tokens per GPU", ["--prompt-tokens", "512"]),
    ("2048 tokens per GPU", ["--prompt-tokens", "2048"]),
    ("uniform routing (no popularity skew, co-activation or layer correlation)", UNIFORM),
]
def run(a, args, tag, fields=FIELDS):
    return repro_lib.run(a.bin, args, "%s/runs/%s" % (a.out, tag), fields)


def policy_stats(a, tag, strategy):
    """The run's summary.json `policies.hiermoe` of `strategy` ({} when it has none)."""
    with open("%s/runs/%s/summary.json" % (a.out, tag)) as f:
        return json.load(f)["strategies"][strategy].get("policies", {}).get("hiermoe", {})


def with_d(a, res, tag):
    """Adds d_mean (the mean over MoE layers of the d each used; 1 = flat) to each strategy's results."""
    for strategy, r in res.items():
        d = policy_stats(a, tag, strategy).get("d_star_per_layer") or [1]
        r["d_mean"] = sum(d) / len(d)
    return res


def model_file(a, base, name, **fields):
    return repro_lib.model_file(a.bin, a.out, base, name, **fields)


def testbed(a):
    w = repro_lib.Writer(a.out, "testbed", ["hardware", "model", "variant"], FIELDS + ["d_mean"])
    for model in MODELS:
        for suffix, variant, strategies, extra in (
                ("0", "", BASELINES, []),
                ("2", "d* by the flow model", ["hiermoe"], ["--strategy-opt", "hiermoe.select=flow"]),
                ("d2", "HD2-MoE (d = 2)", ["hiermoe"], ["--strategy-opt", "hiermoe.dimension=2"])):
            args = CLUSTER + ["--model", model, "--strategy", ",".join(strategies)] + extra + COMMON
            tag = "testbed-%s-%s" % (model, suffix)
            res, text = run(a, args, tag)
            w.add(dict(hardware="gpu-cluster-32", model=model, variant=variant), with_d(a, res, tag), text)
        repro_lib.progress("testbed", model)
    w.close()


def swap(a):
    w = repro_lib.Writer(a.out, "swap", ["model", "variant"], FIELDS + ["d_mean"])
    for model in MODELS:
        for i, (variant, extra) in enumerate(SWAPS):
            args = CLUSTER + ["--model", model, "--strategy", "hiermoe-swap"] + extra + COMMON
            tag = "swap-%s-%d" % (model, i)
            res, text = run(a, args, tag)
            w.add(dict(model=model, variant=variant), with_d(a, res, tag), text)
        repro_lib.progress("swap", model)
    w.close()


def with_setting(args, extra):
    """`args` with the setting's arguments; an option given twice takes the setting's value."""
    out = list(args)
    for i in range(0, len(extra), 2):
        if extra[i] != "--set" and extra[i] in out:
            j = out.index(extra[i])
            out[j + 1] = extra[i + 1]
        else:
            out += extra[i:i + 2]
    return out


def sens(a):
    w = repro_lib.Writer(a.out, "sens", ["model", "setting"], FIELDS)
    for model in MODELS:
        for i, (setting, extra) in enumerate(SETTINGS):
            args = with_setting(CLUSTER + ["--model", model, "--strategy", "hiermoe-megatron,hiermoe"] + COMMON, extra)
            res, text = run(a, args, "sens-%s-%d" % (model, i))
            w.add(dict(model=model, setting=setting), res, text)
        repro_lib.progress("sens", model)
    w.close()


def levels(a):
    w = repro_lib.Writer(a.out, "levels", ["hardware", "model"], FIELDS)
    for model in MODELS:
        # 128 tokens per die: the cluster's 32768 tokens per step (1024 per die would need about 88 GiB here).
        args = with_setting(["--hw", "wsc-4wafer-8x8-levels", "--batch", "256", "--model", model, "--strategy",
                             ",".join(BASELINES)] + COMMON, ["--prompt-tokens", "128"])
        res, text = run(a, args, "levels-%s" % model)
        w.add(dict(hardware="wsc-4wafer-8x8-levels", model=model), res, text)
        repro_lib.progress("levels", model)
    w.close()


# Table II (percent): rows R = 32, 16, 8, 4 groups, columns K = 2, 4, 6, 8.
PAPER_TABLE2 = {32: [2, 4, 7, 9], 16: [3, 9, 14, 18], 8: [6, 17, 27, 34], 4: [12, 32, 46, 55]}


def closed_form(experts, top_k, groups):
    """Duplication rate under uniform routing: 1 - R (1 - C(E - E/R, K) / C(E, K)) / K."""
    per, none = experts // groups, 1.0
    for i in range(top_k):
        none *= max(0.0, experts - per - i) / (experts - i)
    return 1 - groups * (1 - none) / top_k


def table2(a):
    rows = []
    for trace, extra in (("uniform", UNIFORM), ("default (Zipf 0.8, co-activation 0.3)", [])):
        for K in (2, 4, 6, 8):
            path = model_file(a, "deepseek-v3-half-6l", "dsv3-half-2l-k%d" % K, top_k=K, moe_layers=2)
            args = with_setting(CLUSTER + ["--model", path, "--strategy", "hiermoe"] + extra + COMMON,
                                ["--synthetic-tokens", "32768"])
            tag = "table2-%s-%d" % ("uniform" if extra else "default", K)
            _, text = run(a, args, tag)
            st = policy_stats(a, tag, "hiermoe")
            rates = {level["groups"]: level["duplication_rate"] for level in st["levels"]}
            rates[32] = st["node_duplication_rate"]
            for R in (32, 16, 8, 4):
                rows.append(dict(trace=trace, top_k=K, groups=R, duplication_rate=rates[R],
                                 closed_form=closed_form(256, K, R), paper=PAPER_TABLE2[R][K // 2 - 1] / 100.0,
                                 command=text))
        repro_lib.progress("table2", trace)
    repro_lib.write_csv(os.path.join(a.out, "table2.csv"), list(rows[0]), rows)


# Fig. 9 and Sec. V-B: our kind -> the paper's name, alpha (ms), beta (per unit of its n), r^2.
PAPER_FIT = {"flat": ("standard", 0.722, 5.70e-7, 0.999997), "inter-node": ("inter-level-1", 0.497, 5.29e-7, 0.999991),
             "intra-node": ("intra-level-1", 0.571, 1.27e-7, 0.998922),
             "inter-socket": ("inter-level-2", 0.301, 1.17e-7, 0.998682),
             "intra-socket": ("intra-level-2", 0.114, 2.63e-8, 0.999051),
             "inter-pair": ("inter-level-3", 0.149, 2.06e-8, 0.999031),
             "intra-pair": ("intra-level-3", 0.204, 1.64e-8, 0.997245)}


def fit(a):
    args = ["hw", "--hw", "gpu-cluster-32", "--report", "hierarchy", "--report-opt", "fit=true"]
    proc = subprocess.run([a.bin] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write("error: nmpsim %s: %s\n" % (" ".join(args), proc.stderr.strip()))
        sys.exit(2)
    rows = []
    for line in proc.stdout.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] in PAPER_FIT:
            name, alpha, beta, r2 = PAPER_FIT[f[0]]
            rows.append(dict(kind=f[0], participants=f[1], alpha_us=f[2], beta_ns_per_kbyte=f[3], r2=f[4],
                             paper_kind=name, paper_alpha_ms=alpha, paper_beta=beta, paper_r2=r2,
                             command="nmpsim " + " ".join(args)))
    if len(rows) != len(PAPER_FIT):
        sys.stderr.write("error: nmpsim %s: expected %d fitted kinds, read %d\n" % (" ".join(args), len(PAPER_FIT), len(rows)))
        sys.exit(2)
    repro_lib.write_csv(os.path.join(a.out, "fit.csv"), list(rows[0]), rows)


# Table IV's points (K, E, G) around Qwen3-30B-A3B (K 8, E 128) on 32 GPUs (the paper's speed-ups:
# bench/reproduce/hiermoe_claims.py PAPER_TABLE4).
TABLE4 = [(6, 128, 32), (8, 128, 32), (10, 128, 32), (8, 64, 32), (8, 256, 32), (8, 128, 8), (8, 128, 16)]
# Fewer GPUs: one node (4 x 2) or two nodes stacked (4 x 4), each node's 25 GB/s NIC split over its 4 border links.
GPUS = {32: [], 16: ["--set", "mesh.width=4", "--set", "mesh.height=4", "--set", "levels.4.link.gbytes_per_s=6.25"],
        8: ["--set", "mesh.width=4", "--set", "mesh.height=2"]}
UNCAPPED = ["--strategy-opt", "hiermoe-swap.swaps=65536"]


def table4(a):
    w = repro_lib.Writer(a.out, "table4", ["top_k", "experts", "gpus", "variant"], FIELDS + ["d_mean"])
    for K, E, G in TABLE4:
        path = model_file(a, "qwen3-30b-a3b-32l", "qwen3-4l-k%d-e%d" % (K, E), top_k=K, experts=E, moe_layers=4)
        base = with_setting(["--hw", "gpu-cluster-32"] + GPUS[G] + ["--batch", str(G), "--model", path] + COMMON,
                            ["--synthetic-tokens", str(1024 * G)])
        for suffix, variant, strategies, extra in (
                ("all", "", ["hiermoe-megatron", "hiermoe", "hiermoe-swap"], UNCAPPED),
                ("d2", "HD2-MoE (d = 2)", ["hiermoe"], ["--strategy-opt", "hiermoe.dimension=2"]),
                ("flow", "d by the flow model", ["hiermoe-swap"], UNCAPPED + ["--strategy-opt",
                                                                              "hiermoe-swap.select=flow"])):
            tag = "table4-k%d-e%d-g%d-%s" % (K, E, G, suffix)
            res, text = run(a, base + ["--strategy", ",".join(strategies)] + extra, tag)
            w.add(dict(top_k=K, experts=E, gpus=G, variant=variant), with_d(a, res, tag), text)
        repro_lib.progress("table4", "K %d E %d G %d" % (K, E, G))
    w.close()


def cycle(a):
    """One layer of each model at 64 tokens per GPU, one step, at both fidelities (the flow rows are the
    comparison, not the testbed's 1024 tokens: a cycle-fidelity step there takes hours)."""
    w = repro_lib.Writer(a.out, "cycle", ["model", "fidelity"], FIELDS)
    for model in MODELS:
        path = model_file(a, model, model + "-1l", moe_layers=1)
        for fidelity in ("flow", "cycle"):
            args = with_setting(CLUSTER + ["--model", path, "--strategy", ",".join(BASELINES)] + COMMON,
                                ["--prompt-tokens", "64", "--fidelity", fidelity, "--synthetic-tokens", "2048"])
            res, text = run(a, args, "cycle-%s-%s" % (model, fidelity))
            w.add(dict(model=model, fidelity=fidelity), res, text)
            repro_lib.progress("cycle", model, fidelity)
    w.close()


def dims(a):
    """Fig. 13: every dimension d with (HD<d>-MoE) and without (H<d>-MoE) deduplication, and HD-MoE (d* per
    layer), on 4 nodes (G 32, D 4) and on 1 node (G 8, D 3), Qwen3-30B-A3B's layer (4 layers)."""
    w = repro_lib.Writer(a.out, "dims", ["gpus", "variant"], FIELDS + ["d_mean"])
    path = model_file(a, "qwen3-30b-a3b-32l", "qwen3-4l-k8-e128", top_k=8, experts=128, moe_layers=4)
    for G, D in ((32, 4), (8, 3)):
        base = with_setting(["--hw", "gpu-cluster-32"] + GPUS[G] + ["--batch", str(G), "--model", path,
                                                                    "--strategy", "hiermoe"] + COMMON,
                            ["--synthetic-tokens", str(1024 * G)])
        variants = [("HD-MoE (d*)", [])] + [
            ("%s%d-MoE" % ("HD" if dedup else "H", d), ["--strategy-opt", "hiermoe.dimension=%d" % d] +
             ([] if dedup else ["--strategy-opt", "hiermoe.dedup=false"]))
            for dedup in (False, True) for d in range(1, D + 1)]
        for variant, extra in variants:
            tag = "dims-g%d-%s" % (G, variant.split(" ")[0])
            res, text = run(a, base + extra, tag)
            w.add(dict(gpus=G, variant=variant), with_d(a, res, tag), text)
        repro_lib.progress("dims", "G %d" % G)
    w.close()


DRIFT = ["--scenarios", "11", "--drift", "0.5"]
SHORT, LONG = 9, 33  # steps: every interval's first round (at step N <= 8) has landed by step 9


def interval(a):
    """HD-MoE (no swaps) and HierD-ES at run time every N steps, training steps of Qwen3-30B-A3B's layer (4
    layers), on the default trace and on one whose popularity drifts every 3 steps. The steady state, steps
    9-32, is the difference of a 33-step and a 9-step run on the same trace (the runs are deterministic, so
    their first 9 steps are the same)."""
    rows = []
    path = model_file(a, "qwen3-30b-a3b-32l", "qwen3-4l-k8-e128", top_k=8, experts=128, moe_layers=4)
    for trace, extra in (("default", []), ("drifting (11 scenarios, 50% of ranks reshuffled)", DRIFT)):
        for every in (0, 1, 2, 4, 8):
            got = {}
            for steps in (SHORT, LONG):
                args = with_setting(CLUSTER + ["--model", path, "--strategy", "hiermoe", "--strategy-opt",
                                               "hiermoe.swap_every=%d" % every, "--strategy-opt", "hiermoe.swap_max=65536"]
                                    + extra + COMMON, ["--steps", str(steps), "--synthetic-tokens", str(LONG * 32768)])
                res, text = run(a, args, "interval-%s-%d-%d" % ("drift" if extra else "default", every, steps))
                got[steps] = res["hiermoe"]
            steady = lambda k: (LONG * got[LONG][k] - SHORT * got[SHORT][k]) / (LONG - SHORT)
            rows.append(dict(trace=trace, swap_every=every, steady_moe_comm_us=steady("moe_comm_us"),
                             steady_step_us=steady("mean_tbt_us"), moe_comm_us=got[LONG]["moe_comm_us"],
                             mean_tbt_us=got[LONG]["mean_tbt_us"], command=text))
        repro_lib.progress("interval", trace)
    repro_lib.write_csv(os.path.join(a.out, "interval.csv"), list(rows[0]), rows)


def main():
    repro_lib.main(__doc__, {"testbed": testbed, "swap": swap, "sens": sens, "levels": levels, "table2": table2,
                             "fit": fit, "table4": table4, "dims": dims, "interval": interval,
                             "cycle": cycle})


if __name__ == "__main__":
    main()
