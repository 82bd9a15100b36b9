"""What a score section is and what it draws: the Section protocol (the gold it needs, one answer at a time,
a typed result, how reports show it, how one record counts toward a compared rate), the AnswerItem it sees,
and the Table and Block every report renders (judge.scoring.sections lists the sections).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from judge.models import Record
from judge.results import AnswerResult, RecordResult
from judge.metrics.gold import Matched


@dataclass
class AnswerItem:
    """One answer of one finished record, with its record (None if the dataset lacks it) and matched gold."""

    result: RecordResult
    answer: AnswerResult
    record: Record | None
    matched: Matched | None


@dataclass
class Table:
    headers: list[str]
    rows: list[list]
    title: str | None = None  # a caption above the table
    note: str | None = None  # a line below it


@dataclass
class Block:
    """What a section shows: its heading, its tables, or a line saying why there is nothing; ``lines``: sentences
    each report shows one per line (a list item in report.md and report.html), never run together."""

    title: str
    tables: list[Table] = field(default_factory=list)
    text: str | None = None
    lines: list[str] = field(default_factory=list)


class Section:
    key: ClassVar[str]  # its key in scores.json
    title: ClassVar[str]
    needs: ClassVar[frozenset[str]] = frozenset()  # the gold it needs: gold_labels, gold_spans, human_ratings, qrels
    paired: ClassVar[dict[str, tuple[str, str, bool]]] = {}  # metric -> (numerator, denominator, higher is better)

    def add(self, item: AnswerItem) -> None:
        """Take one answer (sections that read the run's summary or the whole run take none)."""

    def result(self, context: dict) -> BaseModel | None:
        """The section's value; ``context`` holds the run's summary, manifest and records."""
        raise NotImplementedError

    @classmethod
    def block(cls, value: Any, scores: dict) -> Block | None:
        """How reports show the section's value (from scores.json, so a stored score can be re-rendered)."""
        return None

    @staticmethod
    def count(item: AnswerItem, counts: Counter) -> None:
        """Add one answer's numerators and denominators of ``paired`` to ``counts``."""
