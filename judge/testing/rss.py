"""The ``judge`` CLI in a child process, with that child's own peak RSS (VmHWM, read by the child itself:
``ru_maxrss`` can report the parent's peak when pytest forks it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MARKER = "PEAK_RSS_KB"
PEAK_RSS = (
    "import resource, runpy, sys\n"
    "sys.argv = ['judge'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('judge.cli', run_name='__main__')\n"
    "finally:\n    hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
    f"    sys.stderr.write('\\n{MARKER} %s\\n' % (hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
)


def cli_with_peak_rss(*args: str, cwd: Path, env: dict | None = None, timeout: float | None = None):
    """(the finished process, its stderr without the marker line; peak RSS in bytes, None if it never said)."""
    result = subprocess.run([sys.executable, "-c", PEAK_RSS, *args], capture_output=True, text=True, cwd=cwd,
                            timeout=timeout, env={**os.environ, **(env or {})}, check=False)
    if MARKER not in result.stderr:
        return result, None
    head, tail = result.stderr.rsplit(MARKER, 1)
    result.stderr = head.removesuffix("\n")
    return result, int(tail.split()[0]) * 1024
