"""A claim is bounded (issue 48): a sentence, or a whole answer, longer than MAX_CLAIM_CHARS is set aside
before any reading of it, as a dropped claim whose reason gives its length and its offsets in the answer; the
other pieces of the answer are read exactly as they would be beside a sentence of ordinary length."""

from __future__ import annotations

import re

import pytest

import judge
from judge.scoring.decomposition import reason_kind
from judge.stages.decompose import MAX_CLAIM_CHARS, TOO_LONG, sentence_claims

WORDS = "the committee approved the budget for the new library and the park near the river "
SOURCE = "The committee approved the budget for the new library. The park is near the river."
QUESTION = "What did the committee approve?"


def run_on(length: int) -> str:
    """One sentence of exactly ``length`` characters, its full stop included."""
    return (WORDS * (length // len(WORDS) + 1))[: length - 1].rstrip().ljust(length - 1, "x") + "."


def where(dropped) -> tuple[int, int]:
    m = re.search(r"at answer\[(\d+):(\d+)\]", dropped.reason)
    assert m, dropped.reason
    return int(m.group(1)), int(m.group(2))


def _spans_hold(answer: str, admitted) -> None:
    for c in admitted.claims:
        for s in c.spans:
            assert answer[s.start_char : s.end_char] == s.excerpt


def test_a_sentence_longer_than_the_limit_is_dropped_with_its_offsets_and_the_others_kept():
    long = run_on(MAX_CLAIM_CHARS + 1)
    answer = f"The park is near the river. {long} The committee approved the budget."
    admitted = sentence_claims(answer, QUESTION)
    assert [c.text for c in admitted.claims] == ["The park is near the river.", "The committee approved the budget."]
    _spans_hold(answer, admitted)
    [dropped] = admitted.dropped
    assert reason_kind(dropped.reason) == TOO_LONG  # counted under one reason in the summary
    start, end = where(dropped)
    assert answer[start:end] == long  # the whole piece is found again from the answer: nothing is lost
    assert f"{len(long):,} characters" in dropped.reason
    assert long.startswith(dropped.text.removesuffix(" \u2026")) and len(dropped.text) < 300


def test_the_limit_itself_is_judged():
    at_limit = run_on(MAX_CLAIM_CHARS)
    admitted = sentence_claims(f"The park is near the river. {at_limit}", QUESTION)
    assert [c.text for c in admitted.claims] == ["The park is near the river.", at_limit]
    assert not admitted.dropped


@pytest.mark.parametrize("short, reads", [(run_on(60), False), (run_on(MAX_CLAIM_CHARS + 5), False)])
def test_a_long_first_sentence_still_comes_first(short, reads):
    # "Delhi." after a sentence is read with the answer, not with the question: the same after a long one
    admitted = sentence_claims(f"{short} Delhi.", "Which city is the capital?")
    delhi = [c for c in admitted.claims if "Delhi" in c.text]
    assert [c.reads_question for c in delhi] == [reads]
    assert delhi[0].text == "Delhi."


def test_an_answer_of_two_pieces_is_no_whole_answer_when_one_is_long():
    # "Yes." beside another sentence is a discourse token, dropped; alone it would be the whole answer
    answer = f"Yes. {run_on(MAX_CLAIM_CHARS * 2)}"
    admitted = sentence_claims(answer, QUESTION)
    assert not admitted.claims
    assert [reason_kind(d.reason) for d in admitted.dropped] == ["a discourse token (yes, sure, that's right), no statement", TOO_LONG]


def test_a_long_piece_that_opens_as_an_instruction_is_dropped_once():
    long = "Explain " + run_on(MAX_CLAIM_CHARS + 100)
    answer = f"The park is near the river. {long}"
    admitted = sentence_claims(answer, QUESTION)
    assert [c.text for c in admitted.claims] == ["The park is near the river."]
    [dropped] = admitted.dropped
    assert reason_kind(dropped.reason) == TOO_LONG and answer[slice(*where(dropped))] == long


@pytest.mark.parametrize("method", ["sentences", "whole"])
def test_a_run_on_a_one_sentence_answer_too_long_to_judge(tmp_path, method):
    answer = run_on(3 * MAX_CLAIM_CHARS)
    config = {"name": "long", "decompose": {"method": method}, "adjudicate": {"judges": ["deterministic"]}, "controls": False}
    records = [{"id": "r1", "question": QUESTION, "source": SOURCE}, {"id": "r2", "question": QUESTION, "source": SOURCE}]
    answers = {"r1": answer, "r2": "The park is near the river."}
    run = judge.evaluate(config, records=records, answers=answers, runs_dir=tmp_path, use_cache=False, reports=True)
    results = {r.record_id: r.answers[0] for r in run.results()}
    assert results["r1"].answer == answer and not results["r1"].claims
    [dropped] = results["r1"].decomposition.dropped
    assert answer[slice(*where(dropped))] == answer.strip()
    assert [c.label for c in results["r2"].claims] == ["supported"]
    assert run.summary["claims_dropped_by_reason"] == {TOO_LONG: 1}
    assert TOO_LONG in (run.path / "report.html").read_text(encoding="utf-8")
