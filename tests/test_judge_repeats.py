"""A claim an answer repeats word for word is judged once: the model sees it once, every repeat gets its verdict,
citing the repeat's own passage ids. A small answerer loops on one sentence; each repeat cost the judge a
verdict's tokens (the demo's slowest call). Through litellm and instructor against a scripted server."""

from __future__ import annotations

import asyncio

from judge.judges.base import ClaimToJudge, JudgeContext
from judge.judges.model import ModelJudge
from judge.llm import LLM, CallCache, ModelConfig
from judge.models import Source, Span
from judge.prompts import load_prompt
from judge.results import OfferedCandidate
from judge.testing.server import Reply, schema_of

SOURCE = "The programme started in 2019. It trains new teachers. The ministry runs it."


def _offered(cid: str, sentence: str) -> OfferedCandidate:
    start = SOURCE.index(sentence)
    end = start + len(sentence)
    span = Span(doc_id="d", start_char=start, end_char=end, excerpt=sentence)
    return OfferedCandidate(id=cid, doc_id="d", start_char=start, end_char=end, excerpt=sentence, score=0.9, method="exact", parts=[span])


def _claim(cid: str, text: str, sentence: str, control: bool = False) -> ClaimToJudge:
    return ClaimToJudge(cid, text, [_offered(f"{cid}.1", sentence)], control=control)


def _every_claim_contradicted(request: dict, n: int) -> Reply:
    """One verdict per claim id the schema offers, each citing the first passage id it offers."""
    schema = schema_of(request)
    items = schema["properties"]["verdicts"]
    defs = schema.get("$defs", {})
    item = defs[items["items"]["$ref"].split("/")[-1]]
    claim_ids = item["properties"]["claim_id"]["enum"]
    evidence = item["properties"]["evidence"]["items"]["enum"]
    return Reply(body={"verdicts": [{"claim_id": c, "label": "contradicted", "evidence": [evidence[0]], "rationale": f"r{c}"}
                                    for c in claim_ids]})


def test_a_repeated_claim_is_judged_once_and_its_repeats_cite_their_own_passages(tmp_path, scripted_server):
    server = scripted_server(_every_claim_contradicted)
    cfg = ModelConfig(model="openai/checker", api_base=server.base_url, family="fam-j", timeout=5)
    judge = ModelJudge(LLM(CallCache(tmp_path)), cfg, load_prompt("judge"), batch=True, context_chars=40)
    claims = [
        _claim("1", "The programme started in 2010.", "The programme started in 2019."),
        _claim("2", "It trains new teachers.", "It trains new teachers."),
        _claim("3", "The programme started in 2010.", "The programme started in 2019."),  # a word-for-word repeat
        _claim("4", "The programme started in 2010.", "The ministry runs it."),  # same words, other passage: judged
        _claim("5", "The programme started in 2010.", "The programme started in 2019.", control=True),  # a control: judged
    ]
    context = JudgeContext("When?", "English", [Source(doc_id="d", text=SOURCE)])
    verdicts = asyncio.run(judge.judge(claims, context))

    assert server.stats.requests == 1
    shown = schema_of(server.stats.bodies[0])
    item = shown["$defs"][shown["properties"]["verdicts"]["items"]["$ref"].split("/")[-1]]
    assert item["properties"]["claim_id"]["enum"] == ["1", "2", "4", "5"], "the repeat is not shown to the judge"
    assert sorted(verdicts) == ["1", "2", "3", "4", "5"], "every claim has a verdict"
    repeat, first = verdicts["3"], verdicts["1"]
    assert (repeat.label, repeat.rationale, repeat.evidence) == (first.label, first.rationale, first.evidence)
    assert first.evidence_ids == ["1.1"] and repeat.evidence_ids == ["3.1"], "the repeat cites its own passage id"
    for verdict in verdicts.values():
        for span in verdict.evidence:
            assert SOURCE[span.start_char:span.end_char] == span.excerpt
