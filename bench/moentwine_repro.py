#!/usr/bin/env python3
"""MoEntwine in its own regime (issue 36): the runs behind docs/REPRODUCTION.md's MoEntwine section.

Sections (each writes OUT/<section>.csv; every row names the command that made it):
  comm   communication latency as the paper reports it (Sec. VI-B, Fig. 13(b)-(d)): all-to-all + all-reduce
         per decode step, 256 tokens per attention TP group, balanced gating, for 4x4, 6x6, 8x8 (TP 16) and
         four 8x8 wafers, the five models of Table I; baseline and ER (and HER on four wafers)
  comm_cycle  the same at cycle fidelity (the claims' verdicts rest on it)
  comm_vc8    6x6 and 8x8 at cycle fidelity with 8 VCs per port (the VC count decides 6x6's verdict)
  ftd    the full-token-domain figures of each one-wafer layout (mean all-to-all hops, ring step hops)
  sweep  the same against tokens per TP group, 32-2048 (Fig. 13(a)-style, without the GPU systems)
  e2e    step time for decode, prefill and hybrid (mixed) steps, without overlap and with the paper's (the
         all-reduce pipelined with the attention, two micro-batches)
  sens   which assumption decides: NI ports, ring direction, fused or kernel reductions and their start-up,
         overlap, border bandwidth, one at a time and all at the paper's setting
  cycle  cycle-fidelity checks of flow rows
Runs nmpsim by argv (no shell). Not a test.

Usage: moentwine_repro.py --bin build/apps/nmpsim --out DIR [--sections comm,comm_cycle,comm_vc8,ftd,sweep,e2e,sens,cycle]
       [--resume]  (reuse the runs an interrupted invocation finished: each run records its command)
"""
import csv
import json
import os
import subprocess
import sys

import repro_lib

MODELS = ["deepseek-v3", "qwen3-235b-a22b", "deepseek-v2", "dbrx", "mixtral-8x22b"]
# name, preset, attention TP, dies. 6x6 runs TP 4: the paper does not state its 6x6 TP, and TP 8 does not
# divide 36 dies into whole groups.
SYSTEMS = [("4x4", "wsc-4x4", 4, 16), ("6x6", "wsc-6x6", 4, 36), ("8x8", "wsc-8x8", 16, 64),
           ("4wafer", "wsc-4wafer-8x8", 16, 256)]
BASE, ER, HER = "moentwine-baseline", "moentwine-er", "moentwine-her"
COMMON = ["--skew", "0", "--steps", "1", "--weight-bytes", "1", "--no-plots", "--quiet", "--no-cache"]
FIELDS = ["mean_tbt_us", "moe_comm_us", "allreduce_us", "exposed_comm_us", "hidden_comm_us", "attention_us",
          "moe_compute_us"]
# The paper's overlap (Sec. IV-C: "separately overlap all-reduce with attention computation and all-to-all
# with MoE computation. Inputs are split into micro-batches"): the attention's reduce-scatter pipelined
# with its compute, and two micro-batches whose all-to-alls overlap each other's compute.
OVERLAP = ["--set", "collectives.pipeline_chunks=8", "--micro-batches", "2"]
# Step-time variants: no overlap, and the paper's (the sensitivity separates its two parts).
VARIANTS = [("none", []), ("pipelined + 2 micro-batches", OVERLAP)]
# The sensitivity's settings: name, extra arguments, applies to (None: every system).
SETTINGS = [
    ("default", [], None),
    ("ni_ports=1", ["--set", "noc.ni_ports=1"], None),
    ("ni_ports=2", ["--set", "noc.ni_ports=2"], None),
    ("ni_ports=4", ["--set", "noc.ni_ports=4"], None),
    ("rings one-way", ["--set", "collectives.algorithm=ring"], None),
    ("rings both ways", ["--set", "collectives.algorithm=bidirectional"], None),
    ("reduction kernel, start-up 0", ["--set", "collectives.reduce=kernel", "--set", "compute.startup_ns=0"], None),
    ("reduction kernel, start-up 0.5 us", ["--set", "collectives.reduce=kernel", "--set", "compute.startup_ns=500"],
     None),
    ("reduction kernel, start-up 2 us", ["--set", "collectives.reduce=kernel", "--set", "compute.startup_ns=2000"],
     None),
    ("reduction fused", ["--set", "collectives.reduce=fused"], None),
    ("all-reduce pipelined with attention (8 chunks)", ["--set", "collectives.pipeline_chunks=8"], None),
    ("overlap on (2 micro-batches)", ["--micro-batches", "2"], None),
    ("border per link", ["--hw", "wsc-4wafer-8x8-wide-border"], "4wafer"),
    # The other reading of "8 TB/s bidirectional ... of a single die" (Sec. VI-A): per die, over its four links.
    ("die links 1 TB/s each way", ["--set", "links.die_to_die.gbytes_per_s=1000"], None),
    ("paper's setting", ["--set", "noc.ni_ports=4", "--set", "collectives.algorithm=bidirectional", "--set",
                         "collectives.reduce=fused"] + OVERLAP, None),
]
# The sensitivity's points: system, model (the paper's best cases: DeepSeek-V3 on 6x6, Qwen3 at 8x8 TP 16 and
# across wafers) and the regimes.
SENS_POINTS = [("6x6", "deepseek-v3"), ("8x8", "qwen3-235b-a22b"), ("4wafer", "qwen3-235b-a22b")]


def system(name):
    return next(s for s in SYSTEMS if s[0] == name)


def strategies(sys_name):
    return [BASE, ER, HER] if sys_name == "4wafer" else [BASE, ER]


def regime_args(regime, groups, tokens_per_group=256):
    """Arguments for one step of `regime` with `tokens_per_group` decode tokens per attention TP group
    (decode), one 2048-token prompt per group (prefill), or the decode tokens plus one 2048-token prompt
    chunk (hybrid)."""
    if regime == "decode":
        return ["--batch", str(tokens_per_group * groups)]
    if regime == "prefill":
        return ["--phase", "prefill", "--batch", str(groups), "--prompt-tokens", "2048"]
    if regime == "hybrid":
        return ["--phase", "mixed", "--batch", str(tokens_per_group * groups), "--prompt-tokens", "2048",
                "--prefill-chunk", "2048"]
    raise ValueError(regime)


def run(binary, args, out_dir):
    """Runs one nmpsim command; returns ({strategy: {field: value}}, the command as text)."""
    return repro_lib.run(binary, args, out_dir, FIELDS)


class Writer(repro_lib.Writer):
    """A section's rows, with comm_us (all-to-all plus all-reduce, the paper's communication)."""

    def __init__(self, out, section, keys):
        super().__init__(out, section, keys, FIELDS, lambda r: {"comm_us": r["moe_comm_us"] + r["allreduce_us"]},
                         ["comm_us"])


