"""Start-up: wall time and peak RSS of ``judge --help``, a tiny no-model run and ``import judge``, this checkout
against earlier ones in the same session (issue 48, "start-up back under 2 s").

    python bench/startup.py [--baseline DIR ...] [--rounds 7] [--json OUT]

Each checkout is run with this interpreter, ``PYTHONPATH=<checkout>`` and the checkout as the working folder
(its own ``judge`` package, prompts and configs), through ``python -m judge.cli`` (an entry point every
checkout since the CLI package has). The three commands:

- ``help``: ``python -m judge.cli --help``;
- ``run``: ``python -m judge.cli run configs/deterministic.yaml --runs-dir TMP --no-progress`` (the bundled
  Hebrew sample, recorded answers, sentence claims, the deterministic judge, the reports written): the
  no-model run from start to exit;
- ``import``: ``python -c "import judge; judge.evaluate"`` (what a script or notebook pays to reach the API).

Rounds alternate the checkouts (the order rotated each round) so that a loaded machine's slow spell falls on
all of them; the table gives each command's best wall time and its median, and the peak RSS (the child's
``ru_maxrss`` from ``wait4``, the least over the rounds). A command that fails is reported with its exit code
and stderr's last line, and the bench exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "help": ["-m", "judge.cli", "--help"],
    "run": ["-m", "judge.cli", "run", "configs/deterministic.yaml", "--runs-dir", "{runs}", "--no-progress"],
    "import": ["-c", "import judge; judge.evaluate"],
}


def measure(checkout: Path, args: list[str]) -> tuple[float, int, int, str]:
    """(wall seconds, peak RSS in KB, exit code, stderr's last line) of one command in its own process."""
    runs = tempfile.mkdtemp(prefix="startup-runs-")
    argv = [sys.executable, *(a.format(runs=runs) for a in args)]
    env = {**os.environ, "PYTHONPATH": str(checkout), "COLUMNS": "100"}
    err = tempfile.TemporaryFile()
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
        return wall, usage.ru_maxrss, proc.returncode, lines[-1] if lines else ""
    finally:
        err.close()
        shutil.rmtree(runs, ignore_errors=True)


def label_of(checkout: Path) -> str:
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no", "--", "judge"],
                           capture_output=True, text=True, check=False)
    return (head.stdout.strip() or checkout.name) + ("+" if dirty.stdout.strip() else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", action="append", default=[], type=Path, help="a checkout of an earlier commit (repeatable)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=list(COMMANDS))
    ap.add_argument("--json", type=Path, help="write every measurement here")
    a = ap.parse_args()
    checkouts = [ROOT, *(b.resolve() for b in a.baseline)]
    labels = {c: ("now " if c == ROOT else "") + label_of(c) for c in checkouts}
    for c in checkouts:
        if not (c / "judge" / "cli").is_dir() or not (c / "configs" / "deterministic.yaml").is_file():
            ap.error(f"{c}: no judge/cli package or configs/deterministic.yaml: not a judge checkout")
    walls: dict[tuple[str, Path], list[float]] = {}
    peaks: dict[tuple[str, Path], list[int]] = {}
    failed = []
    for name in a.commands:  # one warm-up each: the first run after a checkout's files changed compiles its .pyc
        for c in checkouts:
            measure(c, COMMANDS[name])
    for r in range(a.rounds):
        order = checkouts[r % len(checkouts):] + checkouts[: r % len(checkouts)]
        for name in a.commands:
            for c in order:
                wall, peak, rc, last = measure(c, COMMANDS[name])
                if rc != 0:
                    failed.append(f"{labels[c]} {name}: exit {rc}: {last}")
                walls.setdefault((name, c), []).append(wall)
                peaks.setdefault((name, c), []).append(peak)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, {a.rounds} rounds\n")
    print("| command | checkout | best wall s | median wall s | peak RSS MB |")
    print("|---|---|---|---|---|")
    for name in a.commands:
        for c in checkouts:
            w, p = walls[(name, c)], peaks[(name, c)]
            print(f"| {name} | {labels[c]} | {min(w):.2f} | {statistics.median(w):.2f} | {min(p) / 1024:.0f} |")
    if a.json:
        a.json.write_text(json.dumps([{"command": n, "checkout": labels[c], "walls": walls[(n, c)], "peaks_kb": peaks[(n, c)]}
                                      for n in a.commands for c in checkouts], indent=1) + "\n")
    for f in failed:
        print("FAILED", f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
