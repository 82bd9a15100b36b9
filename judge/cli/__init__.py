"""The ``judge`` command line: thin commands (parse, call the library, print) behind one error boundary
(judge.cli.app.command). Tables are drawn by judge.report.terminal.

Heavy modules (numpy, the datasets, litellm) are imported inside the commands so that ``judge --help``
stays fast.
"""

from judge.cli import data, models, runs  # noqa: F401  (the commands register themselves on import)
from judge.cli.app import app, main

__all__ = ["app", "main"]
