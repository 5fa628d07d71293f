#!/usr/bin/env python3
"""bench/timeline_png.py never runs what a title, a file name or a phase name says (gnuplot substitutes
`...` in double-quoted strings), draws a timeline, and refuses bad input with exit code 2. A ctest."""
import json
import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "timeline_png.py")


def run(*args, cwd):
    return subprocess.run([sys.executable, TOOL, *args], cwd=cwd, capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as d:
        hostile = "x`touch pwned`'y\\z\n"
        events = [
            {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "tp"}},
            {"name": "experts" + hostile, "cat": "compute", "ph": "X", "pid": 0, "tid": 0, "ts": 0, "dur": 2},
            {"name": "attention", "cat": "phase", "ph": "X", "pid": 0, "tid": 1000000, "ts": 0, "dur": 2},
        ]
        name = os.path.join(d, "t`touch pwned2`.json")
        with open(name, "w") as f:
            json.dump({"traceEvents": events}, f)
        r = run(name, os.path.join(d, "o`touch pwned3`.png"), "--title", hostile, cwd=d)
        assert r.returncode == 0, r.stderr
        left = sorted(os.listdir(d))
        assert not any(n.startswith("pwned") for n in left), left
        assert "o`touch pwned3`.png" in left, left
        for args, message in ((["/nonexistent.json", "o.png"], "not a timeline"),
                              ([name, "o.png", "--nodes", "0"], "--nodes"),
                              ([name, "o.png", "--strategy", "ep"], "--strategy")):
            r = run(*args, cwd=d)
            assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r)
    print("ok")


if __name__ == "__main__":
    main()