def comm(a):
    w = Writer(a.out, "comm", ["system", "tp", "model"])
    for name, hw, tp, dies in SYSTEMS:
        for model in MODELS:
            # `ep`: the same experts, tokens dispatched from their home node: the all-gather dropped (Sec. VI-B6).
            args = ["--hw", hw, "--attn-tp", str(tp), "--model", model, "--fidelity", "flow", "--strategy",
                    ",".join(strategies(name) + ["ep"])] + regime_args("decode", dies // tp) + COMMON
            res, text = run(a.bin, args, os.path.join(a.out, "runs", "comm-%s-%s" % (name, model)))
            w.add(dict(system=name, tp=tp, model=model), res, text)
            progress("comm", name, model)
    w.close()


def sweep(a):
    w = Writer(a.out, "sweep", ["system", "model", "tokens_per_group"])
    for name, model in (("6x6", "deepseek-v3"), ("8x8", "qwen3-235b-a22b")):
        _, hw, tp, dies = system(name)
        for t in (32, 64, 128, 256, 512, 1024, 2048):
            args = ["--hw", hw, "--attn-tp", str(tp), "--model", model, "--fidelity", "flow", "--strategy",
                    ",".join(strategies(name))] + regime_args("decode", dies // tp, t) + COMMON
            res, text = run(a.bin, args, os.path.join(a.out, "runs", "sweep-%s-%d" % (name, t)))
            w.add(dict(system=name, model=model, tokens_per_group=t), res, text)
        progress("sweep", name, model)
    w.close()


def e2e(a):
    w = Writer(a.out, "e2e", ["system", "model", "regime", "overlap"])
    for name, hw, tp, dies in SYSTEMS:
        for model in MODELS:
            for regime in ("decode", "prefill", "hybrid"):
                for i, (variant, extra) in enumerate(VARIANTS):
                    args = ["--hw", hw, "--attn-tp", str(tp), "--model", model, "--fidelity", "flow",
                            "--strategy", ",".join(strategies(name))] + extra
                    args += regime_args(regime, dies // tp) + COMMON
                    res, text = run(a.bin, args,
                                    os.path.join(a.out, "runs", "e2e-%s-%s-%s-%d" % (name, model, regime, i)))
                    w.add(dict(system=name, model=model, regime=regime, overlap=variant), res, text)
            progress("e2e", name, model)
    w.close()


def with_setting(args, extra):
    """`args` with a setting's arguments; a --hw in the setting replaces the one in `args`."""
    if "--hw" in extra:
        i = args.index("--hw")
        args = args[:i] + args[i + 2:]
    return args + extra


def sens(a):
    w = Writer(a.out, "sens", ["system", "model", "regime", "setting"])
    for name, model in SENS_POINTS:
        _, hw, tp, dies = system(name)
        for regime in ("decode", "prefill"):
            for setting, extra, only in SETTINGS:
                if only and only != name:
                    continue
                args = ["--hw", hw, "--attn-tp", str(tp), "--model", model, "--fidelity", "flow", "--strategy",
                        ",".join(strategies(name))] + regime_args(regime, dies // tp) + COMMON
                args = with_setting(args, extra)
                tag = "sens-%s-%s-%s" % (name, regime, "".join(c if c.isalnum() else "_" for c in setting))
                res, text = run(a.bin, args, os.path.join(a.out, "runs", tag))
                w.add(dict(system=name, model=model, regime=regime, setting=setting), res, text)
            progress("sens", name, regime)
    w.close()


def comm_cycle(a, section="comm_cycle", systems=None, extra=()):
    """The communication section again at cycle fidelity (the claims' verdicts rest on it; flow fidelity
    misses the baseline's congested all-to-all on some systems: the cycle checks)."""
    w = Writer(a.out, section, ["system", "tp", "model"])
    for name, hw, tp, dies in SYSTEMS:
        if systems and name not in systems:
            continue
        for model in MODELS:
            args = ["--hw", hw, "--attn-tp", str(tp), "--model", model, "--fidelity", "cycle", "--strategy",
                    ",".join(strategies(name))] + list(extra) + regime_args("decode", dies // tp) + COMMON
            res, text = run(a.bin, args, os.path.join(a.out, "runs", "%s-%s-%s" % (section, name, model)))
            w.add(dict(system=name, tp=tp, model=model), res, text)
            progress(section, name, model)
    w.close()


def comm_vc8(a):
    """The one-wafer communication rows at cycle fidelity with 8 VCs per router port instead of the presets'
    2 (no source states the wafer router's VCs; docs/MODEL.md): head-of-line blocking in the baseline's
    overlapping domains depends on it."""
    comm_cycle(a, "comm_vc8", ("6x6", "8x8"), ["--set", "noc.vcs=8"])


def ftd(a):
    """The full-token-domain figures of each one-wafer layout (`nmpsim place`'s stats.ftd)."""
    rows = []
    for name, hw, tp, _ in SYSTEMS[:3]:
        for strategy in (BASE, ER):
            path = os.path.join(a.out, "runs", "place-%s-%s.json" % (name, strategy))
            cmd = [a.bin, "place", "--strategy", strategy, "--hw", hw, "--attn-tp", str(tp), "--model",
                   "qwen3-235b-a22b", "--out", path]
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
                sys.stderr.write("error: nmpsim place %s on %s: %s\n" % (strategy, hw, last))
                sys.exit(2)
            with open(path) as f:
                stats = json.load(f)["stats"]["ftd"]
            rows.append(dict(system=name, strategy=strategy, avg_hops=stats["avg_hops"],
                             ring_step_hops=stats["ring_step_hops"], area=stats["area"]))
    tmp = os.path.join(a.out, "ftd.csv.part")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, os.path.join(a.out, "ftd.csv"))


# Cycle checks: system, model, regime. Each runs at both fidelities.
CYCLE_ROWS = [("4x4", "mixtral-8x22b", "decode"), ("6x6", "deepseek-v3", "decode"),
              ("8x8", "qwen3-235b-a22b", "decode"), ("4wafer", "deepseek-v3", "decode"),
              ("4x4", "deepseek-v3", "prefill")]


def cycle(a):
    w = Writer(a.out, "cycle", ["system", "model", "regime", "fidelity"])
    for name, model, regime in CYCLE_ROWS:
        _, hw, tp, dies = system(name)
        for fidelity in ("flow", "cycle"):
            args = ["--hw", hw, "--attn-tp", str(tp), "--model", model, "--fidelity", fidelity, "--strategy",
                    ",".join(strategies(name))] + regime_args(regime, dies // tp) + COMMON
            res, text = run(a.bin, args, os.path.join(a.out, "runs", "cycle-%s-%s-%s" % (name, regime, fidelity)))
            w.add(dict(system=name, model=model, regime=regime, fidelity=fidelity), res, text)
        progress("cycle", name, model)
    w.close()


progress = repro_lib.progress


def main():
    repro_lib.main(__doc__, {"comm": comm, "comm_cycle": comm_cycle, "comm_vc8": comm_vc8, "ftd": ftd, "sweep": sweep, "e2e": e2e,
                    "sens": sens, "cycle": cycle})


if __name__ == "__main__":
    main()
