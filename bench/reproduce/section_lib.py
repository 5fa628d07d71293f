"""Shared by the section writers under bench/reproduce/: reading a run's CSV and replacing one section of
docs/REPRODUCTION.md between its markers (written to a temporary file and renamed: never half-written)."""
import csv
import os
import stat
import sys
import tempfile

HEADER = """# Reproductions

Each paper's claims beside nmpsim's numbers: the claim, where the paper makes it, the paper's number,
ours, the regime, the command, and a verdict (reproduced within a stated band, direction only, or
contradicted, with the assumption that carries the gap named and measured). Sections are regenerated
by the scripts under `bench/reproduce/`, which replace only their own section.
"""


def fail(message):
    print("error: %s" % message, file=sys.stderr)
    sys.exit(2)


def xs(values):
    """'a-bx' over a list of ratios (one value: 'ax')."""
    lo, hi = min(values), max(values)
    return "%.2fx" % lo if abs(hi - lo) < 0.005 else "%.2f-%.2fx" % (lo, hi)


def verdict(ours, lo, hi):
    """'reproduced' when every gain of ours (x - 1) lies in the paper's range of gains [lo - 1, hi - 1]
    widened by 25% either way; 'direction only' on the same side of 1x; else 'contradicted'."""
    glo, ghi = lo - 1, hi - 1
    band = (0.75 * glo, 1.25 * ghi) if glo >= 0 else (1.25 * glo, 0.75 * ghi)
    if all(band[0] <= v - 1 <= band[1] for v in ours):
        return "reproduced"
    if all((v > 1) == (lo > 1) for v in ours):
        return "direction only"
    return "contradicted"


def heading(title, note, columns):
    """A table's heading lines: its title, a note (None: none), the header row and the rule."""
    return (["", "### " + title, ""] + ([note, ""] if note is not None else []) +
            ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)])


def read_csv(path, required=None):
    """The rows of `path` ([] when it does not exist, unless `required` names the fields it must have:
    then a missing file, a missing field or an empty field is a one-line error, exit 2)."""
    if not os.path.exists(path):
        if required:
            fail("%s: missing (run the script that writes it)" % path)
        return []
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for i, row in enumerate(rows):
        for field in required or []:
            if row.get(field) in (None, ""):
                fail("%s: row %d: field '%s' is missing or empty" % (path, i + 2, field))
    return rows


def parse_args(usage):
    """OUTDIR, REPRODUCTION.md and SECONDS from argv; one-line error and exit 2 on a bad one."""
    if len(sys.argv) != 4:
        fail("usage: %s" % usage)
    out, target = sys.argv[1], sys.argv[2]
    try:
        seconds = float(sys.argv[3])
    except ValueError:
        fail("SECONDS: expected a number, got '%s'" % sys.argv[3])
    if not os.path.isdir(out):
        fail("OUTDIR: %s is not a directory" % out)
    if os.path.lexists(target) and not stat.S_ISREG(os.lstat(target).st_mode):
        fail("%s: not a regular file (a symlink, directory or device is not replaced)" % target)
    return out, target, seconds


def replace_section(target, begin, end, lines):
    """Puts `lines` (which start with `begin` and end with `end`) in place of the text between the
    markers, or appends them; creates the file with a header if it does not exist."""
    text = open(target).read() if os.path.exists(target) else HEADER
    if begin in text and end in text:
        text = text[:text.index(begin)] + "\n".join(lines) + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + "\n".join(lines) + "\n"
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(target)), prefix=".section-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise
