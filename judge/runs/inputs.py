"""The records a run config names: a dataset file, or a BEIR benchmark with a retrieval run (each query's
top-k retrieved chunks become its sources, ids kept), and the recorded answers, if any."""

from __future__ import annotations

from judge.datasets import load
from judge.models import Answer, Record
from judge.problems import DatasetError, Problem, more_problems, problems_shown
from judge.runs.config import RunConfig
from judge.verdicts import REFERENCE_FAMILY, REFERENCE_MODEL


def dataset_records(config: RunConfig) -> list[Record]:
    ref = config.dataset
    if ref.format == "beir":
        from judge.datasets.beir import grounding_records, load_benchmark, load_run

        bench = load_benchmark(ref.path, expected_fingerprint=ref.fingerprint, allow_mismatch=ref.allow_fingerprint_mismatch)
        return grounding_records(bench, load_run(ref.retrieval_run), ref.top_k)
    return load(ref.path, ref.format, answer_model=ref.answer_model)


def recorded_answers(config: RunConfig, records: list[Record]) -> list[Answer] | None:
    """The answers to evaluate as recorded: an answers file, the reference answers, or the answers written in
    the dataset itself (plain format). A record with none is answered by generate.models, or refused."""
    if config.answers is None:
        unanswered = [] if config.generate.models else [r.id for r in records if not r.answers]
        if unanswered:
            raise DatasetError([
                Problem(file=config.dataset.path, record_id=rid, field="answer",
                        message="expected an answer (answer or answers), found none, and the config names no generate.models to write one")
                for rid in unanswered[: problems_shown()]
            ] + more_problems(config.dataset.path, len(unanswered)))
        embedded = [a for r in records for a in r.answers]
        return embedded or None
    if config.answers.reference:
        return [Answer(record_id=r.id, model=REFERENCE_MODEL, answer=r.reference_answer, family=REFERENCE_FAMILY) for r in records if r.reference_answer]
    return load(config.answers.path, "answers", records_path=config.dataset.path if config.dataset.format != "beir" else None)


def answers_index(config: RunConfig, records: list[Record] | None = None) -> dict[tuple[str, str, str], Answer]:
    """Recorded answers by (record id, model, answer text), for scoring against their gold claims; a plain
    file's answers are its records' own (``records``, when the caller has them loaded already)."""
    if config.answers is None:
        return {(a.record_id, a.model, a.answer): a for r in (records if records is not None else dataset_records(config)) for a in r.answers}
    if not config.answers.path:
        return {}
    return {(a.record_id, a.model, a.answer): a for a in load(config.answers.path, "answers")}
