"""The labelling sheet: plain JSONL, one sampled claim (or answer) a line, written by ``judge label`` and filled
by a person (report.html's labelling mode, any editor) or a script. Each line carries what a person needs and
how it was drawn; ``label`` stays empty until labelled. Reading a sheet names each problem by its line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.datasets.base import iter_jsonl
from judge.problems import Problem, problems_from_validation
from judge.verdicts import ANSWER_LABELS, LABELS, SKIP

FORMAT = "judge-labels/1"  # every line says it is a sheet row: what `judge validate` sniffs
CLAIM, ANSWER = "claim", "answer"
Level = Literal["claim", "answer"]
CONTEXT_CHARS = 200  # source text shown either side of an offered span
MIN_PROBABILITY = 1e-12  # the smallest inclusion probability a sheet writes (rounded to 12 places); below it, 1/p overflows the weights


def item_id(record_id: str, answer_index: int, claim_id: int | None = None) -> str:
    """A claim's (or answer's) id in a run: record#answer#claim, ``%`` and ``#`` escaped in the record id, so
    no claim of one record shares the id of an answer of another."""
    record = record_id.replace("%", "%25").replace("#", "%23")
    return f"{record}#{answer_index}" + (f"#{claim_id}" if claim_id is not None else "")


def vocabulary(level: str) -> tuple[str, ...]:
    """The labels a line of this level may carry (besides ``skip`` and empty)."""
    return LABELS if level == CLAIM else ANSWER_LABELS


class Passage(BaseModel):
    """A span offered to the judges, with the source text around it (for a person to read it in place)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    doc_id: str | None = None
    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)
    excerpt: str
    before: str = ""
    after: str = ""


