"""Shared by the section writers under bench/reproduce/: reading a run's CSV and replacing one section of
docs/REPRODUCTION.md between its markers (written to a temporary file and renamed: never half-written)."""
import csv
import os
import sys

HEADER = """# Reproductions

Each paper's claims beside nmpsim's numbers: the claim, where the paper makes it, the paper's number,
ours, the regime, the command, and a verdict (reproduced within a stated band, direction only, or
contradicted, with the assumption that carries the gap named and measured). Sections are regenerated
by the scripts under `bench/reproduce/`, which replace only their own section.
"""


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def parse_args(usage):
    """OUTDIR, REPRODUCTION.md and SECONDS from argv; one-line error and exit 2 on a bad one."""
    if len(sys.argv) != 4:
        print("error: usage: %s" % usage, file=sys.stderr)
        sys.exit(2)
    out, target = sys.argv[1], sys.argv[2]
    try:
        seconds = float(sys.argv[3])
    except ValueError:
        print("error: SECONDS: expected a number, got '%s'" % sys.argv[3], file=sys.stderr)
        sys.exit(2)
    if not os.path.isdir(out):
        print("error: OUTDIR: %s is not a directory" % out, file=sys.stderr)
        sys.exit(2)
    return out, target, seconds


def replace_section(target, begin, end, lines):
    """Puts `lines` (which start with `begin` and end with `end`) in place of the text between the
    markers, or appends them; creates the file with a header if it does not exist."""
    text = open(target).read() if os.path.exists(target) else HEADER
    if begin in text and end in text:
        text = text[:text.index(begin)] + "\n".join(lines) + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + "\n".join(lines) + "\n"
    tmp = target + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, target)
