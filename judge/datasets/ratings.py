"""Human ratings as one table shape, whatever the file: items x annotators x dimensions, on the file's own
scale (judge.metrics.agreement works on it): ``hebrew-qa`` records' ``human_ratings``, DialSummEval's
human_judgment.jsonl, FaithBench batches. FaithBench annotators who saw no error left no record, so within a
batch every annotator of any sample is taken to have reviewed all of them (docs/scores.md); a vote is the most
severe label given, 0 consistent to 3 unwanted, and an annotation with no label counts as questionable.
"""

from __future__ import annotations

from array import array
from pathlib import Path

from pydantic import BaseModel

from judge.datasets.base import read_json, read_jsonl
from judge.models import DIMENSIONS, Record
from judge.problems import DatasetError, Problem

FAITHBENCH_SEVERITY = {"consistent": 0, "benign": 1, "questionable": 2, "unwanted": 3}
DIALSUMMEVAL_DIMENSIONS = ("consistency", "relevance", "fluency", "coherence")


class RatingTable(BaseModel):
    name: str
    dimensions: list[str]
    scale: list[int]  # the value domain, in order
    items: list[str]
    annotators: list[str]
    values: dict[str, list[list[float | None]]]  # dimension -> annotators x items (None: not rated)
    notes: list[str] = []


