"""Who may read a run directory while another process writes it: readers (score, compare, merge, agreement)
share run.lock, the writer (run, --resume, rejudge: RunStore.lock) holds it alone."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from judge import files
from judge.runs.store import RunDirError


@contextmanager
def reading(*run_dirs: Path):
    """Shared locks on run directories while a command reads them (score, compare, merge, agreement): a writer
    (run --resume, rejudge, which hold run.lock exclusively) is refused while they read, and a reader is
    refused while one writes, instead of scoring a file half written. A run directory without a plain run.lock
    (an older run, a read-only copy) is read without one; a reader never creates the file."""
    import fcntl

    held: list[int] = []
    try:
        for run_dir in run_dirs:
            try:
                fd = files.open_fd(Path(run_dir) / "run.lock", os.O_RDONLY)
            except (OSError, files.UnsafePath):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise RunDirError(f"{run_dir} is being written by another judge process (it holds run.lock): "
                                  "wait for it to finish, then read it") from None
            held.append(fd)
        yield
    finally:
        for fd in held:
            os.close(fd)
