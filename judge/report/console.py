"""The console every command prints on (rich, never markup, never control sequences), the one number format
of the terminal, JSON output, problem lines on stderr, and the progress bar of a run. Commands compute; these
functions only draw what they are given.
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
    """A string from data inside a terminal line: one line (a newline in an id cannot forge a line), control
    characters and bidi overrides shown, cut to ``limit`` characters with the count of the rest."""
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
    """The progress line of a run, fitting the terminal (80 columns too): records done, a bar, the time left,
    what the embedded models are doing (judge.llm.activity), then claims, calls, cache hits, tokens and cost."""

    BAR = 8  # characters of the bar

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.claims = self.calls = self.hits = self.tokens = 0
        self.cost = 0.0
        self.bar = None
        self.total = self.done = self.finished = 0
        self.started = 0.0

    def start(self, total: int, done: int) -> None:
        if not self.enabled:
            return
        import time

        from rich.progress import Progress as Bar
        from rich.progress import ProgressColumn
        from rich.text import Text

        from judge.llm.activity import current

        line = self.line
        out = console(stderr=True)

        class Line(ProgressColumn):
            """The whole line, drawn at each redraw (what the models do changes between records)."""

            def render(self, task) -> Text:
                return Text(line(one_line(current()), max(20, out.width - 1)), no_wrap=True, overflow="ellipsis")  # model names are data

        self.total, self.done, self.finished = total, done, 0
        self.started = time.monotonic()
        self.bar = Bar(Line(), console=out, expand=False)
        self.task = self.bar.add_task("run", total=total, completed=done)
        self.bar.start()

    def eta(self) -> str:
        """'ETA 0:01:23' from the records this session finished (none yet: said so, never -:--:--)."""
        import time

        left = self.total - self.done
        if left <= 0:
            return f"done in {_clock(time.monotonic() - self.started)}"
        if not self.finished:
            return "ETA after record 1"
        return f"ETA {_clock((time.monotonic() - self.started) / self.finished * left)}"

    def line(self, doing: str, width: int) -> str:
        """The progress line at ``width`` columns: the parts that fit, most useful first; what a model is
        doing is shortened rather than dropped."""
        filled = round(self.BAR * self.done / self.total) if self.total else self.BAR
        head = f"{self.done}/{self.total} records {'━' * filled}{'─' * (self.BAR - filled)} {self.eta()}"
        parts = [f"{self.claims} claims", f"{self.calls} calls" + (f" ({self.hits} cached)" if self.hits else "")]
        if self.tokens:
            parts.append(f"{self.tokens:,} tokens")
        if self.cost:
            parts.append(f"${self.cost:.4f}")
        out = head[:width]
        if doing:
            room = width - len(out) - 3
            if room >= 12:
                out += " · " + _fit(doing, room)
        for part in parts:
            if len(out) + 3 + len(part) > width:
                break
            out += " · " + part
        return out

    def advance(self, result) -> None:
        self.claims += sum(len(a.claims) for a in result.answers)
        u = result.usage
        self.calls += u.calls
        self.hits += u.cache_hits
        self.tokens += u.prompt_tokens + u.completion_tokens
        self.cost += u.cost_usd
        self.done += 1
        self.finished += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, refresh=True)  # drawn now: the ETA shows as the first record ends

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _fit(doing: str, room: int) -> str:
    """What the models do, in ``room`` characters: the first busy model with what it does ("answering",
    "judging": kept whole), its name shortened first, then "+N" for the others."""
    if len(doing) <= room:
        return doing
    first, *others = doing.split("; ")
    more = f" (+{len(others)})" if others else ""
    name, sep, word = first.rpartition(": ")
    if not sep:
        name, word = "", first
    keep = room - len(more) - len(word) - len(sep)
    if name and keep >= 6:
        first = (name if len(name) <= keep else name[: keep - 1] + "…") + sep + word
    out = first + more
    return out if len(out) <= room else out[: room - 1] + "…"


def _clock(seconds: float) -> str:
    """0:01:23."""
    s = max(0, int(round(seconds)))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
