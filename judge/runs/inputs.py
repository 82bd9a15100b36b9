"""The records a run config names, and the answers to evaluate, streamed: never a whole dataset in memory.

Records come from a dataset file (checked in one streaming pass when opened, then streamed again each time
they are iterated) or a BEIR benchmark with a retrieval run (each query's top-k retrieved chunks become its
sources). Recorded answers (an answers file, the records' reference answers, or answers written in the
dataset itself) are joined to their records through an on-disk index of offsets (:mod:`judge.datasets.index`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from judge.datasets import answers as answers_format
from judge.datasets import duplicate_problem, iter_load, sniff
from judge.datasets.base import ProblemList, check_span
from judge.datasets.index import InputIndex
from judge.models import Answer, Record
from judge.problems import DatasetError, Problem
from judge.config import RunConfig
from judge.verdicts import REFERENCE_FAMILY, REFERENCE_MODEL


class RecordStream:
    """A dataset's records: checked in one pass when opened (every problem, the first N and a count, raised
    as DatasetError before any record runs), then read again from disk each time it is iterated. Record ids
    go into an on-disk index (duplicates refused); embedded or reference answers too."""

    def __init__(self, path: str, format: str | None = None, answer_model: str | None = None, reference_answers: bool = False):
        self.path = str(path)
        self.format = format or sniff(Path(path))
        self.answer_model = answer_model
        self.index = InputIndex()
        problems = ProblemList(self.path)
        count = 0
        self.embedded_answers = 0
        for record, _, pos in iter_load(self.path, self.format, problems, answer_model):
            earlier = self.index.add_record(record.id, count, pos)
            if earlier is not None:
                problems.append(duplicate_problem(record, self.path, earlier, count))
            for a in record.answers:
                self.index.add_answer(a, family=_family(a.model, a.family))
                self.embedded_answers += 1
            if reference_answers and record.reference_answer:
                self.index.add_answer(Answer(record_id=record.id, model=REFERENCE_MODEL, answer=record.reference_answer, family=REFERENCE_FAMILY), family=REFERENCE_FAMILY)
            count += 1
        self.index.commit()
        self._len = count
        if problems:
            self.index.close()
            raise DatasetError(list(problems))

    def __iter__(self) -> Iterator[Record]:
        for record, _, _ in iter_load(self.path, self.format, ProblemList(self.path), self.answer_model):
            yield record

    def __len__(self) -> int:
        return self._len

    def ids(self) -> list[str]:
        return list(self.iter_ids())

    def iter_ids(self) -> Iterator[str]:
        """The record ids in dataset order, from the index the checking pass wrote (the file is not read)."""
        return self.index.ordered_ids()

    def by_id(self) -> RecordsById:
        """The records as a mapping by id, read from disk on lookup (one extra pass stores them on first use)."""
        if not self.index.has_bodies():
            self.index.store_bodies((r.id, r.model_dump_json()) for r in self)
        return RecordsById(self)


class RecordsById(Mapping):
    """Records by id without holding them: scoring and reports look records up one at a time."""

    def __init__(self, stream: RecordStream):
        self.stream = stream

    def __getitem__(self, record_id: str) -> Record:
        body = self.stream.index.body(record_id)
        if body is None:
            raise KeyError(record_id)
        return Record.model_validate_json(body)

    def __iter__(self) -> Iterator[str]:
        return self.stream.iter_ids()

    def __len__(self) -> int:
        return len(self.stream)


def records_by_id(config: RunConfig) -> Mapping[str, Record]:
    """A run's records by id: on disk for a dataset file, in memory for a BEIR benchmark's built records."""
    records = dataset_records(config)
    return records.by_id() if isinstance(records, RecordStream) else {r.id: r for r in records}


class RecordedAnswers:
    """The answers to evaluate, by record id, read from disk when their record's turn comes."""

    def __init__(self, index: InputIndex):
        self.index = index

    def get(self, record_id: str, default=None) -> list[Answer] | None:
        found = self.index.answers_for(record_id)
        return found if found else default

    def __getitem__(self, record_id: str) -> list[Answer]:
        found = self.index.answers_for(record_id)
        if not found:
            raise KeyError(record_id)
        return found

    def __contains__(self, record_id: str) -> bool:
        return bool(self.index.answers_for(record_id))

    def __iter__(self) -> Iterator[Answer]:
        return self.index.iter_answers()

    def __len__(self) -> int:
        return self.index.answer_count()

    def representatives(self) -> list[Answer]:
        """One answer per distinct (model, family): what the cross-family rule and its warnings need."""
        return self.index.representatives()

    def families(self) -> list[str]:
        """The distinct families of the answers' models (for the cross-family rule), without reading them."""
        return self.index.answer_families()

    def values(self) -> Iterator[list[Answer]]:
        """One list per answered record (reads every answer: prefer families())."""
        for (rid,) in self.index.db.execute("SELECT DISTINCT record_id FROM answers"):
            yield self.index.answers_for(rid)


