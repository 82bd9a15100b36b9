"""The console every command prints on (rich, never markup, never control sequences), the one number format
of the terminal, JSON output, problem lines on stderr, and the progress bar of a run.

Commands compute; these functions only draw what they are given. Numbers are written by report.format.
"""

from __future__ import annotations

import json
import sys

from rich.console import Console

from judge.report.format import fmt as _fmt_places
from judge.text.control import defuse, one_line


TEXT = 300  # characters of one data string (a claim, a passage, a rationale) printed on the terminal
ID = 120  # characters of an id or a model name


def data(text, limit: int = TEXT) -> str:
    """A string from data (a record id, a claim, a model's rationale) inside a line printed on the terminal:
    one line (a newline in an id cannot start a forged line), control characters and bidi overrides shown,
    cut to ``limit`` characters with the count of the rest (report.html has the whole text)."""
    return one_line(text, limit)


def fmt(x) -> str:
    return _fmt_places(x, 4)


class _DataConsole(Console):
    """A console for data: never markup, never control sequences (judge.text.control)."""

    def render_str(self, text: str, **kwargs):
        return super().render_str(defuse(text), **kwargs)


def console(stderr: bool = False) -> Console:
    return _DataConsole(highlight=False, markup=False, stderr=stderr)  # data (model names, genres, ids) is never markup


def print_json(obj) -> None:
    """``obj`` as indented JSON, written piece by piece (a scores dict's per_answer rows are read back from disk)."""
    from judge.jsonstream import json_parts

    write = getattr(sys.stdout, "write_json", sys.stdout.write)  # the CLI's masked stdout masks strings, never numbers
    for part in json_parts(obj):
        write(part)


def pretty_json(obj) -> None:
    console().print_json(json.dumps(obj))


def problems(lines) -> None:
    """One line per problem, on stderr."""
    for p in lines:
        sys.stderr.write(defuse(f"{p}") + "\n")


def say(text: str) -> None:
    console().print(text, markup=False, soft_wrap=True)


class Progress:
    """A rich progress bar: records, claims, model calls, cache hits, tokens, cost and ETA."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.claims = self.calls = self.hits = self.tokens = 0
        self.cost = 0.0
        self.bar = None

    def start(self, total: int, done: int) -> None:
        if not self.enabled:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as Bar
        from rich.text import Text

        from judge.llm.activity import current

        class Now(ProgressColumn):
            """Which model is working, or weights being assembled: read at each redraw."""

            def render(self, task) -> Text:
                return Text(current()[:80], style="dim")

        self.bar = Bar(
            TextColumn("records"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stats]}"),
            TextColumn("ETA"), TimeRemainingColumn(), Now(), console=console(stderr=True),
        )
        self.task = self.bar.add_task("run", total=total, completed=done, stats="")
        self.bar.start()

    def advance(self, result) -> None:
        self.claims += sum(len(a.claims) for a in result.answers)
        u = result.usage
        self.calls += u.calls
        self.hits += u.cache_hits
        self.tokens += u.prompt_tokens + u.completion_tokens
        self.cost += u.cost_usd
        if self.bar is not None:
            stats = f"claims {self.claims} | calls {self.calls} | cache hits {self.hits} | tokens {self.tokens} | ${self.cost:.4f}"
            self.bar.update(self.task, advance=1, stats=stats)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
