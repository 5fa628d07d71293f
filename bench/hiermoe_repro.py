#!/usr/bin/env python3
"""HierMoE in its own regime (issue 37): the runs behind its reproduction, first sections.

Training steps on the paper's testbed (`gpu-cluster-32`: 4 nodes x 8 GPUs, NVLink pairs, PCIe, QPI,
InfiniBand; docs/MODEL.md "A cluster on the mesh") at the paper's setting: micro-batch 1 x sequence 1024 per
GPU, EP over all 32 GPUs (Sec. V-A), its two models (DeepSeek-V3 at half width with 6 layers, Qwen3-30B-A3B
with 32 layers). Sections (each writes OUT/<section>.csv; every row names its command):
  testbed  Megatron-LM (`hiermoe-megatron`), flat EP deduplicated per node (`ep`), Tutel-2DH (`hiermoe-2dh`),
           HierMoE's all-to-all with d* by Eq. 6 (`hiermoe`) and by the flow model (select=flow)
  swap     HierD-ES offline (`hiermoe-swap`): at most 8 swaps per layer (our default), uncapped, and uncapped
           with the plain max (gamma 1000) instead of the smooth max (gamma 10)
  sens     Megatron against HierMoE under one changed assumption at a time (the mesh's InfiniBand split,
           the QPI path, compute efficiency, hop latency, tokens per GPU)
  levels   the same strategies on four wafers with the cluster's bandwidth ratios (`wsc-4wafer-8x8-levels`),
           128 tokens per die (the cluster's tokens per step)
Runs nmpsim by argv (no shell). Not a test.

Usage: hiermoe_repro.py --bin build/apps/nmpsim --out DIR [--sections testbed,swap,sens,levels] [--resume]
"""
import repro_lib

MODELS = ["deepseek-v3-half-6l", "qwen3-30b-a3b-32l"]
BASELINES = ["hiermoe-megatron", "ep", "hiermoe-2dh", "hiermoe"]
FIELDS = ["mean_tbt_us", "moe_comm_us", "allreduce_us", "attention_us", "moe_compute_us", "forward_us",
          "backward_us", "grad_sync_us", "optimizer_us", "mfu"]
COMMON = ["--phase", "train", "--prompt-tokens", "1024", "--steps", "1", "--fidelity", "flow", "--no-plots",
          "--quiet", "--no-cache"]
CLUSTER = ["--hw", "gpu-cluster-32", "--batch", "32"]
# name, arguments: HierD-ES's cap and its max (Eq. 11's gamma: 10 the paper's smooth max, 1000 about the plain max).
SWAPS = [("at most 8 swaps per layer, smooth max", ["--strategy-opt", "hiermoe-swap.swaps=8"]),
         ("uncapped, smooth max", ["--strategy-opt", "hiermoe-swap.swaps=65536"]),
         ("uncapped, plain max", ["--strategy-opt", "hiermoe-swap.swaps=65536",
                                  "--strategy-opt", "hiermoe-swap.gamma=1000"])]
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
]
def run(a, args, tag):
    return repro_lib.run(a.bin, args, "%s/runs/%s" % (a.out, tag), FIELDS)


def testbed(a):
    w = repro_lib.Writer(a.out, "testbed", ["hardware", "model", "variant"], FIELDS)
    for model in MODELS:
        for variant, strategies, extra in (("", BASELINES, []),
                                           ("d* by the flow model", ["hiermoe"], ["--strategy-opt", "hiermoe.select=flow"])):
            args = CLUSTER + ["--model", model, "--strategy", ",".join(strategies)] + extra + COMMON
            res, text = run(a, args, "testbed-%s-%d" % (model, len(extra)))
            w.add(dict(hardware="gpu-cluster-32", model=model, variant=variant), res, text)
        repro_lib.progress("testbed", model)
    w.close()


def swap(a):
    w = repro_lib.Writer(a.out, "swap", ["model", "variant"], FIELDS)
    for model in MODELS:
        for i, (variant, extra) in enumerate(SWAPS):
            args = CLUSTER + ["--model", model, "--strategy", "hiermoe-swap"] + extra + COMMON
            res, text = run(a, args, "swap-%s-%d" % (model, i))
            w.add(dict(model=model, variant=variant), res, text)
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


def main():
    repro_lib.main(__doc__, {"testbed": testbed, "swap": swap, "sens": sens, "levels": levels})


if __name__ == "__main__":
    main()
