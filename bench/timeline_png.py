#!/usr/bin/env python3
"""Draws a picture of a timeline written by `nmpsim run --timeline FILE` (where no browser is at hand
to open it in Perfetto): for one strategy, a row per micro-batch with its phases and a row per node
with its compute commands, coloured by phase. gnuplot runs by argv on a generated script in which every
text (title, file names, phase names) is a single-quoted gnuplot string (no substitution happens
there). Bad input: one line on stderr, exit code 2.

Usage: bench/timeline_png.py TIMELINE.json OUT.png [--strategy NAME] [--nodes N] [--title TEXT]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def gp(text):
    """A gnuplot single-quoted string: ' doubled, control characters as spaces (as apps gp_quote)."""
    return "'" + "".join(" " if ord(c) < 0x20 else c for c in str(text)).replace("'", "''") + "'"


def fail(message):
    print(f"timeline_png: error: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("timeline")
    ap.add_argument("png")
    ap.add_argument("--strategy", help="the strategy (process) to draw; default the first")
    ap.add_argument("--nodes", type=int, default=8, help="draw the compute rows of the first N nodes")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    if a.nodes < 1:
        fail(f"--nodes: {a.nodes}: draw at least 1 node")
    try:
        with open(a.timeline) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{a.timeline}: not a timeline ({e})")
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    if not names:
        fail(f"{a.timeline}: no strategy in it")
    pid = min(names) if a.strategy is None else next((p for p, n in names.items() if n == a.strategy), None)
    if pid is None:
        fail(f"--strategy: '{a.strategy}' is not in the timeline ({', '.join(names.values())})")
    rows, phases, boxes = {}, {}, []
    try:
        collect(events, pid, a.nodes, rows, phases, boxes)
    except (KeyError, TypeError, ValueError) as e:
        fail(f"{a.timeline}: an event lacks a field or has a wrong one ({e})")
    draw(a, names[pid], rows, phases, boxes)


def collect(events, pid, nodes, rows, phases, boxes):
    for e in events:
        if e.get("pid") != pid or e.get("ph") != "X" or e.get("cat") not in ("compute", "phase"):
            continue
        tid = e["tid"]
        if e["cat"] == "compute":
            node = tid // 100
            if node >= nodes:
                continue
            label = f"node {node}"
        elif tid >= 2000000:
            label = f"background phases {tid - 2000000}"
        else:
            label = f"micro-batch {tid - 1000000}"
        rows.setdefault(label, (0 if e["cat"] == "phase" else 1, tid))
        colour = phases.setdefault(e["name"], len(phases) + 1)
        boxes.append((label, float(e["ts"]), float(e["ts"]) + float(e["dur"]), colour))


def draw(a, strategy, rows, phases, boxes):
    order = sorted(rows, key=lambda r: rows[r], reverse=True)
    y = {r: i for i, r in enumerate(order)}
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "boxes.dat")
        with open(data, "w") as f:
            for label, t0, t1, c in boxes:
                f.write(f"{(t0 + t1) / 2} {y[label]} {(t1 - t0) / 2} 0.4 {c}\n")
        script = [
            "set terminal pngcairo size 1400,{} font ',10'".format(200 + 28 * len(order)),
            f"set output {gp(a.png)}",
            f"set title {gp(a.title or strategy + ': ' + os.path.basename(a.timeline))} noenhanced",
            "set xlabel 'time from the step start (us)'",
            "set ytics ({})".format(", ".join(f"{gp(r)} {i}" for r, i in y.items())),
            f"set yrange [-0.6:{len(order) - 0.4}]",
            "set key outside right top noenhanced",
            "set style fill solid 0.9 border lc rgb 'grey30'",
            f"plot {gp(data)} using 1:2:3:4:5 with boxxyerror lc variable notitle, "
            + ", ".join(f"NaN with boxes lc {c} title {gp(n)}" for n, c in phases.items()),
        ]
        script_path = os.path.join(d, "plot.gp")
        with open(script_path, "w") as f:
            f.write("\n".join(script) + "\n")
        try:
            r = subprocess.run(["gnuplot", script_path], capture_output=True, text=True)
        except OSError as e:
            fail(f"gnuplot: {e}")
        if r.returncode != 0:
            fail(f"gnuplot: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed'}")


if __name__ == "__main__":
    main()