class RatingRows:
    """The records' ``human_ratings`` gathered one record at a time, compactly (a few machine integers per
    rating, no model objects kept), so a streamed file's agreement needs no list of its records."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.annotators: dict[str, int] = {}  # annotator id -> row, in order of first appearance
        self.flat = array("i")  # per rating: item column, annotator row, then one score per dimension

    def add(self, record: Record) -> None:
        if not record.human_ratings:
            return
        column = len(self.items)
        self.items.append(record.id)
        for h in record.human_ratings:
            row = self.annotators.setdefault(h.annotator_id, len(self.annotators))
            self.flat.extend((column, row, *(getattr(h.scores, d) for d in DIMENSIONS)))

    def table(self, name: str = "hebrew-qa") -> RatingTable:
        n, width = len(self.items), 2 + len(DIMENSIONS)
        values = {d: [[None] * n for _ in self.annotators] for d in DIMENSIONS}
        for at in range(0, len(self.flat), width):
            column, row = self.flat[at], self.flat[at + 1]
            for k, d in enumerate(DIMENSIONS):  # a later rating by the same annotator replaces an earlier one
                values[d][row][column] = self.flat[at + 2 + k]
        return RatingTable(name=name, dimensions=list(DIMENSIONS), scale=[0, 1, 2], items=list(self.items),
                           annotators=list(self.annotators), values=values)


def from_records(records, name: str = "hebrew-qa") -> RatingTable:
    rows = RatingRows()
    for r in records:
        rows.add(r)
    return rows.table(name)


def load_dialsummeval(path: Path) -> RatingTable:
    problems: list[Problem] = []
    rows = read_jsonl(path, problems)
    items, per_item = [], []
    for lineno, obj in rows:
        rid = f"line {lineno}"
        if not isinstance(obj, dict) or not isinstance(obj.get("annotations"), list):
            problems.append(Problem(file=str(path), record_id=rid, field="annotations", message="expected a list of annotations"))
            continue
        item = f"{obj.get('id')}/{obj.get('model_id')}"
        scores = []
        for k, ann in enumerate(obj["annotations"]):
            for d in DIALSUMMEVAL_DIMENSIONS:
                v = ann.get(d) if isinstance(ann, dict) else None
                if not isinstance(v, int) or not 1 <= v <= 5:
                    problems.append(Problem(file=str(path), record_id=item, field=f"annotations[{k}].{d}", message=f"expected an integer 1-5, got {v!r}"))
            scores.append(ann)
        items.append(item)
        per_item.append(scores)
    if problems:
        raise DatasetError(problems)
    n_annotators = max((len(s) for s in per_item), default=0)
    annotators = [f"annotator_{i + 1}" for i in range(n_annotators)]
    values = {
        d: [[(s[i][d] if i < len(s) else None) for s in per_item] for i in range(n_annotators)] for d in DIALSUMMEVAL_DIMENSIONS
    }
    return RatingTable(name=f"dialsummeval:{path.name}", dimensions=list(DIALSUMMEVAL_DIMENSIONS), scale=[1, 2, 3, 4, 5], items=items, annotators=annotators, values=values)


def _faithbench_vote(labels: list[str]) -> int | None:
    severity = None
    for label in labels:
        head = label.split(".")[0].lower()
        if head in FAITHBENCH_SEVERITY:
            severity = max(severity or 0, FAITHBENCH_SEVERITY[head])
    return severity


def load_faithbench(paths: list[Path]) -> RatingTable:
    problems: list[Problem] = []
    items: list[str] = []
    votes: list[dict[str, int]] = []
    annotators: list[str] = []
    unlabelled = 0
    for path in paths:
        raw = read_json(path, problems)
        if raw is None:
            continue
        samples = raw.get("samples") if isinstance(raw, dict) else None
        if not isinstance(samples, list):
            problems.append(Problem(file=str(path), field="samples", message="expected {'samples': [...]}"))
            continue
        pool = list(dict.fromkeys(a.get("annotator_id") for s in samples for a in s.get("annotations", []) if a.get("annotator_id")))
        annotators.extend(a for a in pool if a not in annotators)
        for s in samples:
            sample_votes = {a: FAITHBENCH_SEVERITY["consistent"] for a in pool}  # inferred: reviewed, saw nothing
            for ann in s.get("annotations", []):
                who = ann.get("annotator_id")
                if who is None:
                    problems.append(Problem(file=str(path), record_id=str(s.get("sample_id")), field="annotations.annotator_id", message="missing"))
                    continue
                vote = _faithbench_vote(ann.get("label") or [])
                if vote is None:
                    unlabelled += 1
                    vote = FAITHBENCH_SEVERITY["questionable"]
                sample_votes[who] = max(sample_votes[who], vote)
            items.append(f"{path.stem}/{s.get('sample_id')}")
            votes.append(sample_votes)
    if problems:
        raise DatasetError(problems)
    values = {"hallucination": [[v.get(a) for v in votes] for a in annotators]}
    notes = [
        "consistent votes inferred: every annotator of a batch is taken to have reviewed all of its samples",
        f"{unlabelled} annotation(s) without a label counted as questionable",
    ]
    return RatingTable(name="faithbench", dimensions=["hallucination"], scale=[0, 1, 2, 3], items=items, annotators=annotators, values=values, notes=notes)


def load_ratings(path: str | Path, format: str | None = None) -> RatingTable:
    """A rating table from a file (or, for FaithBench, a folder of batch files)."""
    from judge.datasets import load

    path = Path(path)
    if format is None:
        format = sniff_ratings(path)
    if format == "faithbench":
        files = sorted(path.glob("batch_*.json")) if path.is_dir() else [path]
        if not files:  # an empty folder is no set of ratings: agreement over nothing is not an answer
            raise DatasetError([Problem(file=str(path), message="a folder with no FaithBench batch_*.json files; give the batches' folder or a file")])
        return load_faithbench(files)
    if format == "dialsummeval":
        return load_dialsummeval(path)
    if format == "hebrew-qa":
        return from_records(load(path, "hebrew-qa"), name=f"hebrew-qa:{path.name}")
    raise DatasetError([Problem(file=str(path), message=f"unknown ratings format {format!r}; known: hebrew-qa, dialsummeval, faithbench")])


def sniff_ratings(path: Path) -> str:
    if path.is_dir():
        return "faithbench"
    from judge.boundary import loads
    from judge.input_files import InputFileError, open_input

    try:
        with open_input(path) as f:
            head = f.read(4096).decode("utf-8", errors="replace")
    except InputFileError as e:
        raise DatasetError([Problem(file=str(path), message=e.reason)]) from None
    first_line = head.split("\n", 1)[0]
    try:
        obj = loads(first_line)
        if isinstance(obj, dict) and "annotations" in obj and "summary" in obj:
            return "dialsummeval"
    except (ValueError, RecursionError):  # not JSONL, too deep, a bad number: the loaders name the problem
        pass
    if '"samples"' in head:
        return "faithbench"
    if '"source_text"' in head:
        return "hebrew-qa"
    raise DatasetError([Problem(file=str(path), message="cannot tell the ratings format; pass --format hebrew-qa, dialsummeval or faithbench")])