def _family(model: str, family: str | None = None) -> str:
    from judge.llm.families import answer_family

    return answer_family(model, family)


def dataset_records(config: RunConfig):
    """The run's records: a RecordStream (a BEIR benchmark's are built in memory from its retrieval run)."""
    ref = config.dataset
    if ref.format == "beir":
        from judge.datasets.beir import grounding_records, load_benchmark, load_run

        bench = load_benchmark(ref.path, expected_fingerprint=ref.fingerprint, allow_mismatch=ref.allow_fingerprint_mismatch)
        return grounding_records(bench, load_run(ref.retrieval_run), ref.top_k)
    reference = config.answers is not None and config.answers.reference
    return RecordStream(ref.path, ref.format, ref.answer_model, reference_answers=reference)


def recorded_answers(config: RunConfig, records) -> RecordedAnswers | None:
    """The answers to evaluate as recorded: an answers file, the reference answers, or the answers written in
    the dataset itself (plain format). A record with none is answered by generate.models, or refused."""
    if not isinstance(records, RecordStream):  # BEIR: records built in memory
        records = _indexed(records)
    if config.answers is None:
        if not config.generate.models:
            _refuse_unanswered(config, records)
        return RecordedAnswers(records.index) if records.embedded_answers else None
    if config.answers.reference:
        if isinstance(records, _Listed):
            for r in records:
                if r.reference_answer:
                    records.index.add_answer(Answer(record_id=r.id, model=REFERENCE_MODEL, answer=r.reference_answer, family=REFERENCE_FAMILY), family=REFERENCE_FAMILY)
        return RecordedAnswers(records.index)
    index_answers_file(records.index, Path(config.answers.path), records)
    return RecordedAnswers(records.index)


def _refuse_unanswered(config: RunConfig, records: RecordStream) -> None:
    problems = ProblemList(config.dataset.path)
    for record in records:
        if not record.answers:
            problems.append(Problem(file=config.dataset.path, record_id=record.id, field="answer",
                                    message="expected an answer (answer or answers), found none, and the config names no generate.models to write one"))
    if problems:
        raise DatasetError(list(problems))


def index_answers_file(index: InputIndex, path: Path, records) -> None:
    """One pass over an answers file storing each answer's offset by record id (duplicates refused), then
    one pass over the records checking each answer's gold spans against its record; problems raised."""
    problems = ProblemList(str(path))
    index.answers_path = path
    for i, (answer, _, offset) in enumerate(answers_format.iter_load(path, problems)):
        if not index.add_answer(answer, offset, family=_family(answer.model, answer.family)):
            problems.append(Problem(file=str(path), record_id=answer.record_id, field="answer",
                                    message=f"the same answer of the same model as an earlier item (item {i}): duplicates are refused"))
    index.commit()
    for record in records:
        for answer in index.answers_for(record.id):
            for ref in answers_format.answer_spans(answer, record, 0, str(path), problems):
                problems.extend(check_span(ref, str(path)))
    ids, total = index.orphan_record_ids(problems.room)
    for rid in ids:
        problems.append(Problem(file=str(path), record_id=rid, field="record_id", message="no record with this id in the records file"))
    problems.count(total - len(ids))
    if problems:
        raise DatasetError(list(problems))


class _Listed:
    """Records built in memory (BEIR), given the same index as a RecordStream."""

    def __init__(self, records: list[Record]):
        self.records = records
        self.index = InputIndex()
        self.embedded_answers = 0
        for i, r in enumerate(records):
            self.index.add_record(r.id, i, i)

    def __iter__(self):
        return iter(self.records)


def _indexed(records) -> _Listed:
    return _Listed(list(records))


class AnswersByKey:
    """Recorded answers by (record id, model, answer text), looked up on disk."""

    def __init__(self, index: InputIndex):
        self.index = index

    def get(self, key: tuple[str, str, str], default=None) -> Answer | None:
        found = self.index.answer(*key)
        return found if found is not None else default


def answers_index(config: RunConfig, records=None) -> AnswersByKey | dict:
    """Recorded answers by (record id, model, answer text), for scoring against their gold claims, looked
    up in the on-disk index (``records``: an already opened RecordStream, reused)."""
    if config.answers is not None and not config.answers.path:
        return {}
    records = records if isinstance(records, RecordStream) else dataset_records(config)
    if config.answers is None:  # answers written in the dataset itself, if any
        return AnswersByKey(records.index) if getattr(records, "embedded_answers", 0) else {}
    return AnswersByKey(recorded_answers(config, records).index)