class SheetRow(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    sheet: Literal["judge-labels/1"] = FORMAT
    run_id: str
    level: Level
    item: str  # the claim's (or answer's) id in the run: record, answer number, claim id
    record_id: str
    model: str
    answer_index: int = Field(ge=0)
    claim_id: int | None = None
    language: str = "en"  # a code (judge.text.language); an older sheet's name reads the same
    question: str = ""
    answer: str
    claim: str | None = None
    claim_in_answer: list[int] | None = Field(None, min_length=2, max_length=2)  # [start, end) of the claim in the answer, when located
    passages: list[Passage] = []
    stratum: str  # the panel's verdict the sample was stratified by
    inclusion_probability: float = Field(ge=MIN_PROBABILITY, le=1)
    seed: int = 0
    label: str = ""  # empty: not labelled yet
    note: str = ""

    @property
    def labelled(self) -> bool:
        return self.label not in ("", SKIP)


@dataclass
class Sheet:
    """A read sheet: its rows with their line numbers, and every problem found (one per line)."""

    path: str
    rows: list[tuple[int, SheetRow]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def run_ids(self) -> list[str]:
        return sorted({r.run_id for _, r in self.rows})

    def labelled(self) -> list[SheetRow]:
        return [r for _, r in self.rows if r.labelled]


@dataclass
class Labels:
    """The sheets a score reads (each already checked against the run: judge.labels.load)."""

    sheets: list[Sheet]
    notes: list[str] = field(default_factory=list)  # said in the warnings (labels of an earlier score that are gone)

    def rows(self) -> list[SheetRow]:
        return [r for s in self.sheets for _, r in s.rows]


def shown(text: str, limit: int = 80) -> str:
    """A value from the sheet in a message: quoted, cut, control characters escaped (repr)."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def is_sheet(path: Path) -> bool:
    """Whether the file's first non-blank line is a sheet row (``judge validate`` sniffs it)."""
    from judge.input_files import InputFileError, open_input

    try:
        with open_input(path) as f:  # the reading door: a pipe is read once, never sniffed and lost (issue 36 item 9)
            for _ in range(50):
                line = f.readline(1 << 20)
                if not line:
                    return False
                if line.strip():
                    return f'"{FORMAT}"'.encode() in line
    except (OSError, InputFileError):  # the reader that follows names the problem
        return False
    return False


def read_sheet(path: Path | str) -> Sheet:
    """Every line of a sheet, checked: a problem per bad line (naming the line and the field), a label outside
    the level's vocabulary, an item already on an earlier line, a line of another run than the first line's."""
    path = Path(path)
    sheet = Sheet(str(path))
    seen: dict[str, int] = {}
    for lineno, _, obj in iter_jsonl(path, sheet.problems):
        where = f"line {lineno}"
        try:
            row = SheetRow.model_validate(obj)
        except ValidationError as e:
            sheet.problems += problems_from_validation(e, str(path), where)
            continue
        label_problem = check_label(row)
        if label_problem:
            sheet.problems.append(Problem(file=str(path), record_id=where, field="label", message=label_problem))
            continue
        level_problem = check_level(row)
        if level_problem:
            sheet.problems.append(Problem(file=str(path), record_id=where, field=level_problem[0], message=level_problem[1]))
            continue
        if row.item in seen:
            sheet.problems.append(Problem(file=str(path), record_id=where, field="item",
                                          message=f"{shown(row.item)} is also on line {seen[row.item]}: an item is labelled once (keep one line)"))
            continue
        if sheet.rows and row.run_id != sheet.rows[0][1].run_id:
            sheet.problems.append(Problem(file=str(path), record_id=where, field="run_id",
                                          message=f"run {shown(row.run_id)}, where line {sheet.rows[0][0]} is of run {shown(sheet.rows[0][1].run_id)}: "
                                                  "a sheet holds one run's items"))
            continue
        seen[row.item] = lineno
        sheet.rows.append((lineno, row))
    if not sheet.rows and not sheet.problems:
        sheet.problems.append(Problem(file=str(path), message="holds no sheet line (write one with: judge label RUN --n 50)"))
    return sheet


def check_label(row: SheetRow) -> str | None:
    """Why the row's label is not one of its level's (None when it is, or is empty or skip)."""
    if row.label in ("", SKIP) or row.label in vocabulary(row.level):
        return None
    return (f"{shown(row.label)} is not a {row.level} label: expected one of {', '.join(vocabulary(row.level))}, "
            f"{SKIP}, or empty (not labelled yet)")


def check_level(row: SheetRow) -> tuple[str, str] | None:
    """(field, why) when the row's item is not of its level or not the id of its own record, answer and claim:
    an answer line naming a claim (record#0#0), a claim line naming an answer, an item edited apart from them."""
    if row.level == CLAIM and row.claim_id is None:
        return "claim_id", f"a claim line needs its claim_id (item {shown(row.item)}): is it an answer line (level answer)?"
    if row.level == ANSWER and row.claim_id is not None:
        return "claim_id", f"an answer line names no claim (claim_id {row.claim_id}): is it a claim line (level claim)?"
    if row.claim_in_answer is not None and not 0 <= row.claim_in_answer[0] <= row.claim_in_answer[1] <= len(row.answer):
        return "claim_in_answer", f"{row.claim_in_answer} is no [start, end) in the answer ({len(row.answer)} characters)"
    expected = item_id(row.record_id, row.answer_index, row.claim_id)
    if row.item != expected:
        return "item", (f"{shown(row.item)} is not the {row.level} of this line's record_id, answer_index"
                        + (" and claim_id" if row.level == CLAIM else "") + f" ({shown(expected)}): a sheet names each item by them")
    return None


def check_against_run(sheet: Sheet, run_id: str, items: set[str], run_path: str) -> list[Problem]:
    """The sheet's lines that do not belong to the run: another run's id, or an item the run does not hold."""
    out = []
    for lineno, row in sheet.rows:
        where = f"line {lineno}"
        if row.run_id != run_id:
            out.append(Problem(file=sheet.path, record_id=where, field="run_id",
                               message=f"the sheet is of run {shown(row.run_id)}, not of {run_path} (run {shown(run_id)}): label that run's own sheet"))
            break  # one run per sheet (read_sheet saw to it): one line says it
        if row.item not in items:
            out.append(Problem(file=sheet.path, record_id=where, field="item",
                               message=f"{shown(row.item)} is no {row.level} of {run_path} (record {shown(row.record_id)})"))
    return out


def sheet_text(rows: Iterable[SheetRow]) -> str:
    """The sheet as written: one JSON object a line, non-ASCII kept readable."""
    return "".join(json.dumps(r.model_dump(), ensure_ascii=False) + "\n" for r in rows)
