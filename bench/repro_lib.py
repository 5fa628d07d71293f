"""Shared by the reproduction scripts (moentwine_repro.py, hiermoe_repro.py): run nmpsim by argv (no shell),
record each run's command beside its outputs so that --resume can reuse it, and write a section's rows to
OUT/<section>.csv at once (no half-written file). Not a test."""
import argparse
import csv
import json
import os
import subprocess
import sys

RESUME = False  # set by main() from --resume: run() then reuses a run whose directory records the same command


def recorded(path):
    """The command a finished run recorded, or None."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def run(binary, args, out_dir, fields, resume=None):
    """Runs `nmpsim run ARGS --out OUT_DIR`; returns ({strategy: {field: value}}, the command as text). Each
    finished run leaves command.txt beside its summary.json; with `resume` a run whose command.txt matches is
    reused. A failed run is a one-line error and exit 2."""
    cmd = [binary, "run"] + args + ["--out", out_dir]
    text = " ".join(["nmpsim", "run"] + args)
    record = os.path.join(out_dir, "command.txt")
    if not ((RESUME if resume is None else resume) and recorded(record) == text):
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
            sys.stderr.write("error: %s: %s\n" % (text, last))
            sys.exit(2)
        with open(record + ".part", "w") as f:
            f.write(text + "\n")
        os.replace(record + ".part", record)
    try:
        with open(os.path.join(out_dir, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("error: %s: summary.json: %s\n" % (text, e))
        sys.exit(2)
    rows = {name: {k: float(s.get(k, 0.0)) for k in fields} for name, s in summary["strategies"].items()}
    return rows, text


class Writer:
    """Rows of one section to OUT/<section>.csv, written once the section ends. `derived(row)` adds columns
    computed from a row's fields (placed after the strategy)."""

    def __init__(self, out, section, keys, fields, derived=None, derived_keys=()):
        self.path, self.keys, self.fields, self.rows = os.path.join(out, section + ".csv"), keys, fields, []
        self.derived, self.derived_keys = derived, list(derived_keys)

    def add(self, key_values, results, command):
        for strategy, r in results.items():
            row = dict(key_values, strategy=strategy, **(self.derived(r) if self.derived else {}), **r)
            row["command"] = command
            self.rows.append(row)

    def close(self):
        write_csv(self.path, self.keys + ["strategy"] + self.derived_keys + self.fields + ["command"], self.rows)


def model_file(binary, out, base, name, **fields):
    """OUT/models/NAME.json: model preset BASE (`nmpsim model --print-json`) with `fields` changed."""
    proc = subprocess.run([binary, "model", "--model", base, "--print-json"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write("error: nmpsim model --model %s: %s\n" % (base, proc.stderr.strip()))
        sys.exit(2)
    m = json.loads(proc.stdout)
    m.update(fields, name=name)
    os.makedirs(os.path.join(out, "models"), exist_ok=True)
    path = os.path.join(out, "models", name + ".json")
    with open(path + ".part", "w") as f:
        json.dump(m, f, indent=1)
    os.replace(path + ".part", path)
    return path


def write_csv(path, names, rows):
    """`rows` (dicts) under the header `names`, written to PATH.part and renamed (never half-written)."""
    tmp = path + ".part"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=names)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def progress(*what):
    sys.stderr.write("  %s done\n" % " ".join(what))
    sys.stderr.flush()


def check_paths(binary, out):
    """One-line errors (exit 2) for a binary that is not an executable and an OUT that is not a directory;
    makes OUT/runs."""
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        sys.stderr.write("error: --bin %s is not an executable (build first)\n" % binary)
        sys.exit(2)
    if os.path.lexists(out) and not os.path.isdir(out):
        sys.stderr.write("error: --out %s exists and is not a directory\n" % out)
        sys.exit(2)
    os.makedirs(os.path.join(out, "runs"), exist_ok=True)


def parse_args(doc, table):
    """The reproduction scripts' arguments: --bin, --out, --sections (of `table`, default all, in its order),
    --resume. One-line errors, exit 2; makes OUT/runs."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--bin", default="build/apps/nmpsim")
    p.add_argument("--out", required=True)
    p.add_argument("--sections", default=",".join(table))
    p.add_argument("--resume", action="store_true",
                   help="reuse runs under OUT/runs that finished with the same command (after an interrupted run)")
    a = p.parse_args()
    a.sections = a.sections.split(",")
    bad = [s for s in a.sections if s not in table]
    if bad:
        p.exit(2, "error: --sections: unknown section '%s' (%s)\n" % (bad[0], ", ".join(table)))
    check_paths(a.bin, a.out)
    return a


def main(doc, table):
    """Parses the arguments (parse_args) and runs the chosen sections in order."""
    global RESUME
    a = parse_args(doc, table)
    RESUME = a.resume
    for s in a.sections:
        table[s](a)
