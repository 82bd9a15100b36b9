"""The ``judge`` command line: thin commands (parse, call the library, print) behind one error boundary
(judge.cli.app.command). Tables are drawn by judge.report (console, terminal, terminal_data).

Heavy modules (numpy, the datasets, litellm) are imported inside the commands so that ``judge --help``
stays fast.
"""

from judge.cli import data, labels, models, runs  # noqa: F401  (the commands register themselves on import)
from judge.cli.app import app, main

__all__ = ["app", "main"]

# `judge --help`: the main commands first, in the order a user meets them; then the model checks; then the
# research tools (benchmarks, data preparation).
MAIN = ("run", "score", "compare", "rejudge", "agreement", "validate", "label", "baseline", "merge", "init")
PANELS = {"families": "Models", "ping": "Models"}
RESEARCH = "Research tools"


def _name(info) -> str:
    return info.name or info.callback.__name__.replace("_", "-")


for _info in app.registered_commands:
    if _name(_info) not in MAIN:
        _info.rich_help_panel = PANELS.get(_name(_info), RESEARCH)
app.registered_commands.sort(key=lambda info: MAIN.index(_name(info)) if _name(info) in MAIN else len(MAIN) + (_name(info) not in PANELS))
